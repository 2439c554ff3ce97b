// `tgc report` prints FLOPs and bytes per op kind and function, then the
// estimated time and the simulated memory of the entry function.
// RUN: tgc report --no-fuse %s --entry linear | FileCheck %s
// RUN: tgc report --no-fuse %s --entry linear --json | FileCheck %s --check-prefix=JSON
// RUN: not tgc report %s 2>&1 | FileCheck %s --check-prefix=NOENTRY
// NOENTRY: error: {{.*}}report.mlir has no function 'main' to run; functions: linear empty (choose with --entry)

// A 32x784 by 784x256 matmul: 2 * 32 * 256 * 784 = 12845056 FLOPs, reading
// (32*784 + 784*256) * 4 = 903168 bytes and writing 32*256*4 = 32768.
// CHECK: function @linear (3 ops)
// CHECK-NEXT: op {{ *}}count {{ *}}FLOPs {{ *}}transc. {{ *}}bytes read {{ *}}bytes written {{ *}}exact FLOPs
// CHECK-NEXT: tg.matmul {{ *}}1 {{ *}}12.8M {{ *}}0 {{ *}}903K {{ *}}32.8K {{ *}}12845056
// CHECK-NEXT: tg.reshape {{ *}}1 {{ *}}0 {{ *}}0 {{ *}}0 {{ *}}0 {{ *}}0
// CHECK-NEXT: tg.tanh {{ *}}1 {{ *}}8.19K {{ *}}8.19K {{ *}}32.8K {{ *}}32.8K {{ *}}8192
// CHECK-NEXT: total {{ *}}3 {{ *}}12.9M {{ *}}8.19K {{ *}}936K {{ *}}65.5K {{ *}}12853248
// CHECK: function @empty (0 ops)
// CHECK-NEXT: op
// CHECK-NEXT: total {{ *}}0 {{ *}}0
// The tanh's input (the reshaped matmul result) and output, the inputs and
// cuBLASLt's 32 MiB workspace are live at the peak.
// CHECK: estimated time of @linear on H100-SXM
// CHECK: memory of @linear (simulated, 3 ops in order)
// CHECK-NEXT: peak 32.92 MiB (34523136 bytes) during op #2 (forward): tg.tanh
// CHECK: summary: 0 params, {{.*}} peak 34523136 bytes {{.*}} arena 34523136 bytes, {{.*}} 2 kernels, 12853248 FLOPs

// JSON: "arena_bytes": 34523136,
// JSON: "flops": 12853248,
// JSON-NEXT: "function": "linear",
// JSON: "kernels": 2,
// JSON: "ops": [
// JSON-NEXT: {
// JSON-NEXT: "name": "linear",
// JSON-NEXT: "ops": [
// JSON: "bytes_read": 903168,
// JSON-NEXT: "bytes_written": 32768,
// JSON-NEXT: "count": 1,
// JSON-NEXT: "flops": 12845056,
// JSON-NEXT: "integer_ops": 0,
// JSON-NEXT: "op": "tg.matmul",
// JSON: "total": {
// JSON: "flops": 12853248,

func.func @linear(%x: tensor<32x784xf32>, %w: tensor<784x256xf32>) -> tensor<32x16x16xf32> {
  %0 = tg.matmul %x, %w : (tensor<32x784xf32>, tensor<784x256xf32>) -> tensor<32x256xf32>
  %1 = tg.reshape %0 : tensor<32x256xf32> -> tensor<32x16x16xf32>
  %2 = tg.tanh %1 : tensor<32x16x16xf32>
  return %2 : tensor<32x16x16xf32>
}

func.func @empty() {
  return
}
