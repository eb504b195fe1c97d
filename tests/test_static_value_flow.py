"""Values that carry a finding to where they are used (issue 14): a local alias of a CUDA module
(`cuda = torch.cuda` in a function), an object a CUDA-only package hands out (`self.nvsmi =
nvidia_smi.getInstance()`), an NVIDIA tool path held in a variable and run by subprocess, and a constant of a
CUDA-only package read with getattr."""
from __future__ import annotations

from test_rules_apex import audit


def codes(by_line, line):
    return sorted(f.code for f in by_line.get(line, []))


def test_local_alias_of_a_cuda_module_is_followed_but_a_local_dtype_value_is_not():
    found = audit('''\
        import torch


        def sync_all(tensors):
            cuda = torch.cuda
            n = cuda.device_count()
            cuda.synchronize()
            dtype = torch.bfloat16
            return [t.to(dtype) for t in tensors], dtype.itemsize, n
        ''')
    assert codes(found, 6) == ["NPU002"]
    assert codes(found, 7) == ["NPU002"]
    assert 9 not in found          # a dtype held in a local is reported where it is written (line 8), not at uses


def test_a_name_bound_twice_is_not_taken_as_an_alias():
    found = audit('''\
        import torch


        def a():
            cuda = torch.cuda
            return cuda


        def b(cuda):
            return cuda.synchronize()
        ''')
    assert 10 not in found         # `cuda` here is a parameter, not torch.cuda


def test_objects_of_a_cuda_only_package_are_followed_at_calls_only():
    found = audit('''\
        import torch


        class GPUInfo:
            def __init__(self):
                from pynvml.smi import nvidia_smi
                self.nvsmi = nvidia_smi.getInstance()

            def compute(self):
                data = self.nvsmi.DeviceQuery("memory.used, memory.total")
                return data


        def util(pynvml, handle):
            rates = pynvml_rates(handle)
            return rates.gpu


        def stream_use():
            s = torch.cuda.Stream()
            s.synchronize()
        ''')
    assert codes(found, 7) == ["NPU406"]
    assert codes(found, 10) == ["NPU406"]
    assert 20 in found
    assert 21 not in found         # a torch.cuda object: the change is where it is made (line 20)
    assert 16 not in found


def test_result_fields_of_a_cuda_only_package_are_not_findings():
    found = audit('''\
        import pynvml


        def util(handle):
            rates = pynvml.nvmlDeviceGetUtilizationRates(handle)
            return rates.gpu, rates.memory
        ''')
    assert codes(found, 5) == ["NPU406"]
    assert 6 not in found


def test_nvidia_tool_path_in_a_variable_runs_where_subprocess_is_called():
    found = audit('''\
        import shutil
        import subprocess


        def gpu_stats(gpu_id):
            nvidia_smi_path = shutil.which("nvidia-smi")
            if nvidia_smi_path is None:
                raise FileNotFoundError("nvidia-smi: command not found.")
            result = subprocess.run(
                [
                    nvidia_smi_path,
                    "--query-gpu=utilization.gpu",
                    f"--id={gpu_id}",
                ],
                capture_output=True,
            )
            return result.stdout


        def other(path):
            return subprocess.run([path, "--version"])
        ''')
    assert codes(found, 6) == ["NPU407"]
    assert codes(found, 9) == ["NPU407"]
    assert found[9][0].fix == "none"
    assert 20 not in found


def test_reused_command_variable_is_not_followed():
    found = audit('''\
        import os.path as osp
        import subprocess


        def nvcc_version(cuda_home, rocm):
            if rocm:
                nvcc = osp.join(cuda_home, "hip/bin/hipcc")
                nvcc = subprocess.check_output(f'"{nvcc}" --version', shell=True)
            else:
                nvcc = osp.join(cuda_home, "bin/nvcc")
            return nvcc
        ''')
    assert 8 not in found          # hipcc runs here, not nvcc


def test_getattr_of_a_cuda_only_package_constant_is_a_finding_but_torch_probes_stay_quiet():
    found = audit('''\
        import torch


        class GPUInfo:
            def __init__(self):
                import pynvml
                self.pynvml = pynvml

            def temp(self, handle):
                kind = getattr(self.pynvml, "NVML_TEMPERATURE_GPU", -1)
                bad_fork = getattr(torch.cuda, "_is_in_bad_fork", None)
                return kind, bad_fork
        ''')
    assert codes(found, 10) == ["NPU406"]
    assert 11 not in found


def test_module_level_objects_are_followed_but_local_results_are_values():
    found = audit('''\
        from pynvml.smi import nvidia_smi

        nvsmi = nvidia_smi.getInstance()


        def used():
            return nvsmi.DeviceQuery("memory.used")


        def uuid_of(pynvml_handle):
            import pynvml
            uuid = pynvml.nvmlDeviceGetUUID(pynvml_handle)
            return uuid.decode("utf-8")
        ''')
    assert codes(found, 7) == ["NPU406"]
    assert codes(found, 12) == ["NPU406"]
    assert 13 not in found         # bytes returned by NVML: the call on line 12 is the finding


def test_module_kept_on_self_is_followed():
    found = audit('''\
        import torch


        class Syncer:
            def __init__(self):
                self.device_mod = torch.cuda

            def sync(self):
                self.device_mod.synchronize()
        ''')
    assert codes(found, 6) == ["NPU002"]
    assert codes(found, 9) == ["NPU002"]


def test_objects_from_one_cuda_name_of_a_portable_package_are_not_followed():
    found = audit('''\
        import faiss


        class Retriever:
            def __init__(self, index):
                self.index = faiss.index_cpu_to_all_gpus(index)

            def search(self, q):
                return self.index.search(q, k=10)
        ''')
    assert codes(found, 6) == ["NPU412"]
    assert 9 not in found          # a faiss index: searching it is the same call on the CPU index
