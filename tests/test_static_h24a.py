"""h24a (session 24, house): the bf16 fallback's cast-up state lives for one file's walk (context.CastFallbacks), in
source order; valueflow's bindings say why they are CUDA-specific as a value, not in their message text."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import finding_keys_by_line, findings_by_line
from tests.test_recall_t22d import NO_FALLBACK, UPSAMPLE

ENGINE = StaticEngine(load_rules())


def test_a_cast_up_in_one_file_does_not_make_the_next_files_cast_back_a_guard():
    # diffusers' Upsample2D audited first, then a loader that only copies the dtype it tested (the same engine)
    assert ("NPU201", "precision", "info") in finding_keys_by_line(ENGINE, UPSAMPLE.decode(),
                                                                   "diffusers/models/upsampling.py")[32]
    assert finding_keys_by_line(ENGINE, NO_FALLBACK.decode(), "pipelines/load.py") == {}


# Upsample2D's two guards in the other order: the cast back comes first, so it is no fallback's second half
CAST_BACK_FIRST = """import torch
import torch.nn.functional as F


def restore(hidden_states, dtype):
    if dtype == torch.bfloat16:
        hidden_states = hidden_states.to(dtype)
    return hidden_states


def upsample(hidden_states):
    dtype = hidden_states.dtype
    if dtype == torch.bfloat16:
        hidden_states = hidden_states.to(torch.float32)
    hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
    return hidden_states
"""


def test_a_cast_back_above_the_cast_up_is_not_a_guard():
    found = finding_keys_by_line(ENGINE, CAST_BACK_FIRST)
    assert 6 not in found       # read as any dtype comparison: nothing chosen
    assert 13 not in found      # a cast up with no cast back after it: a host conversion (t22d)


# cogdl's operators (test28): project modules imported only when CUDA is there, and an op builder's extension
COGDL = '''import torch

if torch.cuda.is_available():
    from cogdl.operators.spmm import csrspmm
from cogdl.operators.cuda_ops import fused_gat_func


def spmm(graph, x):
    return csrspmm(graph.row_ptr, graph.col_indices, x, graph.edge_weight)


def gat(graph, x):
    return fused_gat_func(graph, x)


def adam():
    fused_adam_cuda = FusedAdamBuilder().jit_load()
    return fused_adam_cuda
'''


def test_flow_findings_say_why_the_bound_code_is_cuda_specific():
    found = {line: next(f for f in fs if f.code == "NPU320")
             for line, fs in findings_by_line(ENGINE, COGDL, "cogdl/layers/spmm_layer.py").items()
             if any(f.code == "NPU320" for f in fs)}
    assert "cogdl.operators.spmm.csrspmm (imported only under a CUDA check), CUDA-specific code by its guard" \
        in found[4].message
    assert found[4].data["named_module"] == "cogdl.operators.spmm.csrspmm"
    assert "module cogdl.operators.cuda_ops.fused_gat_func, CUDA-specific code by its name" in found[5].message
    assert found[5].data["named_module"] == "cogdl.operators.cuda_ops.fused_gat_func"
    assert "bound at line 4 to CUDA-specific code: cogdl.operators.spmm.csrspmm (imported only under a CUDA check)" \
        in found[9].message
    assert "bound at line 5 to CUDA-specific code: cogdl.operators.cuda_ops.fused_gat_func (named for it)" \
        in found[13].message
    assert "op builder (FusedAdamBuilder().jit_load())" in found[17].message
    assert found[17].data["built_by"] == "FusedAdamBuilder().jit_load()"
    assert "FusedAdamBuilder().jit_load() (a CUDA extension build)" in found[18].message


# pipedream's translate.py: a name converted to a legacy tensor type, then the model cast to it
PIPEDREAM = """import torch


def evaluate(model, args):
    if args.math == 'fp32':
        dtype = torch.FloatTensor
    if args.math == 'fp16':
        dtype = torch.HalfTensor
    model.type(dtype)
    if args.cuda:
        model = model.cuda()
"""


def test_a_name_converted_to_a_legacy_tensor_type_chooses_nothing():
    found = finding_keys_by_line(ENGINE, PIPEDREAM, "translation/translate.py")
    assert 8 not in found                     # decision 11: `--math fp16` is the choice
    assert 11 in found                        # the device call stays


def test_an_upper_case_mode_name_compared_with_a_dtype_literal_is_a_conversion_branch():
    """SpikeGPT's `if self.FLOAT_MODE == "bf16": w[x] = w[x].bfloat16()` (test33): the literal names the dtype; the
    upper-case attribute is the tested name, not a constant named for "float" (which made the test name two dtypes
    and kept the branch's casts after h24a's one recogniser; the visitor's former test had quieted them)."""
    import ast

    from auditor.static.value_reads import _tested_word

    assert _tested_word(ast.parse('self.FLOAT_MODE == "bf16"', mode="eval").body) == "bf16"
    assert _tested_word(ast.parse('self.FLOAT_MODE == "fp32"', mode="eval").body) == "fp32"
    assert _tested_word(ast.parse("dtype == PRECISION_BF16", mode="eval").body) == "bf16"      # control: constant
    assert _tested_word(ast.parse('self.MODE == "train"', mode="eval").body) is None        # control: no dtype
