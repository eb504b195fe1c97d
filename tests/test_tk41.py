"""tk41 (session 41; TUNED on test92, test93, test95, test96): PyTorch-Encoding's CUDA-only data-parallel wrappers and
synchronized BatchNorm (NPU496, with the bare `import encoding` that loads them), bare-imported own kernels read from
their guard's messages or a CUDA-named entry point and modules under a `csrc` folder (NPU837), the continuation lines
of a JIT build (`cuda_sources=`, `extra_cuda_cflags=[`), CUDA source templates (NPU383), an own operator library's
`cuda_version()` (NPU380 in a tree audit), torch namespaces / `torch.version` values taken by `getattr` (omnipose),
DINOv2's `set_cuda_current_device=True` (NPU038) and a dataclass field defaulting a flash switch on (NPU825). Each
family with its nearest negatives."""
from __future__ import annotations

from pathlib import Path

from tests.test_tk38 import _at, _codes, _line, _tree_findings


# GuideNet utils.py / test.py (trimmed)
GUIDENET_UTILS = '''
import torch
import encoding


def init_cuda(net, criterion, metric):
    torch.cuda.empty_cache()
    net.cuda()
    criterion.cuda()
    # wrap with encoding's parallel helpers
    net = encoding.parallel.DataParallelModel(net)
    criterion = encoding.parallel.DataParallelCriterion(criterion)
    metric = encoding.parallel.DataParallelCriterion(metric)
    print("using encoding.parallel.DataParallelModel")
    return net, criterion, metric
'''


def test_pytorch_encoding_parallel_helpers_and_their_bare_import():
    codes = _codes(GUIDENET_UTILS, "utils.py")
    assert _at(codes, _line(GUIDENET_UTILS, "import encoding"), "NPU496")
    for needle in ("net = encoding.parallel.DataParallelModel(net)",
                   "criterion = encoding.parallel.DataParallelCriterion(criterion)",
                   "metric = encoding.parallel.DataParallelCriterion(metric)"):
        assert _at(codes, _line(GUIDENET_UTILS, needle), "NPU496")
    assert [c for c in codes if c[1] == "NPU496"] and all(c[2] == "error" for c in codes if c[1] == "NPU496")
    # the comment and the message naming the wrapper stay quiet
    for needle in ("# wrap with encoding", "print(\"using encoding"):
        assert not any(c[1] == "NPU496" for c in codes if c[0] == _line(GUIDENET_UTILS, needle))


def test_pytorch_encoding_sync_batchnorm_imported_by_name():
    src = '''
    from encoding.nn import SegmentationLosses, SyncBatchNorm
    from encoding.parallel import DataParallelModel, DataParallelCriterion

    model = get_segmentation_model(args.model, norm_layer=SyncBatchNorm)
    model = DataParallelModel(model).cuda()
    '''
    codes = _codes(src, "train.py")
    assert _at(codes, _line(src, "from encoding.nn import"), "NPU496")
    assert _at(codes, _line(src, "from encoding.parallel import"), "NPU496")
    assert _at(codes, _line(src, "model = DataParallelModel(model)"), "NPU496")


def test_other_encoding_modules_stay_quiet():
    src = '''
    import encoding
    import encodings.idna
    from .encoding import PositionalEncoding

    pe = PositionalEncoding(d_model=512)
    vocab = encoding.load_vocab("vocab.txt")
    host = encodings.idna.ToASCII("example.com")
    '''
    codes = _codes(src, "model.py")
    assert not any(c[1] == "NPU496" for c in codes)


# prefix-linear-attention based/models/mixers/linear_attention.py (trimmed)
BASED_MIXER = '''
import torch
import torch.nn as nn

try:
    from train.csrc.causal_dot_prod import causal_dot_product  # linear attention cuda kernel
    print(f"Successfully imported the causal dot product kernel! ")
except:
    print(f"Could not import the causal dot product kernel... ")
    causal_dot_product = None

try:
    import lin_attn as mod
    print(f"Successfully imported TK based_H100 kernel")
except:
    mod = None
    print("Could not import TK based_H100 kernel --- Not needed.")

try:
    import based_inference as mod_inf
except:
    mod_inf = None
    print("Could not import TK based_inference decode kernel")


class LinearAttention(nn.Module):
    def forward(self, q, k, v):
        y = torch.zeros_like(v)
        mod.based_fwd_tk(q.to(dtype=torch.bfloat16).contiguous(), k.contiguous(), v.contiguous(), y)
        out = causal_dot_product(q.contiguous(), k.contiguous(), v.contiguous())
        mod_inf.based_step(q, k, v, self.kv_state, self.k_state, y)
        return y + out
'''


def test_bare_kernels_named_by_their_guards_and_a_csrc_module():
    codes = _codes(BASED_MIXER, "linear_attention.py")
    for needle in ("from train.csrc.causal_dot_prod import", "import lin_attn as mod",
                   "import based_inference as mod_inf", "mod.based_fwd_tk(", "out = causal_dot_product(",
                   "mod_inf.based_step("):
        assert _at(codes, _line(BASED_MIXER, needle), "NPU837"), needle
    assert all(c[2] == "warning" for c in codes if c[1] == "NPU837")
    # the messages themselves stay quiet
    for needle in ("print(\"Could not import TK based_H100", "print(f\"Successfully imported TK"):
        assert not any(c[1] == "NPU837" for c in codes if c[0] == _line(BASED_MIXER, needle))


def test_guarded_imports_of_ordinary_modules_stay_quiet():
    src = '''
    try:
        import wandb_helpers as wh
    except ImportError:
        wh = None
        print("wandb helpers not installed; logging to stdout")

    try:
        import mylogger
    except ImportError:
        mylogger = None
    # the cuda kernel is optional


    def log(x):
        if wh is not None:
            wh.log_scalar("loss", x)
        mylogger.info(x)
    '''
    codes = _codes(src, "train.py")
    assert not any(c[1] == "NPU837" for c in codes)


def test_bare_module_with_a_cuda_named_entry_point():
    src = '''
    import torch
    import kivi_gemv
    import helpers


    def cuda_bmm_fA_qB_outer(group_size, fA, qB, scales, zeros, bits, mqa=False):
        nh = fA.shape[0]
        c = kivi_gemv.gemv_forward_cuda_outer_dim(fA, qB, scales, zeros, bits, group_size, nh, mqa)
        return c


    def to_dev(batch):
        return helpers.move_batch(batch)
    '''
    codes = _codes(src, "matmul.py")
    assert _at(codes, _line(src, "import kivi_gemv"), "NPU837")
    assert _at(codes, _line(src, "c = kivi_gemv.gemv_forward_cuda_outer_dim("), "NPU837")
    assert not _at(codes, _line(src, "import helpers"), "NPU837")


# accelerated-scan accelerated_scan/warp.py (trimmed)
WARP_SCAN = '''
from pathlib import Path

from torch.utils.cpp_extension import load_inline

cuda_source = (Path(__file__).parent / "warp.cuh").read_text()
cpp_source = "at::Tensor warpscan_forward(const at::Tensor &gates);"

module = load_inline(
    name="warpscan",
    cpp_sources=[cpp_source],
    cuda_sources=[cuda_source],
    functions=["warpscan_forward"],
    verbose=True,
    extra_cuda_cflags=[
        "-O3",
        "-std=c++17",
        "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
    ]
)
'''


def test_jit_build_keywords_on_lines_of_their_own():
    codes = _codes(WARP_SCAN, "warp.py")
    assert _at(codes, _line(WARP_SCAN, "cuda_sources=[cuda_source],"), "NPU369")
    assert _at(codes, _line(WARP_SCAN, "extra_cuda_cflags=["), "NPU369")
    assert _at(codes, _line(WARP_SCAN, "-U__CUDA_NO_HALF_OPERATORS__"), "NPU369")
    # C++ sources and an empty or absent CUDA source list are no CUDA build setting
    assert not _at(codes, _line(WARP_SCAN, "cpp_sources=[cpp_source],"), "NPU369")


def test_jit_build_keywords_on_the_call_line_stay_with_the_call():
    src = '''
    from torch.utils.cpp_extension import load_inline

    cpu_only = load_inline(name="cpu_ops", cpp_sources=[cpp], cuda_sources=[], functions=["f"])
    fused = load_inline(name="fused", cpp_sources=[cpp], cuda_sources=[cu], extra_cuda_cflags=["-O3"])
    '''
    codes = _codes(src, "build.py")
    line = _line(src, "fused = load_inline(")
    assert _at(codes, line, "NPU370")
    assert not _at(codes, line, "NPU369")


# HET hrt/pyctor/ir/OpSpecSSA/templates/gemm_templates.py (trimmed)
HET_TEMPLATES = '''
from .environ import env


def generate_kernel_traversal(op_spec, var_table):
    template = env.get_template(
        "ir/OpSpecSSA/templates/matmul.kernel.cu.h.codelet.jinja"
    )
    return template.render(kind=get_kind(var_table))


def generate_report(results):
    template = env.get_template("reports/summary.html.jinja")
    return template.render(results=results)
'''


def test_cuda_source_templates_are_cuda_sources():
    codes = _codes(HET_TEMPLATES, "gemm_templates.py")
    assert _at(codes, _line(HET_TEMPLATES, "matmul.kernel.cu.h.codelet.jinja"), "NPU383")
    assert not any(c[1] == "NPU383" for c in codes if c[0] == _line(HET_TEMPLATES, "summary.html.jinja"))


SPLINE_INIT = '''
import importlib
import os.path as osp

import torch

for library in ["_basis", "_weighting"]:
    cuda_spec = importlib.machinery.PathFinder().find_spec(f"{library}_cuda", [osp.dirname(__file__)])
    if cuda_spec is not None:
        torch.ops.load_library(cuda_spec.origin)

cuda_version = torch.ops.torch_spline_conv.cuda_version()
out = torch.ops.torch_spline_conv.spline_basis(pseudo, kernel_size, is_open_spline, degree)
'''


def test_own_operator_library_cuda_version_in_a_tree_audit(tmp_path: Path):
    pkg = tmp_path / "torch_spline_conv"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(SPLINE_INIT.lstrip("\n"))
    findings = _tree_findings(tmp_path)["torch_spline_conv/__init__.py"]
    lines = SPLINE_INIT.lstrip("\n").splitlines()
    version = next(i for i, t in enumerate(lines, 1) if "cuda_version()" in t)
    basis = next(i for i, t in enumerate(lines, 1) if "spline_basis(" in t)
    assert any(f[0] == version and f[1] == "NPU380" for f in findings)
    # the library's own device-dispatched ops stay its API
    assert not any(f[0] == basis and f[1] == "NPU380" for f in findings)


# omnipose src/omnipose/networks/__init__.py and models/run_metadata.py (trimmed)
OMNIPOSE = '''
import torch


def _lock_cuda_precision(device):
    if not isinstance(device, torch.device) or device.type != "cuda":
        return
    cudnn = getattr(torch.backends, "cudnn", None)
    if cudnn is not None:
        cudnn.deterministic = True
        cudnn.benchmark = False
        if hasattr(cudnn, "allow_tf32"):
            cudnn.allow_tf32 = False
    cuda_matmul = getattr(torch.backends, "cuda", None)


def run_metadata():
    info = {"torch": torch.__version__}
    info["cuda_version"] = getattr(torch.version, "cuda", None)
    return info


def probes():
    mem = getattr(torch.cuda, "mem_get_info", None)
    if getattr(torch.backends, "cudnn", None) is not None:
        pass
    return mem
'''


def test_torch_namespaces_and_version_taken_by_getattr():
    codes = _codes(OMNIPOSE, "networks.py")
    assert _at(codes, _line(OMNIPOSE, 'cudnn = getattr(torch.backends, "cudnn", None)'), "NPU006")
    assert _at(codes, _line(OMNIPOSE, "cudnn.deterministic = True"), "NPU006")
    assert _at(codes, _line(OMNIPOSE, "cudnn.benchmark = False"), "NPU006")
    assert _at(codes, _line(OMNIPOSE, "cudnn.allow_tf32 = False"), "NPU206")
    assert _at(codes, _line(OMNIPOSE, 'cuda_matmul = getattr(torch.backends, "cuda", None)'), "NPU007")
    assert _at(codes, _line(OMNIPOSE, 'info["cuda_version"] = getattr(torch.version, "cuda", None)'), "NPU008")
    # taken by getattr: a probe, at most a warning
    getattr_lines = {_line(OMNIPOSE, n) for n in ('cudnn = getattr(', 'info["cuda_version"]')}
    assert all(c[2] != "error" for c in codes if c[0] in getattr_lines)
    # a function probed by getattr and a getattr tested in a condition stay quiet (issue 11's probe class)
    for needle in ('mem = getattr(torch.cuda, "mem_get_info", None)', 'if getattr(torch.backends, "cudnn", None)'):
        assert not any(c[0] == _line(OMNIPOSE, needle) for c in codes), needle


def test_dinov2_set_cuda_current_device_default():
    src = '''
    def enable(
        *,
        set_cuda_current_device: bool = True,
        overwrite: bool = False,
    ):
        """
        Args:
            set_cuda_current_device: If True, call torch.cuda.set_device() to set the current device.
        """
        return set_cuda_current_device


    def disable(*, set_cuda_current_device: bool = False):
        return set_cuda_current_device
    '''
    codes = _codes(src, "distributed.py")
    assert _at(codes, _line(src, "set_cuda_current_device: bool = True,"), "NPU038")
    assert not any(c[0] == _line(src, "set_cuda_current_device: If True") for c in codes)
    assert not any(c[0] == _line(src, "def disable(") for c in codes)


def test_dataclass_field_defaulting_a_flash_switch_on():
    src = '''
    from dataclasses import dataclass, field


    @dataclass
    class ModelArguments:
        flash_attn: bool = field(
            default=True,
            metadata={"help": "Set to True to use Flash Attention 2.0."},
        )
        flash: bool = field(default=False, metadata={"help": "flash attention"})


    def build(model_args):
        if model_args.flash_attn and model_args.flash:
            return "flash_attention_2"
    '''
    codes = _codes(src, "finetune.py")
    assert _at(codes, _line(src, "flash_attn: bool = field("), "NPU825")
    assert not _at(codes, _line(src, "flash: bool = field(default=False"), "NPU825")
