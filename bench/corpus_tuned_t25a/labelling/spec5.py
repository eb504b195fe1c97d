from lab import code_label
CUPY = [(r"\bcp\.(?!ElementwiseKernel|RawKernel|RawModule|cuda\.)", "third_party", "CuPy array API (CUDA-only arrays)"),
        (r"^import cupy", "third_party", "import cupy (CUDA-only array library)"),
        (r"\bcp\.cuda\.", "third_party", "cupy.cuda API (CUDA memory)"),
        (r"\bcp\.ElementwiseKernel\(", "kernel", "CuPy ElementwiseKernel: CUDA C kernel compiled by NVRTC")]
P = "python/cusignal/"
code_label("cusignal", P + "utils/arraytools.py", CUPY + [
    (r"^from numba import cuda", "kernel", "numba.cuda import"),
    (r"cuda\.mapped_array\(", "kernel", "numba.cuda mapped (host-device) memory")])
code_label("cusignal", P + "convolution/convolve.py", CUPY + [
    (r"^from \. import _convolution_cuda", "kernel", "import of the library's own CuPy CUDA kernels module"),
    (r"_convolution_cuda\._conv", "kernel", "call into the own CUDA kernels module")])
code_label("cusignal", P + "wavelets/wavelets.py", CUPY)
code_label("cusignal", P + "filtering/resample.py", CUPY + [
    (r"^from \._upfirdn_cuda import", "kernel", "import of the library's own CuPy CUDA kernels module"),
    (r"= _UpFIRDn\(", "kernel", "the own CUDA upfirdn kernel object")])
