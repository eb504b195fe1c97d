"""A dtype named alone as a statement only asks whether this torch has it (t33c, session 33; heldout35's
ComfyUI_ExtraModels `T5/nodes.py`, also its `Gemma/nodes.py` and copies found by code search): `try: torch.float8_e5m2`
/ `except AttributeError: print(...)` / `else: dtypes += ["FP8 E4M3", "FP8 E5M2"]` adds options to a dropdown; the
option the user picks becomes a dtype elsewhere, where it is reported."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

# ComfyUI_ExtraModels T5/nodes.py (city96)
PROBE = """\
    import torch

    dtypes = [
        "default",
        "auto (comfy)",
        "FP32",
        "FP16",
    ]
    try: torch.float8_e5m2
    except AttributeError: print("Torch version too old for FP8")
    else: dtypes += ["FP8 E4M3", "FP8 E5M2"]

    try:
        torch.float8_e4m3fn
        HAS_FP8 = True
    except AttributeError:
        HAS_FP8 = False
    """

# controls: the dtype kept in a name, or used
KEPT = """\
    import torch

    try:
        _float8_e4m3fn = torch.float8_e4m3fn
    except AttributeError:
        _float8_e4m3fn = None


    def cast(weight):
        return weight.to(torch.float8_e5m2)
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


@pytest.mark.parametrize("needle", ["try: torch.float8_e5m2", "    torch.float8_e4m3fn\n"])
def test_a_dtype_evaluated_alone_is_no_finding(engine, needle):
    found = codes_by_line(engine, PROBE, "T5/nodes.py")
    line = line_of(PROBE, needle.rstrip("\n")) if not needle.endswith("\n") else \
        next(i for i, t in enumerate(PROBE.splitlines(), 1) if t.strip() == "torch.float8_e4m3fn")
    assert "NPU203" not in found.get(line, set())


def test_a_dtype_stored_or_used_keeps_its_hint(engine):
    found = codes_by_line(engine, KEPT, "utils/fp8.py")
    assert "NPU203" in found.get(line_of(KEPT, "_float8_e4m3fn = torch.float8_e4m3fn"), set())
    assert "NPU203" in found.get(line_of(KEPT, "weight.to(torch.float8_e5m2)"), set())
