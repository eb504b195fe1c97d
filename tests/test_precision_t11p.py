"""Precision fixes of t11p (issue 11, session 11; TUNED ON the earlier held-out draws heldout3 .. heldout9, whose
false rows were read to find the class): CUDA code that only the CUDA arm of the project's OWN platform check in
Python reaches, where that check also has an NPU arm (auditor/static/platform_predicates.py).

The trees below are written for these tests, shaped like the multi-backend code that class came from (an
expert-parallel library whose compiled extension reports "cuda" or "ascend", a model package ported to Ascend
that keeps a Triton kernel beside a native fallback); no bench file is copied."""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import findings_in_tree, write_tree

# An EP library: the compiled extension says which platform it was built for; the package defines its own checks.
EP_TREE = {
    "fast_ep/__init__.py": """\
        from .platform import BUILD_PLATFORM
        from .buffer import Buffer

        if BUILD_PLATFORM == "cuda":
            from .legacy import LegacyBuffer
        """,
    "fast_ep/topology.py": """\
        import os

        import torch
        import torch.distributed as dist


        def check_nvlink(group: dist.ProcessGroup) -> None:
            if "PCIE" in torch.cuda.get_device_name():
                visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7").split(",")
                assert group.size() <= 2, f"PCIe GPUs {visible} only pair over NVLink"


        def local_world_size(group: dist.ProcessGroup) -> int:
            return min(group.size(), torch.cuda.device_count())
        """,
    "fast_ep/legacy.py": """\
        import torch

        from .topology import check_nvlink, local_world_size


        class LegacyBuffer:
            def __init__(self, group) -> None:
                check_nvlink(group)
                self.local = local_world_size(group)
                self.stream = torch.cuda.Stream()
        """,
    "fast_ep/platform.py": """\
        import torch

        import fast_ep._ext as _ext

        BUILD_PLATFORM = _ext.platform_name()
        if BUILD_PLATFORM not in ("cuda", "ascend"):
            raise RuntimeError(f"fast_ep was built for an unknown platform: {BUILD_PLATFORM}")


        def is_cuda() -> bool:
            return BUILD_PLATFORM == "cuda"


        def require_cuda(what: str) -> None:
            if not is_cuda():
                raise NotImplementedError(f"{what} has no Ascend implementation yet")


        def synchronize() -> None:
            if is_cuda():
                torch.cuda.synchronize()
            else:
                torch.npu.synchronize()
        """,
    "fast_ep/buffer.py": """\
        import os

        import torch
        import torch.distributed as dist

        from .platform import is_cuda, require_cuda
        from .topology import check_nvlink, local_world_size


        class Buffer:
            def __init__(self, group: dist.ProcessGroup, num_bytes: int) -> None:
                self.group = group
                self.num_bytes = num_bytes
                self.local = local_world_size(group)
                if is_cuda():
                    check_nvlink(group)
                    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
                    torch.cuda.set_device(dist.get_rank(group) % torch.cuda.device_count())
                else:
                    torch.npu.set_device(dist.get_rank(group) % torch.npu.device_count())

            def num_sms(self, num_experts: int) -> int:
                require_cuda("num_sms")
                return self._num_sms(num_experts)

            def _num_sms(self, num_experts: int) -> int:
                count = torch.cuda.get_device_properties("cuda").multi_processor_count
                return max(4, min(count, num_experts // 2))

            def stream(self):
                return torch.cuda.current_stream()
        """,
}


def _in(found: dict, rel: str, line: int) -> set[str]:
    return {sev for (path, ln, _code), sev in found.items() if path == rel and ln == line}


def _line(root: Path, rel: str, needle: str) -> int:
    return next(i for i, text in enumerate((root / rel).read_text().splitlines(), 1) if needle in text)


def test_code_under_the_projects_own_cuda_check_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ep", EP_TREE)
    found = findings_in_tree(root)
    buf = "fast_ep/buffer.py"
    # `if is_cuda():` (the tree's own check, whose module also tests "ascend"): the CUDA arm of a switch
    assert _in(found, buf, _line(root, buf, "torch.cuda.set_device")) == {"info"}
    # after `require_cuda(...)`, and in a private method called only there
    assert _in(found, buf, _line(root, buf, "get_device_properties")) == {"info"}
    # a method every backend calls keeps its finding
    assert _in(found, buf, _line(root, buf, "current_stream")) - {"info"}
    # a helper module's function called only under `if is_cuda():` and from a module imported only for CUDA
    topo = "fast_ep/topology.py"
    assert _in(found, topo, _line(root, topo, "CUDA_VISIBLE_DEVICES")) == {"info"}
    # one called on every platform keeps its finding
    assert _in(found, topo, _line(root, topo, "device_count")) - {"info"}
    # the module imported only under `if BUILD_PLATFORM == "cuda":` is the CUDA member itself
    assert _in(found, "fast_ep/legacy.py", _line(root, "fast_ep/legacy.py", "torch.cuda.Stream")) == {"info"}


def test_cuda_check_without_an_npu_arm_keeps_its_findings(tmp_path: Path) -> None:
    files = dict(EP_TREE)
    # a library built for CUDA or ROCm only: no Ascend path yet, the port must add one
    files["fast_ep/platform.py"] = files["fast_ep/platform.py"].replace('"ascend"', '"rocm"').replace(
        "torch.npu.synchronize()", "torch.cuda.synchronize()")
    files["fast_ep/buffer.py"] = files["fast_ep/buffer.py"].replace("torch.npu", "torch.cuda")
    root = write_tree(tmp_path / "ep", files)
    found = findings_in_tree(root)
    buf = "fast_ep/buffer.py"
    assert _in(found, buf, _line(root, buf, "get_device_properties")) - {"info"}


# A model package ported to Ascend: its runtime imports torch_npu, and its fused kernel keeps a Triton path for CUDA
# tensors beside the native one the NPU runs.
PORTED = {
    "rwkv_port/__init__.py": "",
    "rwkv_port/npu_runtime.py": """\
        import torch
        import torch_npu  # noqa: F401


        def to_device(model):
            return model.to("npu")
        """,
    "rwkv_port/fused_mix.py": """\
        import torch
        import torch.nn.functional as F

        try:
            import triton
            import triton.language as tl
            HAS_TRITON = True
        except ImportError:
            HAS_TRITON = False


        def mix(x: torch.Tensor, w: torch.Tensor, force_fallback: bool = False) -> torch.Tensor:
            use_triton = (
                not force_fallback
                and HAS_TRITON
                and x.is_cuda
                and w.is_cuda
                and x.dtype in (torch.float16, torch.bfloat16)
            )
            if not use_triton:
                return torch.tanh(F.linear(x, w))
            return _mix_triton(x, w)


        def _mix_triton(x, w):
            raise NotImplementedError


        def offload_states(optimizer) -> None:
            for state in optimizer.state.values():
                for key, val in state.items():
                    if isinstance(val, torch.Tensor) and val.is_cuda:
                        state[key] = val.to("cpu", non_blocking=True)
        """,
}


def test_is_cuda_kernel_choice_in_a_package_that_runs_on_ascend_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "port", PORTED)
    found = findings_in_tree(root)
    rel = "rwkv_port/fused_mix.py"
    assert _in(found, rel, _line(root, rel, "and x.is_cuda")) == {"info"}
    # `.is_cuda` straight in an `if`: the NPU silently skips the offload, not a kernel choice
    assert _in(found, rel, _line(root, rel, "and val.is_cuda")) - {"info"}


def test_is_cuda_kernel_choice_in_a_cuda_only_package_keeps_its_severity(tmp_path: Path) -> None:
    files = dict(PORTED)
    del files["rwkv_port/npu_runtime.py"]
    root = write_tree(tmp_path / "port", files)
    found = findings_in_tree(root)
    rel = "rwkv_port/fused_mix.py"
    assert _in(found, rel, _line(root, rel, "and x.is_cuda")) - {"info"}
