"""Precision fixes of pd15 (issue 11, TUNED ON heldout22: its false rows were read to find these classes; heldout22 is
no longer a blind measure). The snippets are written for these tests, shaped like the code the rows came from (a
ComfyUI node pack, a model-merging web UI extension); no bench file is copied."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_an_upper_case_availability_flag_read_from_a_module_guards_the_xformers_switch(engine):
    # ComfyUI's comfy.model_management sets XFORMERS_IS_AVAILABLE only where `import xformers` succeeds
    src = """\
        import comfy.model_management as mm

        def load(self, reference_unet, denoising_unet):
            if mm.XFORMERS_IS_AVAILABLE:
                reference_unet.enable_xformers_memory_efficient_attention()
            denoising_unet.enable_xformers_memory_efficient_attention()
        """
    found = findings_by_line(engine, src)
    guarded = [f for f in found[line_of(src, "reference_unet.enable")] if f.code == "NPU334"]
    bare = [f for f in found[line_of(src, "denoising_unet.enable")] if f.code == "NPU334"]
    assert [f.severity for f in guarded] == ["warning"]
    assert [f.severity for f in bare] == ["error"]
