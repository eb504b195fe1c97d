"""llama.cpp's own flash_attn option (pd56, session 32; heldout35's ComfyUI_VLM_nodes nodes/runtime.py): in a file
that drives llama.cpp the string names the engine's backend-neutral switch, not a CUDA flash-attention package."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

RUNTIME = """\
    import importlib

    import torch


    class LlamaHandle:
        def __init__(self, model_path, flash_attention="Auto", n_gpu_layers=-1):
            self.model_path = model_path
            self.flash_attention = flash_attention
            self.n_gpu_layers = n_gpu_layers

        def load(self):
            llama_cpp = importlib.import_module("llama_cpp")
            use_gpu = torch.cuda.is_available() and self.n_gpu_layers != 0
            kwargs = {
                "model_path": self.model_path,
                "n_gpu_layers": self.n_gpu_layers if use_gpu else 0,
                "flash_attn": self.flash_attention != "Disabled",
            }
            try:
                self._llm = llama_cpp.Llama(**kwargs)
            except Exception as exc:
                if self.flash_attention == "Auto" and kwargs.get("flash_attn") and "flash" in str(exc):
                    kwargs["flash_attn"] = False
                    self._llm = llama_cpp.Llama(**kwargs)
                else:
                    raise


    def llama_runtime_input_types():
        return {"flash_attention": (["Auto", "Enabled", "Disabled"], {"default": "Auto"})}
    """

TRANSFORMERS = """\
    import torch
    from transformers import AutoModelForCausalLM


    def load(path, flash_attn=True):
        kwargs = {"torch_dtype": torch.bfloat16}
        if flash_attn:
            kwargs["attn_implementation"] = "flash_attention_2"
        return AutoModelForCausalLM.from_pretrained(path, **kwargs).to("cuda")


    CONFIG = {"flash_attn": True, "llama_cpp_fallback": False}
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_llama_cpp_flash_option_is_no_flash_attn_choice(engine):
    found = codes_by_line(engine, RUNTIME, "nodes/runtime.py")
    for needle in ('"flash_attn": self', 'kwargs.get("flash_attn")', 'kwargs["flash_attn"] = False',
                   '{"flash_attention"'):
        assert "NPU386" not in found.get(line_of(RUNTIME, needle), set()), needle
    assert "NPU002" in found.get(line_of(RUNTIME, "torch.cuda.is_available()"), set())   # control: CUDA stays


def test_transformers_flash_choice_keeps_its_finding(engine):
    # control: a transformers loader (it names attn_implementation) keeps NPU386 on its own "flash_attn" key
    found = codes_by_line(engine, TRANSFORMERS, "models/loader.py")
    assert "NPU386" in found.get(line_of(TRANSFORMERS, '"flash_attention_2"'), set())
    assert "NPU386" in found.get(line_of(TRANSFORMERS, 'CONFIG = {"flash_attn"'), set())
