"""Families bench/corpus_test10 missed on its first run (t14k, issue 14; test10 is tuned on since): NVIDIA Warp
kernels, names a star import of a CUDA-only package brings (`from pynvml import *`), mmcv.ops functions without an
NPU implementation, CUDA SDPA checks reached through getattr with a callable fallback, cuEquivariance, TensorRT's
engine loading and PyCUDA's driver calls, and help text that is never a finding. The code below is written in the
shape of real projects (GPU monitors, physics / RL libraries on Warp, StyleGAN ports on mmcv), not copied from the
split; each family has near misses that must stay quiet."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "example.py"):
    return snippet_findings(ENGINE, src, name)


def _found(src: str, name: str = "example.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in _findings(src, name)}


def _lines(src: str, code: str) -> list[int]:
    return sorted(f.line for f in _findings(src) if f.code == code)


# --- NVIDIA Warp (NPU314) ----------------------------------------------------------------------------------------

WARP_OPS = """\
    import torch
    import warp as wp

    wp.init()


    @wp.func
    def _softplus(x: float):
        return wp.log(1.0 + wp.exp(x))


    @wp.kernel(enable_backward=False)
    def _pair_energy(pos: wp.array(dtype=wp.vec3), pairs: wp.array(ndim=2, dtype=wp.int32),
                     out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        a = pairs[0, i]
        b = pairs[1, i]
        d = wp.length(pos[a] - pos[b])
        wp.atomic_add(out, a, _softplus(d))


    def pair_energy(pos: torch.Tensor, pairs: torch.Tensor, n: int) -> torch.Tensor:
        out = torch.zeros(n, device=pos.device)
        device = wp.device_from_torch(pos.device)
        wp.launch(
            _pair_energy,
            dim=pairs.shape[1],
            inputs=[wp.from_torch(pos, dtype=wp.vec3), wp.from_torch(pairs)],
            outputs=[wp.from_torch(out)],
            device=device,
        )
        return out


    def build(dtype):
        return wp.Kernel(_make_body(dtype), key=f"pair_energy_{dtype.__name__}", module=wp.get_module("pairs"))
"""


def test_warp_imports_kernels_funcs_launches_and_kernel_objects_are_reported():
    lines = _lines(WARP_OPS, "NPU314")
    assert lines == [2, 4, 7, 12, 25, 36], lines     # import, init, @wp.func, @wp.kernel, wp.launch, wp.Kernel


def test_warp_names_inside_kernel_bodies_and_interop_are_not_reported_on_their_own():
    found = _found(WARP_OPS)
    for line in (13, 14, 15, 16, 18, 19, 23):          # annotations, wp.tid, wp.length, atomic_add, device_from_torch
        assert not any(ln == line and code == "NPU314" for ln, code in found), line


def test_warp_severity_and_wording_do_not_claim_an_ascend_backend():
    launch = next(f for f in _findings(WARP_OPS) if f.code == "NPU314" and f.line == 25)
    assert launch.severity == "error" and launch.category == "kernel"
    assert "unverified" in launch.substitution and "CPU backend" in launch.substitution


def test_a_local_warp_function_or_variable_is_not_nvidia_warp():
    src = """\
        import cv2
        from .transforms import warp


        def augment(img, matrix):
            out = warp(img, matrix)
            warped = cv2.warpPerspective(img, matrix, img.shape[1::-1])
            return out, warped
    """
    assert not any(code == "NPU314" for _, code in _found(src))


# --- star imports of a CUDA-only package (pynvml) ----------------------------------------------------------------

NVML_MONITOR = """\
    import json
    import sys

    from pynvml import *


    def snapshot():
        nvmlInit()
        try:
            gpus = []
            for i in range(nvmlDeviceGetCount()):
                handle = nvmlDeviceGetHandleByIndex(i)
                mem = nvmlDeviceGetMemoryInfo(handle)
                gpus.append({"name": nvmlDeviceGetName(handle), "used": mem.used, "total": len(gpus)})
            return gpus
        except NVMLError as err:
            print(json.dumps({"error": str(err)}), file=sys.stderr)
            return []
        finally:
            nvmlShutdown()


    def report(gpus):
        return format_table(gpus)


    def format_table(rows):
        return "\\n".join(str(r) for r in rows)
"""


def test_star_imported_nvml_calls_are_pynvml_calls():
    found = _found(NVML_MONITOR)
    for line in (4, 8, 11, 12, 13, 14, 20):
        assert (line, "NPU406") in found, line


def test_star_import_leaves_builtins_local_functions_and_exception_names_alone():
    found = _found(NVML_MONITOR)
    for line in (16, 17, 24):           # `except NVMLError`, print / str / json, a function defined in the file
        assert not any(ln == line for ln, _ in found), line


def test_two_star_imports_make_a_name_ambiguous():
    src = """\
        from pynvml import *
        from .helpers import *


        def probe():
            nvmlInit()
            return nvmlDeviceGetCount()
    """
    lines = _lines(src, "NPU406")
    assert lines == [1], lines          # the import is the finding; the calls may come from .helpers


def test_star_import_of_a_package_that_runs_anywhere_binds_nothing():
    src = """\
        from math import *


        def area(r):
            return pi * pow(r, 2) + nvmlInit()
    """
    assert _found(src) == set()


# --- mmcv.ops without an NPU implementation (NPU315) --------------------------------------------------------------

MMCV_STYLEGAN = """\
    import torch
    from mmcv.ops import knn, nms, upfirdn2d


    def blur(x, kernel, pad=(2, 1)):
        return upfirdn2d(x, kernel, up=1, down=1, padding=pad)


    def group(xyz, centers):
        return knn(16, xyz, centers, transposed=False)


    def keep(boxes, scores):
        return nms(boxes, scores, iou_threshold=0.5)
"""


def test_mmcv_ops_without_npu_implementation_are_reported_and_npu_ops_are_not():
    findings = [f for f in _findings(MMCV_STYLEGAN) if f.code == "NPU315"]
    by_line = {f.line: f for f in findings}
    assert {6, 10} <= set(by_line), sorted(by_line)
    assert 14 not in by_line                                  # nms has an NPU implementation in mmcv
    assert by_line[10].severity == "error"                    # knn raises for NPU tensors
    assert by_line[6].severity == "warning"                   # upfirdn2d falls back to mmcv's PyTorch reference


# --- getattr with a callable fallback ----------------------------------------------------------------------------

def test_getattr_with_a_callable_fallback_is_a_use_and_a_none_default_is_a_probe():
    src = """\
        import torch
        import torch.backends.cuda as cuda_backend


        def never(*args, **kwargs):
            return False


        can_use_flash = getattr(cuda_backend, "can_use_flash_attention", never)
        can_use_mem_eff = getattr(torch.backends.cuda, "can_use_efficient_attention", lambda *a: False)
        maybe = getattr(torch.backends.cuda, "can_use_cudnn_attention", None)
        label = getattr(config, "attention_backend", "sdpa")
    """
    found = _found(src)
    assert any(ln == 9 and code.startswith("NPU3") for ln, code in found), found
    assert any(ln == 10 and code.startswith("NPU3") for ln, code in found), found
    assert not any(ln in (11, 12) for ln, _ in found), found


# --- cuEquivariance, TensorRT engines, PyCUDA --------------------------------------------------------------------

def test_cuequivariance_torch_is_third_party_and_slower_not_an_error():
    src = """\
        import cuequivariance as cue
        import cuequivariance_torch as cuet


        class Conv(torch.nn.Module):
            def __init__(self, irreps_in, irreps_sh, irreps_out):
                super().__init__()
                self.tp = cuet.ChannelWiseTensorProduct(irreps_in, irreps_sh, filter_irreps_out=irreps_out,
                                                        layout=cue.ir_mul, shared_weights=False)
    """
    findings = [f for f in _findings(src) if f.code == "NPU473"]
    assert sorted(f.line for f in findings) == [2, 8]
    assert all(f.severity == "warning" and f.category == "third_party" for f in findings)


def test_tensorrt_engine_loading_and_pycuda_buffers_are_third_party():
    src = """\
        import pycuda.autoinit  # noqa: F401
        import pycuda.driver as cuda
        import tensorrt as trt
        from pycuda.compiler import SourceModule


        def load(path):
            runtime = trt.Runtime(trt.Logger(trt.Logger.WARNING))
            with open(path, "rb") as f:
                engine = runtime.deserialize_cuda_engine(f.read())
            host = cuda.pagelocked_empty(1024, dtype=float)
            device = cuda.mem_alloc(host.nbytes)
            stream = cuda.Stream()
            cuda.memcpy_htod_async(device, host, stream)
            return engine, SourceModule("__global__ void k() {}")
    """
    by_line: dict[int, set[str]] = {}
    for f in _findings(src):
        by_line.setdefault(f.line, set()).add(f"{f.code}:{f.category}")
    for line in (1, 2, 11, 12, 13, 14):
        assert "NPU475:third_party" in by_line.get(line, set()), (line, by_line.get(line))
    assert "NPU474:third_party" in by_line.get(10, set()), by_line.get(10)
    assert "NPU376:kernel" in by_line.get(4, set()), by_line.get(4)     # the kernel builder stays kernel


# --- help text ---------------------------------------------------------------------------------------------------

def test_help_and_usage_text_is_never_a_finding_but_the_default_beside_it_is():
    src = """\
        import argparse
        from dataclasses import dataclass, field

        parser = argparse.ArgumentParser(description="Train on 'cuda' devices; set CUDA_VISIBLE_DEVICES=0 to pick one")
        parser.add_argument("--device", type=str, default="cuda",
                            help="Device to run on: 'cuda' (GPU) or 'cpu'. "
                                 "Use CUDA_VISIBLE_DEVICES=X train.py [...] to choose the GPU")


        @dataclass
        class Args:
            backend: str = field(default="nccl", metadata={"help": "collective backend, e.g. 'nccl'"})
    """
    found = _found(src)
    assert any(ln == 5 for ln, _ in found), found             # default="cuda"
    assert any(ln == 12 and code == "NPU101" for ln, code in found), found     # default="nccl"
    assert not any(ln in (4, 6, 7) for ln, _ in found), found


# --- FP8 quantisation algorithms in TensorRT-LLM / ModelOpt configs (NPU295) -------------------------------------

def test_fp8_quant_algo_in_a_config_dict_or_keyword_is_precision_and_other_algorithms_are_not():
    src = """\
        import json


        def write_config(args, out):
            config = {"architecture": "DiT", "dtype": "bfloat16", "device": "gpu"}
            if args.fp8:
                config["quantization"] = {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}
            elif args.int8:
                config["quantization"] = {"quant_algo": "W8A16", "kv_cache_quant_algo": "INT8"}
            json.dump(config, out)
            return QuantConfig(quant_algo="NVFP4")
    """
    lines = _lines(src, "NPU295")
    assert lines == [7, 7, 11] or sorted(set(lines)) == [7, 11], lines
    assert not any(ln == 5 and code == "NPU050" for ln, code in _found(src))   # only opted-in rules read dict keys


def test_getattr_with_a_value_fallback_stays_a_probe():
    src = """\
        import torch

        FP8_DTYPE = getattr(torch, "float8_e4m3fn", torch.uint8)
        SYNC = getattr(torch.cuda, "synchronize", NOOP)
    """
    found = _found(src)
    assert not any(ln in (3, 4) for ln, _ in found), found
