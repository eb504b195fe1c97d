"""Precision fix of pd23 (session 22, tuned on heldout25 / heldout24's labels): code a ComfyUI node pack carries but
never runs (auditor/static/unreached_defs.py). A module-level alias of an autograd Function (basicsr's `deform_conv =
DeformConvFunction.apply`) and a package `__init__.py`'s re-exports reach what they name only where something reads
the name; a guard whose branch holds a guard of its own (`if BASICSR_JIT: ext = load(...)` / `else: try: from . import
ext`) is one optional import; a function's `try: import spconv` whose name nothing reads is a probe (the lead's
decision 1, vacuously); `@triton.jit` registers nothing; a training folder's configs build nothing; `from
sam2.modeling.x import C` reaches that module's C, not SAM3's class of the same name; a training launcher the pack never
runs is info (the lead's decision 9); so is a CUDA source only unreached code names. Findings there are info,
context `unreached`, never dropped. Each case has a control that keeps its severity.

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree
from tests.test_precision_pd18 import _at, _unreached

# --- an autograd Function's alias and a package's re-exports (heldout25: reactor r_basicsr/ops/dcn/deform_conv.py)

DCN_INIT = """\
    from .deform_conv import DeformConv, deform_conv, offset_grid

    __all__ = ["DeformConv", "deform_conv", "offset_grid"]
"""

DEFORM_CONV = """\
    import os

    import torch
    from torch.autograd import Function

    JIT = os.getenv("SR_JIT")
    if JIT == "True":
        from torch.utils.cpp_extension import load
        dcn_ext = load("dcn", sources=["src/dcn_cuda.cpp", "src/dcn_kernel.cu"])
    else:
        try:
            from . import dcn_ext
        except ImportError:
            pass


    class DeformConvFunction(Function):
        @staticmethod
        def forward(ctx, x, offset):
            if not x.is_cuda:
                raise NotImplementedError
            return dcn_ext.forward(x, offset)


    deform_conv = DeformConvFunction.apply


    class DeformConv(torch.nn.Module):
        def forward(self, x, offset):
            return deform_conv(x, offset)


    def offset_grid(x):
        return torch.zeros_like(x)
"""


KERNEL = """\
    #include <cuda.h>

    __global__ void dcn_im2col_kernel(const int n, const float* data, float* out) {
      out[threadIdx.x] = data[threadIdx.x];
    }
"""


# the node loads the package for a helper: the module's own lines run, its Function does not
def _dcn(tmp_path, needle: str, imports: str = "from .ops.dcn import offset_grid", call: str = "o = offset_grid(x)",
         rel: str = "ops/dcn/deform_conv.py"):
    files = {"ops/__init__.py": "", "ops/dcn/__init__.py": DCN_INIT, "ops/dcn/deform_conv.py": DEFORM_CONV,
             "ops/dcn/src/dcn_kernel.cu": KERNEL}
    return _at(tmp_path, files, rel, needle, imports, call)


def test_an_alias_and_a_reexport_nothing_reads_reach_nothing(tmp_path):
    assert _unreached(_dcn(tmp_path, "if not x.is_cuda:")), "the Function only an unread alias names"


def test_a_nested_guard_whose_names_only_unreached_code_reads_is_unreached(tmp_path):
    assert _unreached(_dcn(tmp_path, "dcn_ext = load("))


def test_a_cuda_source_only_unreached_code_names_is_unreached(tmp_path):
    assert _unreached(_dcn(tmp_path, "__global__", rel="ops/dcn/src/dcn_kernel.cu"))


def test_the_alias_the_node_calls_keeps_its_findings(tmp_path):
    found = _dcn(tmp_path, "if not x.is_cuda:", "from .ops.dcn import deform_conv", "x = deform_conv(x, x)")
    assert not _unreached(found), found
    use = ("from .ops.dcn import DeformConv", "x = DeformConv()(x, x)")
    assert not _unreached(_dcn(tmp_path, "dcn_ext = load(", *use))
    assert not _unreached(_dcn(tmp_path, "__global__", *use, rel="ops/dcn/src/dcn_kernel.cu"))


# --- a probe whose imported name nothing reads (heldout25: 3D-Pack Stable3DGen trellis/backend_config.py:59)

BACKENDS = """\
    def _try_import_spconv():
        try:
            import spconv  # probe
            return True
        except ImportError:
            return False


    def _spconv_version():
        try:
            import spconv  # version
            return spconv.__version__
        except ImportError:
            return None


    def available():
        return {"spconv": _try_import_spconv(), "version": _spconv_version()}
"""


def test_a_probe_whose_name_nothing_reads_is_info(tmp_path):
    files = {"backend_config.py": BACKENDS}
    found = _at(tmp_path, files, "backend_config.py", "import spconv  # probe",
                "from .backend_config import available", "b = available()")
    assert _unreached(found), found


def test_a_guarded_import_whose_name_is_read_keeps_its_warning(tmp_path):
    files = {"backend_config.py": BACKENDS}
    found = _at(tmp_path, files, "backend_config.py", "import spconv  # version",
                "from .backend_config import available", "b = available()")
    assert not _unreached(found), found


# --- a Triton kernel launched only by code nothing runs (heldout25: RMBG sam3/perflib/triton/connected_components.py)

KERNELS = """\
    import triton
    import triton.language as tl


    @triton.jit
    def _label_kernel(x_ptr, n: tl.constexpr):
        tl.store(x_ptr, tl.load(x_ptr))


    def label(x):
        _label_kernel[(1,)](x, 1)
        return x
"""


def test_a_triton_kernel_nothing_launches_is_unreached(tmp_path):
    assert _unreached(_at(tmp_path, {"kernels.py": KERNELS}, "kernels.py", "@triton.jit"))


def test_a_triton_kernel_the_node_launches_keeps_its_warning(tmp_path):
    found = _at(tmp_path, {"kernels.py": KERNELS}, "kernels.py", "@triton.jit", "from .kernels import label",
                "x = label(x)")
    assert not _unreached(found), found


# --- two vendored copies defining the same class; a training folder's configs (heldout25: RMBG sam2 / sam3)

TRANSFORMER = """\
    import torch


    class TwoWayTransformer(torch.nn.Module):
        def forward(self, x):
            torch.cuda.synchronize()
            return x
"""

CONFIG = """\
    model:
      _target_: {target}
"""


def _copies(tmp_path, config_rel: str, target: str, rel: str):
    files = {"sam2/__init__.py": "", "sam2/modeling/__init__.py": "", "sam2/modeling/transformer.py": TRANSFORMER,
             "sam3/__init__.py": "", "sam3/sam/__init__.py": "", "sam3/sam/transformer.py": TRANSFORMER,
             config_rel: CONFIG.format(target=target)}
    return _at(tmp_path, files, rel, "torch.cuda.synchronize()",
               "from sam2.modeling.transformer import TwoWayTransformer", "x = TwoWayTransformer()(x)")


def test_a_dotted_import_reaches_its_own_modules_class_only(tmp_path):
    assert _unreached(_copies(tmp_path, "sam3/train/configs/eval.yaml", "sam3.sam.transformer.TwoWayTransformer",
                              "sam3/sam/transformer.py"))
    assert not _unreached(_copies(tmp_path, "sam3/train/configs/eval.yaml", "sam3.sam.transformer.TwoWayTransformer",
                                  "sam2/modeling/transformer.py"))


def test_a_model_config_outside_a_training_folder_builds_its_class(tmp_path):
    assert not _unreached(_copies(tmp_path, "sam3/configs/model.yaml", "sam3.sam.transformer.TwoWayTransformer",
                                  "sam3/sam/transformer.py"))


# --- a training launcher the pack never runs (heldout25: 3D-Pack Hunyuan3D_2_1/hy3dshape/scripts/train_deepspeed.sh)

LAUNCHER = """\
    export NCCL_IB_TIMEOUT=22
    export NCCL_SOCKET_IFNAME=eth0
    deepspeed --num_gpus 8 main.py --config configs/train.yaml
"""

PACK_INIT = """\
    from .nodes import Node

    NODE_CLASS_MAPPINGS = {"Node": Node}
"""

NODES = """\
    import subprocess
    import torch


    class Node:
        FUNCTION = "run"

        def run(self, x):
            {call}
            return (x.cuda(),)
"""


def _launcher(tmp_path, rel: str, call: str = "pass") -> set[tuple[str, str]]:
    root = write_tree(tmp_path / "pack", {"__init__.py": PACK_INIT, "nodes.py": NODES.format(call=call), rel: LAUNCHER})
    run = run_static([root], jobs=1)
    line = _line(LAUNCHER, "NCCL_IB_TIMEOUT")
    found = {(f.severity, (f.data or {}).get("context") or "")
             for r in run.results if r.path == rel for f in r.findings if f.line == line}
    assert found, [(r.path, f.line, f.code) for r in run.results for f in r.findings]
    return found


def test_a_training_launcher_nothing_runs_is_info(tmp_path):
    assert _unreached(_launcher(tmp_path, "vendor/scripts/train_deepspeed.sh"))
    assert _unreached(_launcher(tmp_path, "vendor/scripts/run.sh"))     # a deepspeed launch, whatever its name


def test_a_launcher_the_node_runs_and_an_install_script_keep_their_warning(tmp_path):
    found = _launcher(tmp_path, "vendor/scripts/train_deepspeed.sh",
                      'subprocess.run(["bash", "vendor/scripts/train_deepspeed.sh"])')
    assert not _unreached(found), found
    assert not _unreached(_launcher(tmp_path, "install_train_env.sh"))
