"""Precision fixes of t11n (session 11): tests, simulators and fakes (false classes of heldout3 .. heldout9, all
TUNED ON), fixed by structure. The code below is written afresh in the shape of the classes, not copied from the
bench trees; each fix has a control that keeps the finding.

- a dtype handed to a fake: the keywords of a mock (`MagicMock(dtype=...)`, `patch.object(..., return_value=...)`,
  `mocker.patch(..., return_value=...)`), a value assigned to a fake's `return_value` / `side_effect`, and, in a
  test module, a `SimpleNamespace(...)` standing in for a model config: what the fake reports, no device computes
  in it. `patch(target, new)` puts `new` where real code reads it: kept;
- the meta device places nothing (shape-only tensors of a simulator or a cost model), nor does a quoted `device=`
  that names no device type (a hardware profile's name): a test function with only those is a host test.
"""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from auditor.static.host_scopes import _PLACES
from tests.static_snippets import findings_by_line


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _line(src: str, needle: str) -> int:
    """The 1-based line of the snippet holding `needle` (once)."""
    import textwrap

    hits = [i for i, text in enumerate(textwrap.dedent(src).splitlines(), 1) if needle in text]
    assert len(hits) == 1, needle
    return hits[0]


def _precision(found: dict, line: int) -> list[str]:
    return [f.code for f in found.get(line, []) if f.category == "precision"]


# -- 1. dtypes handed to fakes ----------------------------------------------------------------------------------

FAKES = """\
    from types import SimpleNamespace
    from unittest import mock
    from unittest.mock import MagicMock, patch

    import torch

    from perfsim.cli import generate as generate_mod
    from perfsim.runtime import run_generate


    def _fake_model_config():
        return SimpleNamespace(
            num_hidden_layers=2,
            hidden_size=64,
            dtype=torch.float16,
            hf_config=SimpleNamespace(model_type="llama"),
        )


    class TestGenerate:

        def test_generate_uses_dtype_from_flag(self, tmp_path):
            fake_backend = MagicMock(name="backend", compute_dtype=torch.bfloat16)
            fake_backend.profile.return_value = torch.float16
            with patch.object(generate_mod, "str_to_dtype", return_value=torch.float16), \\
                    mock.patch("perfsim.cli.generate.get_backend", return_value=fake_backend):
                result = run_generate(_fake_model_config(), out_dir=tmp_path)
            assert result.ok

        def test_generate_with_patched_default(self, tmp_path):
            with patch("perfsim.cli.generate.DEFAULT_DTYPE", torch.bfloat16):
                result = run_generate(_fake_model_config(), out_dir=tmp_path, device="npu:0")
            assert result.ok

        def test_real_tensor_on_device(self):
            x = torch.randn(4, 8, dtype=torch.bfloat16, device="npu")
            assert x.dtype == torch.bfloat16
"""


def test_dtypes_handed_to_fakes_choose_nothing(engine):
    found = findings_by_line(engine, FAKES, "tests/cli/test_generate.py")
    assert _precision(found, _line(FAKES, "dtype=torch.float16,")) == []                 # SimpleNamespace config
    assert _precision(found, _line(FAKES, "compute_dtype=torch.bfloat16")) == []         # MagicMock attribute
    assert _precision(found, _line(FAKES, "profile.return_value")) == []                 # fake's return value
    assert _precision(found, _line(FAKES, '"str_to_dtype", return_value')) == []         # patch.object keyword


def test_values_real_code_reads_keep_their_hint(engine):
    found = findings_by_line(engine, FAKES, "tests/cli/test_generate.py")
    # patch(target, new): real code reads DEFAULT_DTYPE, in a test that runs on the NPU
    assert _precision(found, _line(FAKES, '"perfsim.cli.generate.DEFAULT_DTYPE"')) == ["NPU201"]
    assert _precision(found, _line(FAKES, 'device="npu")')) == ["NPU201"]


def test_simple_namespace_outside_tests_keeps_its_hint(engine):
    """Outside a test module a SimpleNamespace is the project's own config object: kept."""
    src = """\
        from types import SimpleNamespace

        import torch


        def default_model_config(hidden_size):
            return SimpleNamespace(hidden_size=hidden_size, dtype=torch.bfloat16)
    """
    found = findings_by_line(engine, src, "perfsim/config.py")
    assert _precision(found, _line(src, "dtype=torch.bfloat16")) == ["NPU201"]


# -- 2. the meta device and hardware-profile names place nothing -------------------------------------------------

def test_meta_and_profile_names_do_not_place():
    assert not _PLACES.search('query = torch.zeros((1, 2, 4, 3), device="meta")')
    assert not _PLACES.search("x.to('meta')")
    assert not _PLACES.search('torch.device("meta")')
    assert not _PLACES.search('run(model, device="ATLAS_800_A3_752T_128G_DIE")')
    assert _PLACES.search('torch.zeros(2, device="npu:0")')
    assert _PLACES.search('torch.zeros(2, device="cuda")')
    assert _PLACES.search("torch.zeros(2, device=dev)")
    assert _PLACES.search('torch.zeros(2, device="0")')


SIMULATOR_TESTS = """\
    import torch

    from costmodel.ops import attention_cost


    def test_attention_cost_on_meta_tensors():
        query = torch.empty(1, 8, 128, 64, device="meta")
        key = torch.empty(1, 8, 128, 64, device="meta")
        cost = attention_cost(query.to(torch.bfloat16), key, key, device="ATLAS_800_A2_64G")
        assert cost.flops > 0


    def test_attention_runs_on_npu():
        query = torch.randn(1, 8, 128, 64, dtype=torch.bfloat16).npu()
        assert query.is_npu
"""


def test_meta_device_test_is_a_host_test(engine):
    found = findings_by_line(engine, SIMULATOR_TESTS, "tests/test_attention_cost.py")
    assert _precision(found, _line(SIMULATOR_TESTS, "cost = attention_cost(")) == []
    assert _precision(found, _line(SIMULATOR_TESTS, ".npu()")) == ["NPU201"]


# -- 3. a test class that never places anything: its setUp's mock weights are host values ------------------------

QUANT_TESTS = """\
    import unittest
    from unittest.mock import patch

    import torch

    from diffkit.quantization import quantize, W8A8QuantLinear


    class WeightStore:
        def __init__(self, tensors):
            self.tensors = tensors

        def get_tensor(self, key):
            return self.tensors[key]


    class TestQuantizeLayers(unittest.TestCase):
        def setUp(self):
            self.weights = WeightStore({
                "0.input_scale": torch.ones(1, dtype=torch.float16),
                "0.weight": torch.ones(64, 128, dtype=torch.int8),
            })

        def test_quantize_replaces_linear(self):
            model = torch.nn.Sequential(torch.nn.Linear(128, 64))
            quantize(model, self.weights)
            self.assertIsInstance(model[0], W8A8QuantLinear)


    class TestQuantLinearOnDevice(unittest.TestCase):
        def setUp(self):
            self.weights = WeightStore({
                "0.input_scale": torch.ones(1, dtype=torch.bfloat16),
                "0.weight": torch.ones(64, 128, dtype=torch.int8),
            })

        def test_forward(self):
            layer = W8A8QuantLinear(128, 64, weights=self.weights).npu()
            out = layer(torch.randn(2, 128).npu())
            self.assertEqual(out.shape, (2, 64))
"""


def test_host_test_class_setup_weights_choose_nothing(engine):
    found = findings_by_line(engine, QUANT_TESTS, "tests/quantization/test_quantize.py")
    assert _precision(found, _line(QUANT_TESTS, "dtype=torch.float16),")) == []
    # the class whose test moves the layer to the NPU keeps its setUp's hint
    assert _precision(found, _line(QUANT_TESTS, "dtype=torch.bfloat16),")) == ["NPU201"]
