from lab import label
A = "src/aydin/"
label("aydin", A + "util/fast_correlation/demo/demo_correlation_benchmark.py", [])
label("aydin", A + "features/groups/demo/demo_uniform.py", [])
label("aydin", A + "util/fast_uniform_filter/numba_gpu_uf.py", [
    (r"^from numba import cuda", "kernel", "numba.cuda import"),
    (r"^from numba.cuda import device_array", "kernel", "numba.cuda device_array import"),
    (r"= device_array\(", "kernel", "numba.cuda device_array (CUDA device memory)"),
    (r"output.copy_to_host\(", "kernel", "numba.cuda DeviceNDArray copy to host"),
    (r"^\s+gpu_line_filter_\dd\[blockspergrid, threadsperblock\]\(", "kernel", "launch of a numba.cuda kernel"),
    (r"^@cuda.jit", "kernel", "numba.cuda kernel definition")])
label("aydin", A + "gui/_qt/custom_widgets/system_summary.py", [
    (r"numba.cuda.(get_current_device|cudadrv|current_context)", "kernel", "numba.cuda device / toolkit probe")])
