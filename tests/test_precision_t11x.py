"""t11x (issue 11, session 14; TUNED on heldout15 after its blind run): host values, test stand-ins, dtype names and
predicates (auditor/static/value_reads.py, host_scopes._HostFlow, requirements._own_extras). The code below is
written afresh in the shapes met there (a generate loop's position tensor, a quantised state-dict unit test, a
meta-tracing stub, a scheduler test with mocked free memory, an exporter's dtype name, a DataType enum predicate);
each fix has a control that keeps the finding."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of, write_tree


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _codes(found: dict, line: int) -> dict[str, str]:
    return {f.code: f.severity for f in found.get(line, [])}


# -- 1. host values: tensors built on the host, through torch functions and arithmetic ---------------------------

GENERATE = """\
import torch


def generate(model, prompt_tokens, max_len, mask):
    last_pos = torch.tensor([len(p) - 1 for p in prompt_tokens], dtype=torch.int32)
    cur = torch.tensor([len(p) - 1 for p in prompt_tokens], device="cuda")
    while True:
        logits = model(last_pos)
        last_pos = last_pos + 1
        cur = cur + 1
        mask[torch.arange(last_pos.shape[0]), last_pos] = 1
        if torch.max(last_pos).item() >= max_len:
            break
        if torch.max(cur).item() >= max_len:
            break
        if torch.argmax(logits).item() == 0:
            break
        thresh, _ = torch.kthvalue(logits.cpu(), 3)
        keep = logits >= thresh.item()
        for i in range(4):
            row = logits[i].detach().cpu().tolist()
"""


def test_a_reduction_of_a_host_position_tensor_reads_no_device(engine):
    found = findings_by_line(engine, GENERATE)
    assert "NPU703" not in _codes(found, line_of(GENERATE, "torch.max(last_pos).item()"))
    assert "NPU703" not in _codes(found, line_of(GENERATE, "thresh.item()"))
    # controls: a tensor placed on the device, and the model's output
    assert "NPU703" in _codes(found, line_of(GENERATE, "torch.max(cur).item()"))
    assert "NPU703" in _codes(found, line_of(GENERATE, "torch.argmax(logits).item()"))
    # the copy in the sync's own chain is the per-step device read
    assert "NPU703" in _codes(found, line_of(GENERATE, "logits[i].detach().cpu().tolist()"))


QUANT_TEST = """\
import unittest

import torch


class TestAdaptor(unittest.TestCase):
    def test_scale(self):
        weight = torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 1.0, 2.0]), 1.0, 0, torch.qint8)
        other = torch.quantize_per_channel(
            torch.randn(4, 4), torch.tensor([0.1, 0.2, 0.3, 0.4]), torch.tensor([0, 1, 2, 3]), 0, torch.qint8
        )
        assert weight is not None and other is not None

    def test_on_device(self):
        w = torch.quantize_per_tensor(torch.randn(4, device="cuda"), 1.0, 0, torch.qint8)
        assert w is not None


def stub(input, **kwargs):
    output = torch.unique_consecutive(torch.zeros_like(input, device="cpu"), **kwargs)
    return output.to("meta")


def real(input):
    return torch.unique_consecutive(input)
"""


def test_an_op_on_a_host_tensor_runs_on_the_host(coverage_engine):
    found = findings_by_line(coverage_engine, QUANT_TEST, "tests/unit/test_adaptor.py")
    assert "NPU502" not in _codes(found, line_of(QUANT_TEST, "torch.quantize_per_tensor(torch.tensor"))
    assert "NPU502" not in _codes(found, line_of(QUANT_TEST, "other = torch.quantize_per_channel("))
    stub = line_of(QUANT_TEST, "zeros_like(input, device=\"cpu\")")
    assert not {"NPU502", "NPU702"} & set(_codes(found, stub))
    # controls: the op on a device tensor, and on a parameter
    assert "NPU502" in _codes(found, line_of(QUANT_TEST, "torch.randn(4, device=\"cuda\")"))
    assert {"NPU502", "NPU702"} & set(_codes(found, line_of(QUANT_TEST, "torch.unique_consecutive(input)")))


# -- 2. test stand-ins ---------------------------------------------------------------------------------------------

SCHEDULER_TEST = """\
import torch

from pkg.scheduler import pick_device


def test_pick_most_free_device():
    d0 = torch.device("cuda:0")
    d1 = torch.device("cuda:1")
    initial_free = {d0: 40_000_000_000, d1: 80_000_000_000}
    assert pick_device([d0, d1], 1000, initial_free, {d0: 0, d1: 0}) == d1


def test_runs_on_the_device():
    d0 = torch.device("cuda:0")
    x = torch.ones(4, device=d0)
    assert pick_device([d0], 1000, {d0: x.numel()}, {d0: 0}) == d0
"""


def test_a_cuda_device_object_used_as_a_key_of_mocked_memory_is_a_stand_in(engine):
    found = findings_by_line(engine, SCHEDULER_TEST, "tests/test_scheduler.py")
    lines = SCHEDULER_TEST.splitlines()
    first = [i for i, t in enumerate(lines, 1) if 'torch.device("cuda:0")' in t]
    assert "NPU003" not in _codes(found, first[0])
    assert "NPU003" not in _codes(found, line_of(SCHEDULER_TEST, 'd1 = torch.device("cuda:1")'))
    # control: the test that allocates on the device
    assert "NPU003" in _codes(found, first[1])


IS_CUDA = """\
import torch

from pkg.helpers import tensors_to_device


def test_tensors_to_device_cpu():
    out = tensors_to_device(torch.randn(3), "cpu")
    assert not out.is_cuda


def test_tensors_to_device_cuda():
    out = tensors_to_device(torch.randn(3), "cuda")
    assert out.is_cuda
"""

GUARD = """\
import torch


class CompressedWeight:
    def compress(self, device=None):
        weight = self.weight.detach()
        gpu_weight = weight.to(device=device) if device is not None else weight
        if not gpu_weight.is_cuda:
            raise NotImplementedError("weight compression is CUDA-only")
        return gpu_weight

    def pick(self, x):
        if not x.is_cuda:
            x = x.cuda()
        return x
"""


def test_a_negative_is_cuda_assert_holds_on_every_backend(engine):
    found = findings_by_line(engine, IS_CUDA, "tests/test_helpers.py")
    assert "NPU005" not in _codes(found, line_of(IS_CUDA, "assert not out.is_cuda"))
    assert _codes(found, line_of(IS_CUDA, "assert out.is_cuda")).get("NPU005") == "error"


def test_a_guard_that_raises_for_non_cuda_tensors_fails_as_written(engine):
    # judged by the severity contract: it raises on Ascend as written (error), as heldout14's label says
    found = findings_by_line(engine, GUARD)
    assert _codes(found, line_of(GUARD, "if not gpu_weight.is_cuda:")).get("NPU005") == "error"
    assert _codes(found, line_of(GUARD, "if not x.is_cuda:")).get("NPU005") == "error"


# -- 3. dtype names, not casts -------------------------------------------------------------------------------------

EXPORT = """\
import torch


def export(model, out_dir):
    dtype = next(model.parameters()).dtype
    if "bfloat16" in str(dtype):
        float_dtype = "bf16"
    elif "float16" in str(dtype):
        float_dtype = "fp16"
    else:
        float_dtype = "fp32"
    return float_dtype


def load(args):
    if args.fast:
        precision = "bf16"
    else:
        precision = "fp32"
    return precision
"""


def test_a_dtype_name_converted_from_the_models_dtype_chooses_nothing(engine):
    found = findings_by_line(engine, EXPORT, "tests/test_export.py")
    assert "NPU201" not in _codes(found, line_of(EXPORT, 'float_dtype = "bf16"'))
    assert "NPU202" not in _codes(found, line_of(EXPORT, 'float_dtype = "fp16"'))
    # control: a name chosen by the user's flag
    assert "NPU201" in _codes(found, line_of(EXPORT, '    precision = "bf16"'))


def test_switching_a_precision_setting_by_its_name_is_a_choice_not_a_conversion():
    # Olive's Flux LoRA: `if training_args.mixed_precision == "fp16": training_args.mixed_precision = "bf16"`
    import ast

    from auditor.static.value_reads import _converted_name_lines

    src = ('def train(args, model):\n'
           '    if args.mixed_precision == "fp16":\n'
           '        args.mixed_precision = "bf16"\n'
           '    if args.precision == "fp16":\n'
           '        name = "bf16"\n'
           '    if model.dtype == torch.bfloat16:\n'
           '        label = "bf16"\n')
    assert _converted_name_lines(ast.parse(src)) == {7}


CONFIG_TEST = """\
import pytest
import yaml

from pkg.models.endpoint import EndpointConfig


class TestEndpointConfig:
    @pytest.mark.parametrize(
        "config_path, expected",
        [("examples/endpoint.yaml", {"model_name": "org/model", "dtype": "float16", "batch_size": 1})],
    )
    def test_from_path(self, config_path, expected):
        with open(config_path) as f:
            config = yaml.safe_load(f)
        assert EndpointConfig(**config).model_dump() == expected
"""

CONFIG_TEST_TORCH = CONFIG_TEST.replace("import yaml\n", "import torch\nimport yaml\n")


RUN_TEST = """\
import unittest

from pkg.ops.diffusion_mapper import DiffusionMapper


class DiffusionMapperTest(unittest.TestCase):
    def test_run(self):
        op = DiffusionMapper(hf_model="org/sd", torch_dtype="fp16", strength=0.9)
        self.assertEqual(len(op.run(["a cat"])), 1)
"""


def test_a_dtype_name_expected_from_a_parsed_config_in_a_device_less_test_is_data(engine):
    # control: a dtype handed to an op that runs a model, in a test module that imports no framework itself
    found = findings_by_line(engine, RUN_TEST, "tests/ops/test_diffusion_mapper.py")
    assert "NPU202" in _codes(found, line_of(RUN_TEST, 'torch_dtype="fp16"'))
    found = findings_by_line(engine, CONFIG_TEST, "tests/unit/test_endpoint.py")
    assert "NPU202" not in _codes(found, line_of(CONFIG_TEST, '"dtype": "float16"'))
    # control: the same test in a module that computes with torch
    found = findings_by_line(engine, CONFIG_TEST_TORCH, "tests/unit/test_endpoint.py")
    assert "NPU202" in _codes(found, line_of(CONFIG_TEST_TORCH, '"dtype": "float16"'))


# -- 4. predicates and the project's own extras --------------------------------------------------------------------

QUANT_UTIL = """\
import torch


def quantize_fp8(x):
    return x.to(torch.float8_e4m3fn)


def replace_linear(module, dtype):
    if dtype.quantize_int8():
        return module
    elif dtype.quantize_fp8():
        return module
    w = quantize_fp8(module.weight)
    return w
"""


def test_an_fp8_named_predicate_in_a_test_makes_no_float8(engine):
    found = findings_by_line(engine, QUANT_UTIL)
    assert "NPU249" not in _codes(found, line_of(QUANT_UTIL, "elif dtype.quantize_fp8():"))
    assert "NPU249" in _codes(found, line_of(QUANT_UTIL, "w = quantize_fp8(module.weight)"))


PYPROJECT = """\
[project]
name = "evalkit"
version = "0.1"
dependencies = ["torch>=2.0"]

[project.optional-dependencies]
vllm = ["vllm>=0.11.0", "ray"]
tests = ["pytest"]
dev = ["evalkit[tests]"]
dev-gpu = ["evalkit[dev,vllm]"]
serve = ["trl[vllm]"]
"""


def test_the_projects_own_extra_is_reported_where_it_is_written(tmp_path):
    root = write_tree(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "pyproject.toml")
    by_line: dict[int, set[str]] = {}
    for f in r.findings:
        by_line.setdefault(f.line, set()).add(f.code)
    assert "NPU440" in by_line.get(line_of(PYPROJECT, 'vllm = ["vllm'), set())
    assert "NPU440" not in by_line.get(line_of(PYPROJECT, "dev-gpu ="), set())
    # control: another package's vllm extra still pulls vllm
    assert "NPU440" in by_line.get(line_of(PYPROJECT, 'serve = ["trl[vllm]"]'), set())
