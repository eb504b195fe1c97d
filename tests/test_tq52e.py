"""tq52e (session 52, TUNED on heldout68 trees 5-8): autocasts that change nothing on Ascend."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _findings


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _sev(by_line, line, code):
    return [f.severity for f in by_line.get(line, []) if f.code == code]


def test_fp32_cuda_autocast_is_info_and_a_half_one_keeps_its_error(engine):
    # a text-image model's inference helpers: one region asks float32 (casts nothing down), one float16
    src = """\
        import torch

        model = torch.hub.load("facebookresearch/dinov3", "dinov3_vitl16_dinotxt_tet1280d20h24l")


        def encode_texts(tokens):
            with torch.autocast("cuda", dtype=torch.float):
                return model.encode_text(tokens)


        def encode_images(images):
            with torch.autocast(device_type="cuda", dtype=torch.float32):
                return model.encode_image(images)


        def encode_half(images):
            with torch.autocast("cuda", dtype=torch.float16):
                return model.encode_image(images)


        def encode_as(images, dtype):
            with torch.autocast("cuda", dtype=dtype):
                return model.encode_image(images)
        """
    by_line = _findings(engine, src)
    assert _sev(by_line, 7, "NPU003") == ["info"], by_line.get(7)
    assert by_line[7][0].data.get("context") == "fp32-autocast"
    assert _sev(by_line, 12, "NPU003") == ["info"], by_line.get(12)
    # the control: a half-precision region, and one whose dtype the caller picks, keep the error
    assert _sev(by_line, 17, "NPU003") == ["error"], by_line.get(17)
    assert _sev(by_line, 22, "NPU003") == ["error"], by_line.get(22)
