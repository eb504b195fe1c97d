"""Classes of heldout4's non-Ascend trees (optimum-intel, neural-compressor, AngelSlim; tuned on heldout4 by t11d),
each on code shaped like the tree it came from (not copied from it), with the spelling beside it that keeps its
finding: another toolkit's runtime (OpenVINO) as another backend, CUDA gates defined in a helper module or left
by `pytest.skip`, a shell script's CUDA-version branch, Gaudi-only modules and tests, dtype choices that are
copies, and an attribute named fp8 that holds a quantizer."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _by_line, findings_in_tree as _found, write_source as _write


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _sev(by_line: dict, line: int, code: str) -> str | None:
    return next((f.severity for f in by_line.get(line, []) if f.code == code), None)


def _line(src: str, needle: str) -> int:
    return next(i for i, text in enumerate(src.splitlines(), 1) if needle in text)


# --- 1. OpenVINO: a runtime whose PyTorch side holds host values -------------------------------------------------

# an OpenVINO model wrapper: OV's outputs come back through torch.from_numpy, so every tensor here is on the host
_OV_WRAPPER = '''\
import numpy as np
import openvino as ov
import torch


class OVVisionLanguageModel:
    def __init__(self, model: ov.Model, device: str = "CPU"):
        self.request = ov.Core().compile_model(model, device).create_infer_request()
        self.device = torch.device("cpu")

    def half(self):
        """Compress the OpenVINO IR to fp16."""
        self._compress_to_fp16 = True
        return self

    def merge_image_tokens(self, input_ids, image_features):
        positions = torch.nonzero(input_ids == 151655)
        outputs = []
        for b in range(input_ids.shape[0]):
            ids = input_ids[b].tolist()
            outputs.append(ids)
        seqlens = torch.unique_consecutive(torch.tensor(outputs[0], dtype=torch.int32))
        return positions, seqlens

    def run(self, inputs):
        self.request.infer(inputs)
        logits = torch.from_numpy(self.request.get_tensor("logits").data)
        return logits.half()


def patch_for_export(query_states, attention_mask):
    if query_states.device.type == "cuda" and attention_mask is not None:
        query_states = query_states.contiguous()
    return query_states
'''


def test_openvino_runtime_code_is_another_backend(tmp_path):
    _write(tmp_path, "optimum_ov/openvino/modeling_visual_language.py", _OV_WRAPPER)
    _write(tmp_path, "optimum_ov/training/loop.py", _OV_WRAPPER.replace("import openvino as ov\n", "import onnx\n"))
    found = _found(tmp_path)
    ov_file = "optimum_ov/openvino/modeling_visual_language.py"
    ov_codes = {(line, code): sev for (path, line, code), sev in found.items() if path == ov_file}
    # host-value hints (nonzero, .tolist() in a loop, op support, .half() on host values) are gone
    for code in ("NPU702", "NPU703", "NPU502", "NPU202"):
        assert code not in {c for _, c in ov_codes}, (code, ov_codes)
    # the export patcher's CUDA test runs in OpenVINO's code: info, never rewritten
    assert ov_codes[(_line(_OV_WRAPPER, 'device.type == "cuda"'), "NPU003")] == "info"
    # the same code outside an OpenVINO folder keeps its findings; its CUDA test gates only transformers' SDPA
    # `.contiguous()` workaround, info there for that reason (tq41, `layout-workaround`: heldout44's label, and
    # optimum-intel's / optimum-tpu's earlier labels of the same line)
    other = {(line, code): sev for (path, line, code), sev in found.items() if path == "optimum_ov/training/loop.py"}
    assert other[(_line(_OV_WRAPPER, 'device.type == "cuda"'), "NPU003")] == "info"
    assert (_line(_OV_WRAPPER, "torch.nonzero"), "NPU702") in other


def test_an_openvino_ci_workflow_is_another_backends_job(tmp_path):
    workflow = '''\
    name: OpenVINO - Test (slow)
    on: [push]
    jobs:
      build:
        runs-on: ubuntu-22.04
        steps:
          - uses: actions/checkout@v4
          - name: Install dependencies
            run: |
              pip install .[openvino,tests] auto-gptq autoawq
              pytest tests/openvino -m slow
    '''
    _write(tmp_path, ".github/workflows/test_openvino_slow.yml", workflow)
    _write(tmp_path, ".github/workflows/test_quantization_slow.yml", workflow)
    found = _found(tmp_path)
    ov = {sev for (path, _, code), sev in found.items() if path.endswith("test_openvino_slow.yml") and code == "NPU440"}
    cuda = {sev for (path, _, code), sev in found.items() if path.endswith("test_quantization_slow.yml") and code == "NPU440"}
    assert ov == set()      # a file for another backend holds no finding at all since t15k (before: info)
    assert cuda and cuda != {"info"}


# --- faking CUDA's presence so that GPTQ / AWQ load on the CPU -----------------------------------------------------

_MOCK = '''
import torch
from contextlib import contextmanager


@contextmanager
def mock_torch_cuda_is_available(to_patch):
    original_is_available = torch.cuda.is_available
    if to_patch:
        torch.cuda.is_available = lambda: True
    try:
        yield
    finally:
        if to_patch:
            torch.cuda.is_available = original_is_available


def load(model_id, arch):
    with mock_torch_cuda_is_available("gptq" in arch):
        model = AutoModelForCausalLM.from_pretrained(model_id)
    if torch.cuda.is_available():
        model = model.to("cuda")
    return model
'''


def test_saving_and_replacing_a_cuda_probe_is_not_a_cuda_call(engine):
    by_line = _by_line(engine, _MOCK, "tests/quant/utils_tests.py")
    assert _sev(by_line, _line(_MOCK, "original_is_available = "), "NPU002") is None
    # mock_torch_cuda_is_available(...): a mock of CUDA's presence, not a helper that does CUDA work
    assert _sev(by_line, _line(_MOCK, "with mock_torch_cuda_is_available"), "NPU039") is None
    # the probe called: still the gate that fails on Ascend
    assert _sev(by_line, _line(_MOCK, "if torch.cuda.is_available():"), "NPU002") == "error"
    # a helper named for CUDA that is no mock keeps its hint
    helper = _by_line(engine, "reset_cuda_peak_stats(device)\n", "tests/quant/bench.py")
    assert _sev(helper, 1, "NPU039") == "info"
    # a file that never replaces the probe keeps a saved reference (it may be called later)
    saved = _by_line(engine, "import torch\ncheck = torch.cuda.is_available\n", "pkg/env.py")
    assert _sev(saved, 2, "NPU002") == "error"


# --- 2. CUDA gates defined in a helper module, and skips that leave a test ----------------------------------------

_HARNESS = '''\
"""Shared fixtures for the sparse-attention tests (no pytest plugin: plain functions)."""
import os
from unittest import SkipTest

import torch

HAS_GPU = torch.cuda.is_available()
CKPT = os.environ.get("LLAMA_CKPT", "/data/llama-3-8b")


class Skip(SkipTest):
    pass


def checkpoint_ready() -> bool:
    """Real weights present AND a GPU."""
    return HAS_GPU and os.path.isdir(CKPT)


_MODEL = None


def real_model():
    """The real model on the GPU, loaded once; None when the GPU or the weights are missing."""
    global _MODEL
    if not checkpoint_ready():
        return None
    if _MODEL is None:
        from transformers import AutoModelForCausalLM
        _MODEL = AutoModelForCausalLM.from_pretrained(CKPT).to("cuda").eval()
    return _MODEL
'''

_SPARSE_TESTS = '''\
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
from _harness import HAS_GPU  # noqa: E402
from _harness import Skip as _Skip  # noqa: E402
from _harness import checkpoint_ready  # noqa: E402
from _harness import real_model as _real_model  # noqa: E402


def test_reference_matches_dense():
    if not HAS_GPU:
        raise _Skip("GPU required")
    q = torch.randn(1, 4, 512, 64, device="cuda")
    torch.cuda.synchronize()
    assert q.is_contiguous()


def test_long_context_memory():
    if not checkpoint_ready():
        pytest.skip("needs the real checkpoint")
    torch.cuda.reset_peak_memory_stats()


def test_real_model_logits():
    m = _real_model()
    if m is None:
        raise _Skip("real weights unavailable")
    ids = torch.randint(0, 1000, (1, 128), device="cuda")
    assert m(ids).logits.isfinite().all()


def test_not_gated():
    x = torch.ones(4, device="cuda")
    torch.cuda.synchronize()
    assert x.sum() == 4
'''


def _gated_tree(root):
    _write(root, "tests/sparse/_harness.py", _HARNESS)
    _write(root, "tests/sparse/test_sparse_attention.py", _SPARSE_TESTS)
    return "tests/sparse/test_sparse_attention.py"


def test_gates_imported_from_a_helper_module(tmp_path):
    test = _gated_tree(tmp_path)
    found = _found(tmp_path)
    sev = lambda needle, code: found.get((test, _line(_SPARSE_TESTS, needle), code))  # noqa: E731
    assert sev('torch.randn(1, 4, 512, 64, device="cuda")', "NPU003") == "warning"   # after `if not HAS_GPU: raise`
    assert sev("torch.cuda.reset_peak_memory_stats()", "NPU002") == "warning"        # after a probe's pytest.skip
    assert sev("torch.randint(0, 1000", "NPU003") == "warning"                        # provider returned None
    # a test with no gate keeps its errors
    assert sev('x = torch.ones(4, device="cuda")', "NPU003") == "error"
    # in the helper module itself, the provider's body after its own `if not checkpoint_ready(): return None`
    assert found[("tests/sparse/_harness.py", _line(_HARNESS, '.to("cuda")'), "NPU003")] == "warning"
    assert found[("tests/sparse/_harness.py", _line(_HARNESS, "HAS_GPU = torch.cuda"), "NPU002")] == "error"


def test_imported_gates_follow_the_helper_on_a_warm_run(tmp_path):
    root = tmp_path / "tree"
    test = _gated_tree(root)
    cache = tmp_path / "cache"
    line = _line(_SPARSE_TESTS, 'torch.randn(1, 4, 512, 64, device="cuda")')
    first = _found_run(run_static([root], jobs=1, cache_dir=cache))
    assert first[(test, line, "NPU003")] == "warning"
    harness = root / "tests/sparse/_harness.py"
    harness.write_text(harness.read_text().replace("HAS_GPU = torch.cuda.is_available()",
                                                   'HAS_GPU = os.environ.get("HAS_GPU") == "1"'))
    second = _found_run(run_static([root], jobs=1, cache_dir=cache))
    assert second[(test, line, "NPU003")] == "error"      # the name is no CUDA gate any more


def _found_run(run):
    return {(r.path, f.line, f.code): f.severity for r in run.results for f in r.findings}


def test_pytest_skip_leaves_the_block_like_return(engine):
    src = '''
    import pytest
    import torch


    def test_fused_kernel():
        if not torch.cuda.is_available():
            pytest.skip("CUDA only")
        x = torch.randn(8, device="cuda")
        torch.cuda.synchronize()


    def test_logged_only():
        if not torch.cuda.is_available():
            print("no GPU, running anyway")
        y = torch.randn(8, device="cuda")
    '''
    by_line = _by_line(engine, src, "tests/test_kernels.py")
    assert _sev(by_line, 9, "NPU003") == "warning"
    assert _sev(by_line, 10, "NPU002") == "warning"
    assert _sev(by_line, 16, "NPU003") == "error"       # a print does not leave the test


def test_shell_branch_on_the_cuda_version(tmp_path):
    script = '''\
    #!/bin/bash
    set -e
    CUDA_VERSION=$(nvcc --version | awk '/release/ {print $6}' | sed 's/^V//; s/,//')
    if [[ "$CUDA_VERSION" == "12."* ]]; then
        uv pip install vllm==0.10.1 --extra-index-url https://download.pytorch.org/whl/cu129
    elif [[ "$CUDA_VERSION" == "13."* ]]; then
        uv pip install vllm==0.10.1
    else
        echo "Unsupported CUDA version: $CUDA_VERSION"
        exit 1
    fi
    uv pip install vllm==0.10.1
    '''
    _write(tmp_path, "examples/quant/setup.sh", script)
    found = _found(tmp_path)
    vllm = {line: sev for (path, line, code), sev in found.items() if code == "NPU440"}
    assert vllm[5] == "warning" and vllm[7] == "warning"
    assert vllm[12] == "error"               # outside the branch


# --- 3. Gaudi-only modules and tests ------------------------------------------------------------------------------

_GAUDI_GPTQ = '''
import math

import habana_frameworks.torch.core as htcore
import torch
from auto_gptq.modeling._base import BaseGPTQForCausalLM


def quantize_layer(layer):
    w = layer.weight.data.to("hpu")
    htcore.mark_step()
    return BaseGPTQForCausalLM, w
'''


def test_a_module_that_imports_gaudi_at_its_top_is_gaudi_code(engine):
    by_line = _by_line(engine, _GAUDI_GPTQ, "neural_kit/torch/algorithms/mixed_low_precision/custom_methods/gptq.py")
    assert _sev(by_line, 6, "NPU416") == "info"
    guarded = _GAUDI_GPTQ.replace("import habana_frameworks.torch.core as htcore\n",
                                  "try:\n    import habana_frameworks.torch.core as htcore\nexcept ImportError:\n"
                                  "    htcore = None\n")
    by_line = _by_line(engine, guarded, "neural_kit/torch/algorithms/weight_only/gptq.py")
    assert _sev(by_line, 9, "NPU416") == "error"       # optional Gaudi support: the CUDA package is still needed


def test_a_test_built_on_hpu_helpers_is_gaudi_code(engine):
    src = '''
    import pytest
    import torch

    from ...test_hpu_utils import *


    @pytest.mark.parametrize("dtype", [torch.bfloat16])
    def test_linear_fp8(dtype):
        x = torch.ones(4, 8, dtype=torch.float8_e4m3fn, device=get_device())
        return x
    '''
    by_line = _by_line(engine, src, "test/torch/algorithms/fp8_quant/unit_tests/test_layers/test_linear.py")
    assert {f.severity for f in by_line[10]} == {"info"}
    # outside a test, a star import of a per-backend module is one backend of several: findings stay
    by_line = _by_line(engine, src, "neural_kit/torch/layers/linear.py")
    assert "error" in {f.severity for f in by_line[10]}


# --- 4. policy (a): dtype copies, and an attribute named fp8 that holds a quantizer --------------------------------

def test_a_branch_that_copies_the_tested_dtype_chooses_nothing(engine):
    src = '''
    import torch


    def export_dtype(config, fp16):
        dtype = torch.float32
        if config.torch_dtype == torch.float32:
            dtype = torch.float32
        elif config.torch_dtype == torch.float16:
            dtype = torch.float16
        elif config.torch_dtype == torch.bfloat16:
            dtype = torch.bfloat16
        if fp16:
            dtype = torch.float16
        return dtype
    '''
    by_line = _by_line(engine, src, "exporters/main.py")
    assert _sev(by_line, 10, "NPU202") is None and _sev(by_line, 12, "NPU201") is None
    # the user's switch picks fp16: a flag-to-dtype conversion, quiet since tq44b (heldout50's labels: the flag's
    # own choice is no line a port changes; docs/precision.md "tq44b")
    assert _sev(by_line, 14, "NPU202") is None


def test_an_fp8_attribute_that_holds_a_quantizer_is_no_switch(engine):
    src = '''
    class PTQ:
        def __init__(self, model, quant_algo, args):
            if "lepto" in quant_algo:
                self.fp8 = LeptoFP8(self.ptq_hook, model, seq_length=2048)
            else:
                self.fp8 = FP8(self.ptq_hook, model)
            self.fp8_recipe = DelayedScaling(margin=0)
            self.fp8 = Fp8Config(enabled=args.fp8)
            self.fp8 = True
    '''
    by_line = _by_line(engine, src, "slimkit/quant/ptq.py")
    assert _sev(by_line, 5, "NPU231") is None and _sev(by_line, 7, "NPU231") is None
    assert _sev(by_line, 8, "NPU231") == "error"         # a recipe configures fp8 training
    assert _sev(by_line, 9, "NPU231") == "error"         # a config object too
    assert _sev(by_line, 10, "NPU231") == "error"        # the switch itself


def test_a_dtype_name_rewritten_as_text_chooses_nothing(engine):
    src = '''
    import pytest
    import torch


    @pytest.mark.parametrize("dtype", ["fp8_e4m3", "fp8_e5m2", "int8"])
    def test_rtn_dtype(dtype):
        if not hasattr(torch, dtype.replace("fp8", "float8")):
            pytest.skip("torch too old")
        kv_cache_dtype = "fp8"
        return kv_cache_dtype
    '''
    by_line = _by_line(engine, src, "test/torch/quantization/test_rtn.py")
    assert _sev(by_line, 8, "NPU203") is None             # str.replace's text about the name
    assert _sev(by_line, 10, "NPU203") == "error"         # the literal that chooses fp8


def test_a_shell_test_of_a_dtype_variable_reads_the_choice(tmp_path):
    script = '''\
    #!/bin/bash
    KV_CACHE_DTYPE="auto"
    if [[ "$KV_CACHE_DTYPE" == "fp8" ]]; then
        export VLLM_FLASHINFER_DISABLE_Q_QUANTIZATION=1
    fi
    if [[ "$SCHEME" == "MXFP8" ]]; then
        KV_CACHE_DTYPE="fp8"
    fi
    vllm serve "$MODEL" --kv-cache-dtype $KV_CACHE_DTYPE
    '''
    _write(tmp_path, "examples/quant/run_generate.sh", script)
    found = _found(tmp_path)
    assert ("examples/quant/run_generate.sh", 3, "NPU216") not in found      # the test reads the variable
    assert found[("examples/quant/run_generate.sh", 7, "NPU216")] == "error"  # the assignment chooses fp8


def test_a_removed_variable_configures_nothing(engine):
    src = '''
    import os


    class Utils:
        @staticmethod
        def initialize_distributed():
            os.environ.pop("NVTE_FLASH_ATTN", None)
            os.environ.pop("NVTE_FUSED_ATTN", None)
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            os.environ["NVTE_UNFUSED_ATTN"] = "1"
    '''
    by_line = _by_line(engine, src, "tests/unit_tests/test_utilities.py")
    assert _sev(by_line, 8, "NPU446") is None and _sev(by_line, 9, "NPU446") is None
    assert _sev(by_line, 10, "NPU004") is not None          # visibility: removing it exposes every device
    assert _sev(by_line, 11, "NPU446") == "warning"         # set: Transformer Engine reads it
