# lit configuration of the tgc test suite.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tgc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tgc_obj_root, "test")
config.excludes = ["onnx-conformance-passing.txt", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "unit", "Inputs", "README.md", "fuzz", "numpy_oracle.py"]

config.substitutions.append(("%tgc_src_root", config.tgc_src_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tgc", "tgc-opt", "tgc-zoo", "tgc-onnx-conformance"], [config.tgc_tools_dir])

# GPU tests are marked `REQUIRES: cuda` and run only where a GPU answers.
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda")

# Debian's numpy is installed for the system Python, not for a pyenv.
config.substitutions.append(("%numpy_python", "/usr/bin/python3"))
