"""tq54d (session 54; TUNED on heldout71's trees 1-4): operator support rows on host tensors (a converter's CPU op
tests whose helpers cast with `.to(dtype=...)`, a converter module that folds constants into another runtime's
format), the CUDA-only autocast state read as a gate. Each shape on code like the trees it came from, beside a control
that keeps its finding."""
from __future__ import annotations

import textwrap

from tests.static_snippets import dedented_tree, first_line_of, severity_at


def _coverage_rows(engine, tmp_path, files: dict[str, str], rel: str, needle: str) -> dict[str, str]:
    """code -> severity on the line of `rel` holding `needle`, with the default target's support tables."""
    for name, src in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
    line = first_line_of(files[rel], needle)
    return {f.code: f.severity for f in engine.analyze_path(tmp_path / rel, rel).findings if f.line == line}

# a model converter's operator tests: CPU inputs, traced and compared with the other runtime's output; the shared
# comparison helper casts with `.to(dtype=...)`, which places nothing
_OP_TEST = """
    import unittest

    import torch
    import torch.nn.functional as F

    from convkit.converter import TFLiteConverter


    def assert_close(actual, expected):
        t = torch.promote_types(actual.dtype, expected.dtype)
        torch.testing.assert_close(actual.to(dtype=t), expected.to(dtype=t))


    class ConverterOPTester(unittest.TestCase):
        def test_adaptive_pool(self):
            dummy_input = torch.randn(1, 3, 224, 224, dtype=torch.float32)

            for func in [F.adaptive_avg_pool2d, F.adaptive_max_pool2d]:
                def model(x):
                    return func(x, (16, 32))

                converter = TFLiteConverter(model, dummy_input, "out.tflite")
                converter.convert()
                assert_close(model(dummy_input), converter.run(dummy_input))
"""


def test_operator_rows_in_a_cpu_op_test_whose_helper_casts_dtype_go(coverage_engine, tmp_path):
    rel = "tests/converter_op_test.py"
    assert "NPU502" not in _coverage_rows(coverage_engine, tmp_path, {rel: _OP_TEST}, rel, "for func in")


def test_operator_rows_in_an_op_test_whose_helper_moves_to_a_device_stay(coverage_engine, tmp_path):
    rel = "tests/converter_op_test.py"
    src = _OP_TEST.replace("actual.to(dtype=t)", "actual.to(device='cuda', dtype=t)")
    assert _coverage_rows(coverage_engine, tmp_path, {rel: src}, rel, "for func in").get("NPU502") == "warning"


# a converter's weight quantiser: folds a traced model's constants into TFLite tensors on the host
_QUANTIZER = """
    import numpy as np
    import torch

    from . import tflite as tfl


    def quantize_weight(tensor, new_name, q_type, axis):
        scale = tensor.abs().amax(dim=1) / 127
        zero_point = torch.zeros(scale.size(), dtype=torch.int64)
        q_tensor = torch.quantize_per_channel(tensor, scale, zero_point, axis, torch.qint8)
        bias = torch.round(tensor.detach() / scale[:, None]).to(dtype=torch.int32)
        return tfl.Tensor(q_tensor, new_name, q_type=q_type), np.asarray(bias)
"""


_QUANT_REL = "convkit/operators/quantizer.py"


def test_operator_rows_in_a_converter_module_go(coverage_engine, tmp_path):
    assert "NPU502" not in _coverage_rows(coverage_engine, tmp_path, {_QUANT_REL: _QUANTIZER}, _QUANT_REL,
                                          "quantize_per_channel")


def test_operator_rows_in_a_converter_module_that_places_tensors_stay(coverage_engine, tmp_path):
    src = _QUANTIZER.replace("q_tensor = torch.quantize_per_channel(tensor,",
                             "q_tensor = torch.quantize_per_channel(tensor.cuda(),")
    found = _coverage_rows(coverage_engine, tmp_path, {_QUANT_REL: src}, _QUANT_REL, "quantize_per_channel")
    assert found.get("NPU502") == "warning"


def test_operator_rows_in_a_module_without_a_converter_format_stay(coverage_engine, tmp_path):
    src = _QUANTIZER.replace("from . import tflite as tfl", "from . import tensors as tfl")
    found = _coverage_rows(coverage_engine, tmp_path, {_QUANT_REL: src}, _QUANT_REL, "quantize_per_channel")
    assert found.get("NPU502") == "warning"


# transformers' FlashAttention-2 forward as verl copies it: the autocast dtype read only under CUDA autocast
_FA2_FORWARD = """
    import torch


    def llama_flash_attn_forward(self, hidden_states, attention_mask=None):
        query_states = self.q_proj(hidden_states)
        input_dtype = query_states.dtype
        if input_dtype == torch.float32:
            if torch.is_autocast_enabled():
                target_dtype = torch.get_autocast_gpu_dtype()
            else:
                target_dtype = self.q_proj.weight.dtype
            query_states = query_states.to(target_dtype)
        return query_states
"""


def test_autocast_dtype_read_under_the_cuda_autocast_state_is_a_warning(tmp_path):
    found = dedented_tree(tmp_path, {"verl/models/transformers/llama.py": _FA2_FORWARD})
    assert severity_at(found, "verl/models/transformers/llama.py", _FA2_FORWARD,
                       "get_autocast_gpu_dtype").get("NPU009") == "warning"


def test_autocast_dtype_read_under_a_device_typed_autocast_state_stays_an_error(tmp_path):
    src = _FA2_FORWARD.replace("torch.is_autocast_enabled()", "torch.is_autocast_enabled(query_states.device.type)")
    found = dedented_tree(tmp_path, {"verl/models/transformers/llama.py": src})
    assert severity_at(found, "verl/models/transformers/llama.py", src, "get_autocast_gpu_dtype").get("NPU009") == "error"


# an mmengine-style training config whose `training_args` dict the train script unpacks into TrainingArguments
_TRAIN_CONFIG = """
    training_args = dict(
        output_dir="./logdir/finetune/",
        deepspeed="./scripts/zero3.json",
        bf16=True,
        tf32=True,
        num_train_epochs=1,
        per_device_train_batch_size=4,
        gradient_accumulation_steps=4,
    )
"""


def test_tf32_in_training_arguments_dict_is_an_error(tmp_path):
    found = dedented_tree(tmp_path, {"configs/finetune.py": _TRAIN_CONFIG})
    assert severity_at(found, "configs/finetune.py", _TRAIN_CONFIG, "tf32=True").get("NPU248") == "error"


def test_tf32_in_training_arguments_call_is_an_error(tmp_path):
    src = """
        from transformers import TrainingArguments


        def build(out):
            return TrainingArguments(output_dir=out, bf16=True, tf32=True)
    """
    found = dedented_tree(tmp_path, {"train.py": src})
    assert severity_at(found, "train.py", src, "tf32=True").get("NPU248") == "error"


def test_tf32_in_another_settings_dict_stays_a_warning(tmp_path):
    src = _TRAIN_CONFIG.replace("per_device_train_batch_size", "batch_size")
    found = dedented_tree(tmp_path, {"configs/finetune.py": src})
    assert severity_at(found, "configs/finetune.py", src, "tf32=True").get("NPU248") == "warning"


# a trainer package's table of the precision names its configs may use (verl's utils/torch_dtypes.py)
_PRECISION_TABLE = """
    import torch


    class PrecisionType(object):
        HALF = "16"
        FLOAT = "32"
        FULL = "64"
        BFLOAT = "bf16"
        MIXED = "mixed"

        @staticmethod
        def to_dtype(precision):
            return torch.bfloat16 if precision in ("bf16", "bfloat16") else torch.float32
"""


def test_a_member_of_a_precision_name_table_chooses_nothing(tmp_path):
    found = dedented_tree(tmp_path, {"verl/utils/torch_dtypes.py": _PRECISION_TABLE})
    assert "NPU201" not in severity_at(found, "verl/utils/torch_dtypes.py", _PRECISION_TABLE, 'BFLOAT = "bf16"')


def test_a_lone_class_constant_naming_bf16_stays(tmp_path):
    src = """
        class KdaKernelConfig:
            BLOCK = 64
            RAW_K_FORMAT = "bf16"
    """
    found = dedented_tree(tmp_path, {"ops/kda.py": src})
    assert severity_at(found, "ops/kda.py", src, 'RAW_K_FORMAT = "bf16"').get("NPU201") == "info"
