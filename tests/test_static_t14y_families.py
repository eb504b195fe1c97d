"""t14y (issue 14, session 15, tuned on the fresh sample tuned_t14y): torch handed out by a loader call instead of
`import torch` (txtai's `torch = library.torch()`, RLlib's `torch, nn = try_import_torch()`), so the CUDA APIs
reached through that name resolve; flash-attention switches that default on under the short names lucidrains-style
models use (`flash_attn = True`, `flash = True`, NPU825, rules/attention_flash_switch_default_on.yaml)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def codes_by_line(src: str, name: str = "models.py") -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in snippet_findings(ENGINE, src, name):
        out.setdefault(f.line, set()).add(f.code)
    return out


TXTAI_MODELS = '''\
import os

from ..util import Library

library = Library()
torch = library.torch()


class Models:
    @staticmethod
    def acceleratorcount():
        return max(torch.cuda.device_count(), int(Models.hasaccelerator()))

    @staticmethod
    def hasaccelerator():
        return torch.cuda.is_available() or os.environ.get("FORCE_ACCEL") == "1"
'''


def test_torch_from_a_library_helper_resolves_its_cuda_calls():
    lines = codes_by_line(TXTAI_MODELS)
    assert "NPU002" in lines.get(12, set())     # torch.cuda.device_count()
    assert "NPU002" in lines.get(16, set())     # torch.cuda.is_available()


RLLIB_POLICY = '''\
from ray.rllib.utils.framework import try_import_torch

torch, nn = try_import_torch()


def to_device(batch):
    if torch.cuda.is_available():
        return {k: v.cuda() for k, v in batch.items()}
    return batch
'''


def test_torch_from_try_import_torch_resolves_its_cuda_calls():
    assert "NPU002" in codes_by_line(RLLIB_POLICY).get(7, set())


NOT_TORCH = '''\
class Backend:
    def torch(self, name):
        return name


backend = Backend()
torch = backend.torch("shim")


def probe():
    return torch.cuda.is_available()
'''


def test_a_helper_called_with_an_argument_is_not_the_torch_loader():
    # `backend.torch("shim")` returns whatever the helper makes of its argument: not bound to torch
    assert "NPU002" not in codes_by_line(NOT_TORCH).get(11, set())
