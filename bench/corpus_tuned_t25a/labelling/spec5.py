from lab import B, code_label
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

# Dropped by hand after reading (decision 18's reading of one multi-line call, labelled on its first line): the
# argument lines of `cp.ndarray(...)` in arraytools.py (160-162) and of `cp.issubdtype(...)` in convolve.py (290).
for path, drop in (("utils/arraytools.py", {160, 161, 162}), ("convolution/convolve.py", {290})):
    y = B / "corpus_tuned_t25a/labels" / ("cusignal__" + (P + path).replace("/", "__") + ".yaml")
    y.write_text("".join(line for line in y.read_text().splitlines(True)
                         if not any(f"line: {n}," in line for n in drop)))
