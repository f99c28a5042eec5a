# -*- Python -*-
# lit configuration of the mix regression tests.

import importlib.util
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "MIX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mix_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not and count come from Debian's llvm-22-tools.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# mixc's cache of compiled support code (lib/Codegen/EmitSharedLibrary.cpp)
# in the build tree: the tests share it, and never touch the user's.
config.environment["MIXC_CACHE_DIR"] = os.path.join(config.mix_obj_root,
                                                    "test", "mixc-cache")

tool_dirs = [config.mix_tools_dir, config.llvm_tools_dir]
tools = ["mix-opt", "mixc", "MixUnitTests", "mix-run", "mix-tokenize",
         "MixRuntimeTests",
         "mixrt-communicator-check",
         "MixTorchTests"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

config.substitutions.append(("%mix_src_root", os.path.dirname(config.test_source_root)))
config.substitutions.append(("%mix_obj_root", config.mix_obj_root))
config.substitutions.append(("%mixc_bin", os.path.join(config.mix_tools_dir, "mixc")))
if os.path.exists(os.path.join(config.mix_tools_dir, "MixTorchTests")):
    config.available_features.add("torch")
# PyTorch for the Python checks (Debian's python3-torch, which
# scripts/setup.sh installs); found without importing it.
if importlib.util.find_spec("torch") is not None:
    config.available_features.add("python-torch")

# The runtime's tools built with ASan and UBSan (scripts/sanitize.sh), which
# handle faults themselves.
if getattr(config, "mix_sanitized", False):
    config.available_features.add("asan")

# Data-parallel runs (runtime built with MPI, and mpirun on the PATH). Open
# MPI refuses root without these, and 2 ranks may outnumber a CI runner's
# cores.
if getattr(config, "mix_have_mpi", False) and shutil.which("mpirun"):
    config.available_features.add("mpi")
    for key, value in [("OMPI_ALLOW_RUN_AS_ROOT", "1"),
                       ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                       ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
                       ("OMPI_MCA_btl_vader_single_copy_mechanism", "none")]:
        config.environment[key] = value
    config.substitutions.append(("%mpirun", shutil.which("mpirun")))

# The CUDA toolkit's ptxas: mixc --target cuda needs it, and the tests run it
# themselves on the PTX mixc writes.
cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = os.path.join(cuda_home, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%ptxas", ptxas))
    config.environment["CUDA_HOME"] = cuda_home

# An NVIDIA driver on this machine (cuda packages can run).
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
