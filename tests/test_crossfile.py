"""Cross-file propagation (auditor/static/crossfile.py): imports and uses, in other files, of the project's own
CUDA-specific code; the result cache keeps each file's summary and the pass is recomputed on every run."""
from __future__ import annotations

import os
from pathlib import Path

from auditor.runner import run_static
from auditor.static.crossfile import OWN_CODES, tech_of
from auditor.static.module_paths import module_names

# bmtrain's layout: a `nccl` package binding NCCL through the C extension, used by `distributed/ops.py`
NCCL_INIT = '''\
from typing import Optional
import torch
from .. import C
from .enums import *


class NCCLCommunicator:
    """NCCL communicator stores the communicator handle."""

    def __init__(self, ptr) -> None:
        self.__ptr = ptr

    @property
    def ptr(self):
        return self.__ptr


def getUniqueId() -> bytes:
    return C.ncclGetUniqueId()


def allReduce(src, dst, op, comm):
    sendbuff = src.data_ptr()
    recvbuff = dst.data_ptr()
    count = src.numel()
    C.ncclAllReduce(sendbuff, recvbuff, count, 0, op, comm.ptr, torch.cuda.current_stream().cuda_stream)


def send(src, peer, comm):
    C.ncclSend(src.data_ptr(), src.numel(), 0, peer, comm.ptr, torch.cuda.current_stream().cuda_stream)
'''

OPS = '''\
import torch
from ..global_var import config
from ..nccl import allReduce as ncclAllReduce
from ..nccl import send as ncclSend


def send_activations(hidden_state, next_rank, comm):
    ncclSend(hidden_state.storage(), next_rank, comm)


class OpAllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, op, comm=None):
        output = torch.empty_like(input)
        ncclAllReduce(input.storage(), output.storage(), op, comm or config["comm"])
        return output
'''

# a flash-attn wrapper in a utils module, used by a model file (ring-flash-attn / yunchang style)
UTILS = '''\
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

try:
    from flash_attn.flash_attn_interface import _flash_attn_varlen_forward
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


def pad_to(x, n):
    return torch.nn.functional.pad(x, (0, n - x.shape[-1]))


def select_flash_attn_impl(impl_type, stage="fwd-bwd"):
    from flash_attn import flash_attn_func
    if impl_type == "fa":
        return flash_attn_func
    raise ValueError(impl_type)


def load_model(path, use_bnb=False):
    kwargs = {}
    if use_bnb:
        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True)
    return AutoModelForCausalLM.from_pretrained(path, **kwargs)
'''

LAYER = '''\
import torch
from .utils import HAS_FLASH_ATTN, pad_to, select_flash_attn_impl


class Attention(torch.nn.Module):
    def __init__(self, attn_type="fa"):
        super().__init__()
        self.fn = select_flash_attn_impl(attn_type) if HAS_FLASH_ATTN else None

    def forward(self, q, k, v):
        q = pad_to(q, 64)
        return self.fn(q, k, v)
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _cross(run) -> dict[str, list[tuple[int, str, str]]]:
    out: dict[str, list[tuple[int, str, str]]] = {}
    for r in run.results:
        for f in r.findings:
            if f.code in OWN_CODES:
                out.setdefault(r.path, []).append((f.line, f.code, f.symbol))
    return out


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    _write(root, {
        "pkg/__init__.py": "", "pkg/C.py": "", "pkg/global_var.py": "config = {}\n",
        "pkg/nccl/__init__.py": NCCL_INIT, "pkg/nccl/enums.py": "ncclSum = 0\n",
        "pkg/distributed/__init__.py": "", "pkg/distributed/ops.py": OPS,
        "pkg/attn/__init__.py": "", "pkg/attn/utils.py": UTILS, "pkg/attn/layer.py": LAYER,
        "pkg/train.py": "from .attn.utils import load_model\n\nmodel = load_model('gpt2')\n",
    })
    return root


def test_module_names_follow_packages():
    names = module_names(["src/pkg/__init__.py", "src/pkg/nccl/__init__.py", "src/pkg/nccl/enums.py",
                          "scripts/run.py"])
    assert names == {"src/pkg/__init__.py": "pkg", "src/pkg/nccl/__init__.py": "pkg.nccl",
                     "src/pkg/nccl/enums.py": "pkg.nccl.enums", "scripts/run.py": "run"}
    assert tech_of("pkg/nccl/__init__.py") == "nccl"
    assert tech_of("aqlm/inference_kernels/cuda_kernel.py") == "cuda"
    assert tech_of("gemlite/triton_kernels/gemm_kernels.py") == "triton"
    assert tech_of("sat/generation/cuda2d_sampling.py") is None     # CogView2's sampler: a word, not the technology


def test_uses_of_a_local_nccl_binding_and_a_flash_attn_wrapper(tmp_path):
    found = _cross(run_static([_project(tmp_path)], jobs=1))
    ops = found["pkg/distributed/ops.py"]
    # the import lines and the calls, distributed (the binding's own findings are NCCL ones)
    assert {(line, code) for line, code, _ in ops} == {(3, "NPU135"), (4, "NPU135"), (8, "NPU135"), (15, "NPU135")}
    layer = found["pkg/attn/layer.py"]
    assert {line for line, _, _ in layer} == {2}     # line 8 keeps its own finding (NPU391 on HAS_FLASH_ATTN)
    assert {code for _, code, _ in layer} == {"NPU321"}
    assert all(sym != "pad_to" for _, _, sym in layer)       # a neutral helper of the same module propagates nothing
    assert "pkg/attn/utils.py" not in found                  # the definitions keep their own findings only
    assert "pkg/train.py" not in found       # bitsandbytes only `if use_bnb:`: a loader with an option, not CUDA code


def test_per_backend_member_and_dispatch_propagate_nothing(tmp_path):
    root = tmp_path / "mb"
    _write(root, {
        "lib/__init__.py": "", "lib/backends/__init__.py": "",
        "lib/backends/cuda/__init__.py": "", "lib/backends/cuda/ops.py": NCCL_INIT.replace("from .. import C", "import C"),
        "lib/backends/npu/__init__.py": "", "lib/backends/npu/ops.py": "def allReduce(src, dst, op, comm):\n    pass\n",
        "lib/comm.py": "from .backends.cuda.ops import allReduce\n\n\ndef reduce(x, y, comm):\n    allReduce(x, y, 0, comm)\n",
        "lib/attn/__init__.py": "", "lib/attn/utils.py": UTILS,
        "lib/attn/dispatch.py": (
            "import torch\nfrom .utils import select_flash_attn_impl\n\n\n"
            "def attention(q, k, v):\n"
            "    if q.device.type == \"npu\":\n"
            "        import torch_npu\n"
            "        return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], \"BSND\")[0]\n"
            "    else:\n"
            "        return select_flash_attn_impl(\"fa\")(q, k, v)\n"),
    })
    found = _cross(run_static([root], jobs=1))
    assert "lib/comm.py" not in found                    # backends/cuda/ beside backends/npu/: the CUDA member
    # the import is reported; the call, in the CUDA branch of an NPU dispatch, is not
    assert [line for line, _, _ in found.get("lib/attn/dispatch.py", [])] == [2]


def test_cache_keeps_summaries_and_a_changed_module_changes_its_importers(tmp_path):
    root = _project(tmp_path)
    cache = tmp_path / "cache"
    first = _cross(run_static([root], jobs=1, cache_dir=cache))
    second = run_static([root], jobs=1, cache_dir=cache)
    assert second.cached_files == len(second.results)    # every file from the cache...
    assert _cross(second) == first                       # ...and the same cross-file findings
    # the binding is rewritten for HCCL: ops.py (unchanged, from the cache) loses its findings
    nccl = root / "pkg" / "nccl" / "__init__.py"
    ported = "import torch.distributed as dist\n\n\ndef allReduce(src, dst, op, group):\n    dist.all_reduce(src, group=group)\n" \
             "\n\ndef send(src, peer, group):\n    dist.send(src, peer, group=group)\n"
    nccl.write_text(ported)
    st = nccl.stat()
    os.utime(nccl, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    third = run_static([root], jobs=1, cache_dir=cache)
    assert third.cached_files == len(third.results) - 1
    after = _cross(third)
    assert "pkg/distributed/ops.py" not in after
    assert after["pkg/attn/layer.py"] == first["pkg/attn/layer.py"]


STEREO = '''import torch
import torch.nn as nn

try:
    autocast = torch.cuda.amp.autocast
except:
    class autocast:
        def __init__(self, enabled):
            pass
        def __enter__(self):
            pass
        def __exit__(self, *args):
            pass

norm_layer = nn.BatchNorm2d


class Stereo(nn.Module):
    def forward(self, image1, image2, iters=12):
        with autocast(enabled=self.mixed_precision):
            return image1 - image2
'''

EVALUATE = '''import sys
sys.path.append('core')

import torch
from stereo_net import Stereo, autocast, norm_layer


@torch.no_grad()
def validate(model, loader, iters=32, mixed_prec=False):
    model.eval()
    for image1, image2 in loader:
        with autocast(enabled=mixed_prec):
            flow = model(image1, image2, iters=iters)
        layer = norm_layer(3)
    return flow


def calibrate(model, loader):
    autocast = torch.autocast
    with autocast("cpu"):
        return [model(a, b) for a, b in loader]
'''


def test_an_imported_alias_of_a_cuda_api_is_the_api(tmp_path):
    """IGEV: `autocast = torch.cuda.amp.autocast` in core/stereo_net.py, `from stereo_net import autocast` in a script
    beside core/ (sys.path): each `with autocast(...)` there is the CUDA autocast (device + precision, no fix)."""
    root = tmp_path / "igev"
    _write(root, {"core/__init__.py": "", "core/stereo_net.py": STEREO, "evaluate.py": EVALUATE,
                  "train.py": "from core.stereo_net import autocast as amp_autocast\n\n\n"
                              "def step(model, x):\n    with amp_autocast(enabled=True):\n        return model(x)\n"})
    run = run_static([root], jobs=1)
    by_path = {r.path: r for r in run.results}
    defined = {(f.line, f.category) for f in by_path["core/stereo_net.py"].findings}
    assert {(5, "device"), (5, "precision")} <= defined
    evaluate = by_path["evaluate.py"].findings
    assert {(f.line, f.category) for f in evaluate if f.category in ("device", "precision")} == \
        {(12, "device"), (12, "precision")}      # not the import line, not norm_layer, not the local torch.autocast
    assert all(f.fix == "none" and "core/stereo_net.py" in f.message for f in evaluate if f.line == 12)
    assert {(f.line, f.category) for f in by_path["train.py"].findings} >= {(5, "device"), (5, "precision")}
