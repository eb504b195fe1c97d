"""Calls in a try body after an optional import of a CUDA-only package (t33c, session 33; dev33's sdkit ControlNet and
Stable Diffusion loaders): `try: import xformers` then `pipe.enable_xformers_memory_efficient_attention()` under a
bare `except: pass` runs only once the import succeeded, which it never does on Ascend; the call is a guarded path
(warning), like a use of the guarded name itself."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import findings_by_line, line_of

# sdkit/models/model_loader/controlnet.py (the same shape in stable_diffusion/__init__.py for the pipeline)
GUARDED = """\
    import torch

    from sdkit import Context


    def load_model(context: Context, **kwargs):
        controlnet = ControlNetModel.from_single_file(kwargs["model_path"])
        controlnet = controlnet.to(context.torch_device, torch.float16 if context.half_precision else torch.float32)
        controlnet.set_attention_slice(1)

        try:
            import xformers

            controlnet.enable_xformers_memory_efficient_attention()
        except:
            pass

        return controlnet
    """

# control: the handler gives up (no path without xformers)
RERAISED = """\
    def load_model(pipe):
        try:
            import xformers

            pipe.enable_xformers_memory_efficient_attention()
        except ImportError as e:
            print("xformers is required")
            raise e
        return pipe
    """

# control: the call comes before the import, so it runs on Ascend too
BEFORE = """\
    def load_model(pipe):
        try:
            pipe.enable_xformers_memory_efficient_attention()
            import xformers
        except ImportError:
            pass
        return pipe
    """

# control: the try imports only a package Ascend has; the xformers switch there is unguarded
OTHER_IMPORT = """\
    def load_model(pipe):
        try:
            import safetensors

            pipe.enable_xformers_memory_efficient_attention()
        except ImportError:
            pass
        return pipe
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _severities(engine, src: str, needle: str) -> dict[str, str]:
    return {f.code: f.severity for f in findings_by_line(engine, src, "sdkit/models/model_loader/controlnet.py")
            .get(line_of(src, needle), [])}


def test_a_call_after_the_optional_import_in_the_same_try_is_a_warning(engine):
    found = _severities(engine, GUARDED, "enable_xformers_memory_efficient_attention()")
    assert found.get("NPU334") == "warning"
    assert _severities(engine, GUARDED, "import xformers").get("NPU348") == "warning"


def test_a_handler_that_raises_keeps_the_error(engine):
    assert _severities(engine, RERAISED, "enable_xformers_memory_efficient_attention()").get("NPU334") == "error"


def test_a_call_before_the_import_keeps_the_error(engine):
    assert _severities(engine, BEFORE, "enable_xformers_memory_efficient_attention()").get("NPU334") == "error"


def test_a_try_without_a_cuda_only_import_keeps_the_error(engine):
    assert _severities(engine, OTHER_IMPORT, "enable_xformers_memory_efficient_attention()").get("NPU334") == "error"
