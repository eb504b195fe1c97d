"""t11q (issue 11, tuned on heldout11): general mechanisms for the false classes read in heldout11's trees, each
tested on code written like the multi-backend trees that show it (docs/precision.md, "t11q")."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.backends import other_backend_symbol, path_backends
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _findings


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_another_compilers_dtype_option_chooses_no_torch_dtype(engine):
    # an exporter for AWS Inferentia: neuronx-cc reads `auto_cast_type` and casts its own graph
    src = """\
        import torch

        def export_neuron(model, input_shapes, auto_cast: str = "matmul", auto_cast_type: str = "bf16"):
            compiler_args = {"auto_cast": auto_cast, "auto_cast_type": auto_cast_type}
            return trace(model, input_shapes, compiler_args=compiler_args)

        def test_export_diffusers(tmp_path):
            compiler_kwargs = {"auto_cast": "matmul", "auto_cast_type": "fp16", "instance_type": "inf2"}
            export(model_id, tmp_path, compiler_kwargs=compiler_kwargs)
            export(model_id, tmp_path, auto_cast="matmul", auto_cast_type="bf16")

        model = model.to(dtype=torch.bfloat16)
        settings = {"dtype": "bf16"}
        """
    by_line = _findings(engine, src)
    assert not any(by_line.get(n) for n in (3, 4, 8, 10)), by_line
    # a torch dtype chosen for a model and a dtype setting of a config stay reported
    assert [f.code for f in by_line[12]] == ["NPU201"]
    assert [f.code for f in by_line[13]] == ["NPU201"]


def test_another_backends_kernel_package_is_not_a_flash_attention_module(engine):
    src = """\
        import torch
        try:
            from neuronx_distributed.kernels.flash_attn import nki_flash_attn_func
        except ImportError:
            nki_flash_attn_func = None
        from myproj.ops.flash_attn_interface import flash_attn_func

        def core_attention(q, k, v, use_nki):
            if use_nki:
                return nki_flash_attn_func(q, k, v, causal=True)
            return flash_attn_func(q, k, v, causal=True)
        """
    by_line = _findings(engine, src)
    assert not by_line.get(3) and not by_line.get(10), by_line
    # the project's own FlashAttention wrapper is still the CUDA one
    assert "NPU324" in {f.code for f in by_line[6]} and "NPU324" in {f.code for f in by_line[11]}
    assert other_backend_symbol("habana_frameworks.torch.hpex.kernels.FusedSDPA")
    assert not other_backend_symbol("torch.ops.hpu.cast_to_fp8_v2")     # torch's op namespace: its own rule
    assert not other_backend_symbol("vllm.vllm_flash_attn.flash_attn_varlen_func")


def test_neuron_files_and_nki_kernels_name_another_backend(engine):
    assert path_backends("optimum/neuron/models/inference/backend/modules/attention/flash_attention_nki.py") \
        == {"neuron"}
    assert path_backends("tests/training/test_trainium_overfit.py") == {"neuron"}
    # `neuron` alone names units of a network (pruning code), not AWS Neuron
    assert path_backends("llm_pruner/pruner/neuron_importance.py") == set()
    # a module that runs only with torch_neuronx is another backend's code: info, never rewritten
    src = "import torch\nimport torch_neuronx\n\ndef warm(x):\n    torch.cuda.synchronize()\n    return x.cuda()\n"
    by_line = _findings(engine, src)
    assert by_line[5] and {f.severity for f in by_line[5] + by_line[6]} == {"info"}


def test_code_after_a_too_few_cuda_devices_return_is_gated(engine):
    src = """\
        import unittest
        import torch

        class TestDeviceGuard(unittest.TestCase):
            def test_device_guard_rejects_mismatch(self):
                if torch.cuda.device_count() < 2:
                    return
                torch.cuda.synchronize(0)
                x = torch.empty(4, device="cuda:1")

            def test_single(self):
                if torch.cuda.device_count() > 4:
                    return
                torch.cuda.synchronize(0)
        """
    by_line = _findings(engine, src)
    assert {f.severity for f in by_line[8] + by_line[9]} == {"warning"}, by_line
    # a test that returns only with MANY devices still runs the CUDA call on Ascend
    assert "error" in {f.severity for f in by_line[14]}


def test_windows_only_branches_of_an_env_report_are_info(engine):
    src = """\
        import os
        import subprocess
        import sys

        def get_platform():
            return sys.platform


        def get_nvidia_smi():
            smi = "nvidia-smi"
            if get_platform() == "win32":
                system_root = os.environ.get("SYSTEMROOT", "C:\\\\Windows")
                program_files_root = os.environ.get("PROGRAMFILES", "C:\\\\Program Files")
                legacy_path = os.path.join(program_files_root, "NVIDIA Corporation", "NVSMI", smi)
                cuda_path = os.environ.get("CUDA_PATH", "%CUDA_PATH%")
                smi = legacy_path
            return smi

        def get_cudnn_version():
            cuda_path = os.environ.get("CUDA_PATH")
            return subprocess.run(["nvidia-smi"], check=False)
        """
    by_line = _findings(engine, src)
    windows = [f for n in range(12, 17) for f in by_line.get(n, [])]
    assert windows and {f.severity for f in windows} == {"info"}, windows
    assert all(f.fix == "none" for f in windows)
    # the same reads outside the branch keep their severity
    assert {f.severity for f in by_line[20] + by_line[21]} - {"info"}, by_line
    assert _findings(engine, "import os\nif os.name == 'nt':\n    os.environ['CUDA_PATH'] = 'C:/cuda'\n")[3][0].severity == "info"


# Module functions' defaults that every caller overrides stay reported: tests/test_precision_t11s.py
# (policy (f), the same vllm-omni / xllm-shaped tree) holds them at info with why.


def test_cuda_member_of_per_backend_classes_with_an_npu_twin_is_info(tmp_path):
    from auditor.runner import run_static
    from static_snippets import write_tree

    gpu_worker = '''\
        import torch
        import torch.distributed as dist

        from vllm.v1.worker.gpu_worker import Worker as GPUWorker


        class GPUARWorker(GPUWorker):
            def init_device(self):
                self.device = torch.device(f"cuda:{self.local_rank}")
                torch.cuda.set_device(self.device)
                dist.init_process_group(backend="nccl")


        class CudaGraphCache:
            def capture(self):
                torch.cuda.synchronize()
        '''
    npu_worker = '''\
        import torch
        import torch_npu  # noqa: F401

        from vllm_ascend.worker.worker_v1 import NPUWorker


        class NPUARWorker(NPUWorker):
            def init_device(self):
                self.device = torch.device(f"npu:{self.local_rank}")
                torch.npu.set_device(self.device)
        '''
    platform = '''\
        def worker_cls(device_type):
            if device_type == "npu":
                return "omni.worker.npu.npu_ar_worker.NPUARWorker"
            return "omni.worker.gpu_ar_worker.GPUARWorker"
        '''
    files = {"omni/__init__.py": "", "omni/worker/__init__.py": "", "omni/worker/gpu_ar_worker.py": gpu_worker, "omni/worker/npu/__init__.py": "",
             "omni/worker/npu/npu_ar_worker.py": npu_worker, "omni/platform_utils.py": platform}
    run = run_static([write_tree(tmp_path / "t", files)], jobs=1)
    r = next(r for r in run.results if r.path == "omni/worker/gpu_ar_worker.py")
    in_twin = [f for f in r.findings if 8 <= f.line <= 11]
    assert in_twin and {f.severity for f in in_twin} == {"info"}, in_twin
    assert all(f.fix == "none" and f.data.get("context") == "npu-path" for f in in_twin)
    # a CUDA-named class with no NPU member in the tree keeps its severity
    assert "info" not in {f.severity for f in r.findings if f.line == 16}
    # without the NPU member, the worker's own findings stay
    del files["omni/worker/npu/npu_ar_worker.py"]
    run = run_static([write_tree(tmp_path / "u", files)], jobs=1)
    r = next(r for r in run.results if r.path == "omni/worker/gpu_ar_worker.py")
    assert "error" in {f.severity for f in r.findings if 8 <= f.line <= 11}
