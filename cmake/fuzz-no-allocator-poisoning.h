// Force-included in the libFuzzer build (-DTGC_LIBFUZZER=ON). LLVM's
// BumpPtrAllocator poisons a new slab and unpoisons each allocation, but
// only in code built with ASan: the MLIR context's allocators are shared
// between our instrumented code and Debian's uninstrumented libMLIR, so a
// slab our code started stays poisoned under the attributes libMLIR then
// allocates in it, and reading them is reported as a use-after-poison that
// is none. Our code's calls to the annotations become no-ops; ASan still
// sees every heap, stack and global error of our code.
#include <sanitizer/asan_interface.h>
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
