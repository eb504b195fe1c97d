"""s15a (issue 14, static test17 tuned on): the families fixed, on code written for these tests in the shapes real code
bases use (a scattering-transform backend on scikit-cuda with CuPy kernels in template strings, an energy tracker
reaching NVML through its own module), with the lines each must find and the lines it must leave alone."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import codes_at, finding_keys_by_line, line_of

ENGINE = StaticEngine(load_rules())

SKCUDA_BACKEND = '''\
import torch
import cupy
from skcuda import cublas
from string import Template


@cupy._util.memoize(for_each_device=True)
def load_kernel(kernel_name, code, **kwargs):
    code = Template(code).substitute(**kwargs)
    kernel_code = cupy.cuda.compile_with_cache(code)
    return kernel_code.get_function(kernel_name)


class Modulus(object):
    def __init__(self, backend='skcuda'):
        self.CUDA_NUM_THREADS = 1024
        self.backend = backend

    def __call__(self, x):
        if not x.is_cuda and self.backend == 'skcuda':
            raise TypeError('Use the torch backend (without skcuda) for CPU tensors.')
        out = torch.empty(x.shape[:-1] + (1,), device=x.device, dtype=x.dtype)
        kernel = """
        extern "C"
        __global__ void abs_complex_value(const ${dtype} * x, ${dtype} * z, int n)
        {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n)
                return;
            z[i] = normf(2, x + 2*i);
        }
        """
        fabs = load_kernel('abs_complex_value', kernel, dtype='float')
        return fabs, out


def cdgmm(A, B, C, m, n, lda, incx, ldc):
    handle = torch.cuda.current_blas_handle()
    stream = torch.cuda.current_stream()._as_parameter_
    cublas.cublasSetStream(handle, stream)
    cublas.cublasCdgmm(handle, 'l', m, n, A.data_ptr(), lda, B.data_ptr(), incx, C.data_ptr(), ldc)
    return C
'''


def test_scikit_cuda_imports_calls_and_backend_defaults():
    found = finding_keys_by_line(ENGINE, SKCUDA_BACKEND)
    for needle in ("from skcuda import cublas", "def __init__(self, backend='skcuda')",
                   "cublas.cublasSetStream(handle, stream)", "cublas.cublasCdgmm("):
        assert "NPU461" in codes_at(found, line_of(SKCUDA_BACKEND, needle)), needle
    # the exception message names skcuda for a reader: not a finding
    assert not codes_at(found, line_of(SKCUDA_BACKEND, "raise TypeError("))


def test_each_kernel_of_a_cuda_source_string_is_reported_on_its_line():
    found = finding_keys_by_line(ENGINE, SKCUDA_BACKEND)
    assert "NPU399" in codes_at(found, line_of(SKCUDA_BACKEND, 'kernel = """'))          # the string, as before
    assert "NPU399" in codes_at(found, line_of(SKCUDA_BACKEND, "__global__ void abs_complex_value("))
    # the other lines of the source are not kernels
    assert "NPU399" not in codes_at(found, line_of(SKCUDA_BACKEND, 'extern "C"'))
    assert "NPU399" not in codes_at(found, line_of(SKCUDA_BACKEND, "int i = blockIdx.x"))


NVML_REEXPORT = '''\
from codecarbon.core import gpu_amd, gpu_nvidia

PYNVML_AVAILABLE = gpu_nvidia.PYNVML_AVAILABLE
pynvml = gpu_nvidia.pynvml


class AllGPUDevices:
    def __init__(self) -> None:
        self.devices = []
        if PYNVML_AVAILABLE:
            gpu_nvidia.pynvml.nvmlInit()
            count = gpu_nvidia.pynvml.nvmlDeviceGetCount()
            for i in range(count):
                handle = gpu_nvidia.pynvml.nvmlDeviceGetHandleByIndex(i)
                self.devices.append(handle)
'''


def test_nvml_reached_through_a_project_module():
    found = finding_keys_by_line(ENGINE, NVML_REEXPORT)
    for needle in ("pynvml = gpu_nvidia.pynvml", "gpu_nvidia.pynvml.nvmlInit()", "nvmlDeviceGetCount()",
                   "nvmlDeviceGetHandleByIndex(i)"):
        assert "NPU406" in codes_at(found, line_of(NVML_REEXPORT, needle)), needle
    assert "NPU406" not in codes_at(found, line_of(NVML_REEXPORT, "self.devices.append(handle)"))


SWITCHES = '''\
def prepare_sample(samples, cuda_enabled=True):
    if cuda_enabled:
        samples = move_to_cuda(samples)
    return samples


def evaluation(model, data_loader, cuda_enabled=True):
    for samples in data_loader:
        samples = prepare_sample(samples, cuda_enabled=cuda_enabled)
        model(samples)


def cpu_eval(model, data_loader):
    return evaluation(model, data_loader, cuda_enabled=False)
'''


def test_cuda_enabled_defaults_on_but_not_passed_through_or_off():
    found = finding_keys_by_line(ENGINE, SWITCHES)
    assert "NPU038" in codes_at(found, line_of(SWITCHES, "def prepare_sample("))
    assert "NPU038" in codes_at(found, line_of(SWITCHES, "def evaluation("))
    assert "NPU038" not in codes_at(found, line_of(SWITCHES, "cuda_enabled=cuda_enabled"))
    assert "NPU038" not in codes_at(found, line_of(SWITCHES, "cuda_enabled=False"))
