"""Precision fixes of t20c (session 20, tuned on bench/precision/tuned_t20c, six ComfyUI node packs).

1. Backend words inside an upper-case word: ComfyUI's `INPUT_TYPES` holds the letters NPU, which made every node's
   option table an "NPU path" (mixlab's FishSpeech `"device": (["cuda", "cpu"], {"default": "cuda"})` was lowered to
   info with "already has an NPU path beside it: left as is", with no npu choice anywhere). `IS_XPU`, `NPUModel`,
   `HAS_NPU` keep naming their backend.
2. dtype restores: a cast to the dtype the enclosing `if` found the object already has chooses nothing (HiDiffusion's
   vendored diffusers SDXL pipeline: `needs_upcasting = self.vae.dtype == torch.float16 and ...`, then `if
   needs_upcasting: self.vae.to(dtype=torch.float16)` after the fp32 decode). A cast under `!=` forces the dtype and
   stays reported; so does the fp16 choice where the VAE is loaded.
3. A ComfyUI BOOLEAN input off by default (LVCDWrapper's `"use_xformers": ("BOOLEAN", {"default": False})`, which
   fix 1 stopped lowering to info) switches nothing on, like an argparse option whose default is off.

Code written afresh in the shape of those packs, not copied."""
from __future__ import annotations

from auditor.backend_words import backends_in_text
from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

PACK_INIT = """\
    from .nodes import LoadVQGAN

    NODE_CLASS_MAPPINGS = {"LoadVQGAN": LoadVQGAN}
"""

NODES = """\
    import torch


    class LoadVQGAN:
        FUNCTION = "load"

        @classmethod
        def INPUT_TYPES(s):
            return {
                "required": {
                    "device": (["cuda", "cpu"], {"default": "cuda"}),
                },
            }

        def load(self, device):
            return (torch.nn.Linear(4, 4).to(device),)
"""


def _findings(tmp_path, files: dict[str, str], path: str) -> list:
    root = write_tree(tmp_path / "pack", files)
    run = run_static([root], jobs=1)
    return [f for r in run.results if r.path == path for f in r.findings]


def test_input_types_names_no_backend():
    assert backends_in_text("INPUT_TYPES") == set()
    assert backends_in_text("LAMDA_SCALE") == set()


def test_backend_words_in_upper_case_names_are_kept():
    assert backends_in_text("IS_XPU") == {"xpu"}
    assert backends_in_text("HAS_NPU") == {"npu"}
    assert backends_in_text("NPUModel") == {"npu"}
    assert backends_in_text("is_torch_npu_available") == {"npu"}
    assert backends_in_text("MULTI_GPU") == {"cuda"}


def test_a_node_device_option_defaulting_to_cuda_is_not_an_npu_path(tmp_path):
    found = _findings(tmp_path, {"__init__.py": PACK_INIT, "nodes.py": NODES}, "nodes.py")
    line = _line(NODES, '"device": (["cuda", "cpu"]')
    at = [f for f in found if f.line == line and f.code == "NPU003"]
    assert at, "the CUDA default of the node's device option must be reported"
    assert all((f.data or {}).get("context") != "npu-path" for f in at)
    assert all(f.severity == "error" for f in at)


PIPELINE = """\
    import torch
    from diffusers import AutoencoderKL


    def load_vae(path):
        return AutoencoderKL.from_single_file(path, torch_dtype=torch.float16)


    class Pipeline:
        def decode(self, latents):
            needs_upcasting = self.vae.dtype == torch.float16 and self.vae.config.force_upcast
            if needs_upcasting:
                self.upcast_vae()
                latents = latents.to(next(iter(self.vae.post_quant_conv.parameters())).dtype)
            image = self.vae.decode(latents / self.vae.config.scaling_factor, return_dict=False)[0]
            # cast back to fp16 if needed
            if needs_upcasting:
                self.vae.to(dtype=torch.float16)
            return image


    def double_swish(x, y):
        if x.dtype == torch.float16 or torch.is_autocast_enabled():
            y = y.to(torch.float16)
        return y


    def force_half(x):
        if x.dtype != torch.float16:
            x = x.half()
        return x
"""


def test_a_cast_back_to_the_tested_dtype_is_not_a_choice(tmp_path):
    found = _findings(tmp_path, {"pipeline.py": PIPELINE}, "pipeline.py")
    lines = {f.line for f in found if f.code == "NPU202"}
    assert _line(PIPELINE, "self.vae.to(dtype=torch.float16)") not in lines
    assert _line(PIPELINE, "y = y.to(torch.float16)") not in lines


def test_the_choice_and_a_forcing_cast_stay_reported(tmp_path):
    found = _findings(tmp_path, {"pipeline.py": PIPELINE}, "pipeline.py")
    lines = {f.line for f in found if f.code == "NPU202"}
    assert _line(PIPELINE, "torch_dtype=torch.float16") in lines
    assert _line(PIPELINE, "x = x.half()") in lines


SWITCHES = """\
    class LoadLVCDModel:
        FUNCTION = "load"

        @classmethod
        def INPUT_TYPES(s):
            return {
                "required": {
                    "use_xformers": ("BOOLEAN", {"default": False}),
                },
            }


    class LoadOnByDefault:
        FUNCTION = "load"

        @classmethod
        def INPUT_TYPES(s):
            return {"required": {"use_xformers": ("BOOLEAN", {"default": True})}}
"""


def test_a_node_switch_off_by_default_is_not_switched_on(tmp_path):
    # 3. ComfyUI's `("BOOLEAN", {"default": False})` widget is set by its default, like an argparse option's
    found = _findings(tmp_path, {"nodes.py": SWITCHES}, "nodes.py")
    lines = {f.line: f.severity for f in found if f.code == "NPU357"}
    assert _line(SWITCHES, '"use_xformers": ("BOOLEAN", {"default": False})') not in lines
    assert lines.get(_line(SWITCHES, '{"use_xformers": ("BOOLEAN", {"default": True})}')) == "warning"
