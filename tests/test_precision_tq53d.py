"""Decision (w) (the lead's, session 53, docs/precision.md; tq53d): an enabled CUDA autocast region is a warning. On
a host without CUDA, torch.amp.autocast warns "CUDA is not available ... Disabling autocast" and sets enabled=False
(torch/amp/autocast_mode.py; torch.cuda.amp.autocast calls the same class), so the region runs in the tensors' own
dtypes: slower and larger, not wrong. Each spelling (torch.cuda.amp.autocast as a call, a decorator, imported, under
an alias; the "cuda" of torch.autocast / torch.amp.autocast) is a warning that keeps its fix;
controls: a disabled region keeps its reading, the other torch.cuda.amp names and the import keep their error, and a
call of a name bound only behind a CUDA availability test stays an error (NameError on Ascend: pyserini's
Aggretriever). Code written afresh in the shape of training and encoding loops, not copied."""
from __future__ import annotations

import pytest

from auditor.fix import fix_bytes
from auditor.rules import rules_by_code
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    return StaticEngine(load_rules())


def _at(engine, src, needle, rel="train.py"):
    """(code, severity) of the NPU003 / NPU012 findings on the line of `src` holding `needle`."""
    return {(f.code, f.severity) for f in findings_by_line(engine, src, rel).get(line_of(src, needle), [])
            if f.code in ("NPU003", "NPU012")}


TRAIN = """\
    import torch
    import torch.cuda.amp as tamp
    from torch.cuda.amp import autocast
    from torch.cuda.amp import autocast as amp_autocast


    def train_epoch(model, loader, optimizer, scaler, use_fp16=True):
        for batch in loader:
            with torch.cuda.amp.autocast(dtype=torch.float16):
                loss = model(batch)
            with autocast(enabled=use_fp16):
                loss = loss + model(batch)
            with amp_autocast():
                loss = loss + model(batch)
            with tamp.autocast():
                loss = loss + model(batch)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss + model(batch)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = loss + model(batch)
            with torch.amp.autocast("cuda"):
                loss = loss + model(batch)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


    @torch.cuda.amp.autocast()
    def forward(model, x):
        return model(x)


    @torch.cuda.amp.custom_fwd
    def scaled(ctx, x):
        return x


    def make_scaler():
        return torch.cuda.amp.GradScaler()


    class Trainer:
        def __init__(self, bf16):
            self.ctx = torch.cuda.amp.autocast if bf16 else None
"""


@pytest.mark.parametrize("needle, code", [
    ("with torch.cuda.amp.autocast(dtype=", "NPU012"),
    ("with autocast(enabled=use_fp16)", "NPU012"),
    ("with amp_autocast()", "NPU012"),
    ("with tamp.autocast()", "NPU012"),
    ('with torch.autocast("cuda"', "NPU003"),
    ('with torch.autocast(device_type="cuda"', "NPU003"),
    ('with torch.amp.autocast("cuda")', "NPU003"),
    ("@torch.cuda.amp.autocast()", "NPU012"),
])
def test_an_enabled_cuda_autocast_region_is_a_warning(engine, needle, code):
    assert _at(engine, TRAIN, needle) == {(code, "warning")}


def test_the_warning_says_what_to_write(engine):
    found = [f for f in findings_by_line(engine, TRAIN, "train.py")[line_of(TRAIN, 'torch.autocast("cuda"')]
             if f.code == "NPU003"]
    assert found and all('torch.autocast("npu", ...)' in f.message and f.data["context"] == "enabled-cuda-autocast"
                         for f in found)


@pytest.mark.parametrize("needle", [
    "import autocast as amp_autocast",            # the import keeps its severity
    "@torch.cuda.amp.custom_fwd",
    # (the scaler, whose only partners are these CUDA autocasts, is a warning since decision (x): tests/test_tq56a.py)
])
def test_other_torch_cuda_amp_names_and_the_import_keep_their_error(engine, needle):
    assert ("NPU012", "error") in _at(engine, TRAIN, needle)


DISABLED = """\
    import torch


    def rope(x, freqs):
        with torch.cuda.amp.autocast(enabled=False):
            x = x.float() * freqs
        with torch.autocast("cuda", enabled=False):
            return x * freqs


    if __name__ == "__main__":
        print(rope(torch.ones(2), torch.ones(2)))
"""


@pytest.mark.parametrize("needle, code", [
    ("with torch.cuda.amp.autocast(enabled=False)", "NPU012"),
    ('with torch.autocast("cuda", enabled=False)', "NPU003"),
])
def test_a_disabled_region_keeps_its_reading(engine, needle, code):
    # marked for the tree pass (lower_disabled_autocasts), never lowered to a warning by the file pass
    found = [f for f in findings_by_line(engine, DISABLED, "rope.py")[line_of(DISABLED, needle)] if f.code == code]
    assert found and all(f.severity == "error" and f.data.get("context") != "enabled-cuda-autocast" for f in found)


GATED_IMPORT = """\
    import torch

    if torch.cuda.is_available():
        from torch.cuda.amp import autocast


    class DocumentEncoder:
        def encode(self, inputs, fp16=False):
            if fp16:
                with autocast():
                    with torch.no_grad():
                        outputs = self.model(**inputs)
            else:
                outputs = self.model(**inputs)
            return outputs
"""

GATED_WITH_FALLBACK = """\
    import torch

    if torch.cuda.is_available():
        from torch.cuda.amp import autocast
    else:
        from contextlib import nullcontext as autocast


    def encode(model, inputs):
        with autocast():
            return model(**inputs)
"""


def test_a_name_bound_only_behind_a_cuda_test_stays_an_error(engine):
    assert _at(engine, GATED_IMPORT, "with autocast():", "encode.py") == {("NPU012", "error")}
    # the import under the gate keeps its own (guarded) severity
    assert _at(engine, GATED_IMPORT, "from torch.cuda.amp import autocast", "encode.py") == {("NPU012", "warning")}


def test_a_name_with_a_binding_outside_the_gate_is_a_warning(engine):
    assert _at(engine, GATED_WITH_FALLBACK, "with autocast():", "encode.py") == {("NPU012", "warning")}


def test_the_fix_still_rewrites_the_region(engine):
    src = "import torch\n\n\ndef step(model, x):\n    with torch.cuda.amp.autocast():\n        return model(x)\n"
    result = fix_bytes(src.encode(), "step.py", engine, rules_by_code())
    assert result.error is None and "with torch.npu.amp.autocast():" in result.fixed_text
