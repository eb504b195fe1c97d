"""Precision fix of pd19 (session 21, tuned on heldout24's labels): code a ComfyUI node pack never reaches, after the
draw. In a node pack (auditor/static/unreached_defs.py): a guarded optional import whose every read is unreached is
info (the lead's decision 1; ID_Animator's `if is_xformers_available(): import xformers`); the body of `if self.X:`
where the pack sets X only to a false constant, and what only such bodies call, is unreached (ID_Animator's
`_use_memory_efficient_attention_xformers`); a vendored package's ops that only its setup.py and its own files name
are not loaded, and a loader in a training script nothing imports loads nothing (Hallo2's basicsr); `torch.jit.load`
is torch's, not the pack's `def load` (YoloWorld-EfficientSAM); a pipeline's `enable_sequential_cpu_offload` nothing
calls is unreached (ID_Animator). Each case has a control that keeps its severity.

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from tests.test_precision_pd18 import _at, _unreached

# --- a guarded optional import whose uses are unreached; a flag nothing turns on (heldout24: ID_Animator)

MOTION = """\
    import torch.nn as nn
    from diffusers.utils import is_xformers_available

    if is_xformers_available():
        import xformers
        import xformers.ops
    else:
        xformers = None


    class TemporalAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self._use_memory_efficient_attention_xformers = False

        def forward(self, q):
            if self._use_memory_efficient_attention_xformers:
                return self._memory_efficient_attention_xformers(q)
            return q.softmax(-1)

        def _memory_efficient_attention_xformers(self, q):
            return xformers.ops.memory_efficient_attention(q, q, q)
    {extra}
"""

USE = "from .motion import TemporalAttention"
CALL = "x = TemporalAttention()(x)"
SETTER = """
    def enable_xformers(model):
        for m in model.modules():
            m._use_memory_efficient_attention_xformers = True
"""


def test_a_flag_set_only_false_leaves_its_branch_and_the_guarded_import_unreached(tmp_path):
    src = MOTION.format(extra="")
    for needle in ("if is_xformers_available():", "import xformers.ops", "xformers.ops.memory_efficient_attention"):
        found = _at(tmp_path, {"motion.py": src}, "motion.py", needle, USE, CALL)
        assert _unreached(found), (needle, found)


def test_a_flag_a_setter_in_code_nothing_calls_turns_on_stays_off(tmp_path):
    src = MOTION.format(extra=SETTER)
    found = _at(tmp_path, {"motion.py": src}, "motion.py", "xformers.ops.memory_efficient_attention", USE, CALL)
    assert _unreached(found), found


def test_a_flag_the_pack_turns_on_keeps_the_warnings(tmp_path):
    src = MOTION.format(extra=SETTER)
    for needle in ("import xformers.ops", "xformers.ops.memory_efficient_attention"):
        found = _at(tmp_path, {"motion.py": src}, "motion.py", needle,
                    "from .motion import TemporalAttention, enable_xformers",
                    "m = TemporalAttention(); enable_xformers(m); x = m(x)")
        assert any(sev == "warning" for sev, _ in found), (needle, found)


ATTENTION = """\
    import torch.nn as nn

    try:
        import xformers.ops
    except ImportError:
        xformers = None


    class Block(nn.Module):
        def forward(self, x):
            return x

        def set_use_memory_efficient_attention_xformers(self, valid):
            self.op = xformers.ops.MemoryEfficientAttentionFlashAttentionOp
"""


def test_a_guarded_import_read_only_in_an_untriggered_hook_is_unreached(tmp_path):
    found = _at(tmp_path, {"attention.py": ATTENTION}, "attention.py", "import xformers.ops",
                "from .attention import Block", "x = Block()(x)")
    assert _unreached(found), found


def test_a_guarded_import_read_where_the_pack_runs_keeps_its_warning(tmp_path):
    src = ATTENTION + """
    def has_xformers():
        return xformers is not None
"""
    found = _at(tmp_path, {"attention.py": src}, "attention.py", "import xformers.ops",
                "from .attention import Block, has_xformers", "x = Block()(x) if has_xformers() else x")
    assert any(sev == "warning" for sev, _ in found), found


# --- a vendored package's ops nothing loads (heldout24: Hallo2's basicsr)

SETUP = """\
    from setuptools import setup
    from torch.utils.cpp_extension import CUDAExtension


    def get_version():
        with open("version.py") as f:
            exec(compile(f.read(), "version.py", "exec"))
        return locals()["__version__"]


    def make_cuda_ext(name, module, sources):
        return CUDAExtension(name=f"{module}.{name}", sources=sources)


    setup(version=get_version(), ext_modules=[make_cuda_ext("upfirdn2d_ext", "basicsr.ops.upfirdn2d", ["a.cu"])])
"""

UPFIRDN = """\
    import torch
    from torch.autograd import Function

    try:
        from . import upfirdn2d_ext
    except ImportError:
        upfirdn2d_ext = None


    class UpFirDn2d(Function):
        @staticmethod
        def forward(ctx, x):
            return upfirdn2d_ext.upfirdn2d(x, torch.ones(1).cuda())


    def upfirdn2d(x):
        return UpFirDn2d.apply(x)
"""

TRAIN = """\
    import importlib.util


    def import_filename(filename):
        spec = importlib.util.spec_from_file_location("mymodule", filename)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


    if __name__ == "__main__":
        cfg = import_filename("configs/train.py").cfg
"""

OPS = {"basicsr/setup.py": SETUP, "basicsr/__init__.py": "", "basicsr/ops/__init__.py": "",
       "basicsr/ops/upfirdn2d/__init__.py": "from .upfirdn2d import upfirdn2d\n",
       "basicsr/ops/upfirdn2d/upfirdn2d.py": UPFIRDN, "scripts/train.py": TRAIN}


def test_ops_only_setup_py_and_their_own_package_name_are_unreached(tmp_path):
    found = _at(tmp_path, OPS, "basicsr/ops/upfirdn2d/upfirdn2d.py", "torch.ones(1).cuda()")
    assert _unreached(found), found


def test_ops_a_node_imports_keep_their_error(tmp_path):
    found = _at(tmp_path, OPS, "basicsr/ops/upfirdn2d/upfirdn2d.py", "torch.ones(1).cuda()",
                "from .basicsr.ops.upfirdn2d import upfirdn2d", "x = upfirdn2d(x)")
    assert any(sev == "error" for sev, _ in found), found


# --- a helper imported and never called; torch.jit.load is not it (heldout24: YoloWorld-EfficientSAM)

SAM = """\
    import torch


    def load(device):
        if device.type == "cuda":
            return torch.jit.load("sam_gpu.jit")
        return torch.jit.load("sam_cpu.jit")
"""


def test_a_helper_imported_and_never_called_is_unreached(tmp_path):
    found = _at(tmp_path, {"sam.py": SAM}, "sam.py", 'if device.type == "cuda":', "import torch\n    from .sam import load",
                'x = torch.jit.load("m.jit")(x)')
    assert _unreached(found), found


def test_the_helper_called_keeps_its_error(tmp_path):
    found = _at(tmp_path, {"sam.py": SAM}, "sam.py", 'if device.type == "cuda":', "from .sam import load",
                "x = load(x.device)(x)")
    assert any(sev == "error" for sev, _ in found), found


# --- a pipeline's CPU offload nothing calls (heldout24: ID_Animator pipeline_animation.py)

PIPELINE = """\
    import torch
    from diffusers import DiffusionPipeline


    class AnimationPipeline(DiffusionPipeline):
        def enable_sequential_cpu_offload(self, gpu_id=0):
            device = torch.device(f"cuda:{gpu_id}")
            return device

        def __call__(self, x):
            return x
"""


def test_a_cpu_offload_nothing_calls_is_unreached(tmp_path):
    found = _at(tmp_path, {"pipeline.py": PIPELINE}, "pipeline.py", 'torch.device(f"cuda:{gpu_id}")',
                "from .pipeline import AnimationPipeline", "x = AnimationPipeline()(x)")
    assert _unreached(found), found


def test_a_cpu_offload_the_node_turns_on_keeps_its_error(tmp_path):
    found = _at(tmp_path, {"pipeline.py": PIPELINE}, "pipeline.py", 'torch.device(f"cuda:{gpu_id}")',
                "from .pipeline import AnimationPipeline",
                "p = AnimationPipeline(); p.enable_sequential_cpu_offload(); x = p(x)")
    assert any(sev == "error" for sev, _ in found), found
