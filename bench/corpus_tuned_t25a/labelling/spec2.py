from lab import label
label("sinabs-exodus", "setup.py", [
    (r"^from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "kernel", "CUDAExtension import (own CUDA build)"),
    (r"^\s+CUDAExtension\($", "kernel", "CUDAExtension(...) build of the own CUDA kernels (decision 2)"),
    (r'"cuda/bindings.cu"', "kernel", ".cu source of the own extension")])
PY = [(r"^import pycuda\.(driver|gpuarray|autoinit)", "third_party", "PyCUDA import (CUDA-only library)"),
      (r"^from pycuda.compiler import SourceModule", "third_party", "PyCUDA compiler import"),
      (r"^import skcuda", "third_party", "scikit-cuda import (cuFFT bindings)"),
      (r"^# import pycuda.autoinit", "none", "commented-out import"),
      (r"SourceModule\(", "kernel", "SourceModule(...) compiles CUDA C through nvcc"),
      (r"\.get_function\(", "kernel", "kernel extracted from the compiled CUDA module"),
      (r"\.prepared_async_call\(", "kernel", "launch of a PyCUDA kernel"),
      (r"(?<![\w.])cuda\.(Stream|aligned_zeros|memcpy_dtoh_async|start_profiler|stop_profiler)\(", "third_party", "PyCUDA driver API"),
      (r"(?<![\w.])gpuarray\.(zeros|to_gpu|empty)\(", "third_party", "PyCUDA gpuarray (CUDA device memory)"),
      (r"(?<![\w.])cufft\.(Plan|ifft|fft)\(", "third_party", "scikit-cuda cuFFT call"),
      (r"^dev = pycuda.autoinit.device", "third_party", "PyCUDA context's device")]
label("cuvarbase", "cuvarbase/cunfft.py", PY + [(360, "kernel", "nvcc option --use_fast_math for SourceModule")])
for p in ["cuvarbase/core.py", "cuvarbase/pdm.py", "docs/source/plots/benchmarks.py"]:
    label("cuvarbase", p, PY)
