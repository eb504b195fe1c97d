"""tq55b (session 55; TUNED on heldout72): a probe flag that is only printed and tests a re-seed after
`torch.manual_seed`. Each shape on code like the trees it came from, beside a control that keeps its finding."""
from __future__ import annotations

import pytest

from tests.static_snippets import findings_by_line


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    return StaticEngine(load_rules())


def _severity(engine, src: str, line: int, code: str, rel: str = "examples/graph/test_gcn.py") -> str | None:
    return next((f.severity for f in findings_by_line(engine, src, rel).get(line, []) if f.code == code), None)


# a graph-attack example script (DeepRobust's examples/graph/test_*.py shape)
_SEEDED = """
    import argparse
    import numpy as np
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument('--seed', type=int, default=15, help='Random seed.')
    args = parser.parse_args()
    args.cuda = torch.cuda.is_available()
    print('cuda: %s' % args.cuda)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)
    {tail}
"""


def test_a_probe_flag_only_printed_and_gating_a_reseed_is_info(engine):
    src = _SEEDED.format(tail="model = build(device)")
    assert _severity(engine, src, 9, "NPU002") == "info"
    assert _severity(engine, src, 11, "NPU002") == "error"      # the device choice keeps its finding


@pytest.mark.parametrize("tail", ["if args.cuda:\n        model = model.cuda()", "train(args)"])
def test_a_probe_flag_read_elsewhere_keeps_its_finding(engine, tail):
    # `if args.cuda: model.cuda()` moves the model; `train(args)` hands the flag on to code that may
    src = _SEEDED.format(tail=tail)
    assert _severity(engine, src, 9, "NPU002") == "error"


# an activation-checkpoint autograd Function that picks the AMP decorators by the torch release (the shape of
# michelangelo / shap-e style `checkpoint.py` copies)
_CHECKPOINT = """
    import torch
    from packaging import version


    class CheckpointFunction(torch.autograd.Function):
        @staticmethod
        def _get_bwd_decorator():
            if version.parse(torch.__version__) {op} version.parse('2.5.0'):
                return torch.amp.custom_bwd(device_type='cuda')
            else:
                def custom_bwd(bwd):
                    return torch.cuda.amp.custom_bwd(bwd=bwd)
                return custom_bwd
"""


def test_the_cuda_amp_spelling_in_the_older_release_arm_is_a_warning(engine):
    src = _CHECKPOINT.format(op=">=")
    assert _severity(engine, src, 13, "NPU012", "models/checkpoint.py") == "warning"
    assert _severity(engine, src, 10, "NPU003", "models/checkpoint.py") == "error"   # the arm current torch takes


def test_the_cuda_amp_spelling_in_the_newer_release_arm_stays_an_error(engine):
    # `<` puts the CUDA spelling in the arm newer releases take (and a current torch_npu with them)
    src = _CHECKPOINT.format(op="<")
    assert _severity(engine, src, 13, "NPU012", "models/checkpoint.py") == "error"


# a multimodal LM's transformer (Perception LM / lingua shape): flex attention picked by `attn_impl`
_FLEX = """
    from typing import Optional, Union

    import torch
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention


    def create_causal_mask(seqlen, attn_impl):
        if attn_impl == "sdpa":
            return "causal"
        return create_block_mask(causal_mask, None, None, seqlen, seqlen)


    def attend(xq, xk, xv, mask: Optional[Union[BlockMask, str]] = None):
        assert mask is None or isinstance(mask, BlockMask)
        return flex_attention(xq, xk, xv, block_mask=mask)
"""


def test_flex_attention_imports_beside_their_reported_calls_are_no_findings(engine):
    found = findings_by_line(engine, _FLEX, "core/transformer.py")
    assert not [f for f in found.get(5, []) if f.code == "NPU397"]      # BlockMask only a type, the calls reported
    assert {f.severity for f in found[11] if f.code == "NPU397"} == {"warning"}
    assert {f.severity for f in found[16] if f.code == "NPU397"} == {"warning"}


def test_a_flex_attention_import_with_no_reported_use_keeps_its_finding(engine):
    # BlockMask only in a signature and no flex call reported in the file: the import is the one pointer left
    src = """
        from torch.nn.attention.flex_attention import BlockMask


        def forward(block, x, mask: "BlockMask | None" = None, block_mask: BlockMask = None):
            return block(x, mask if mask is not None else block_mask)
    """
    assert _severity(engine, src, 2, "NPU397", "models/attention.py") == "warning"


# a transformers-style model file (small-doge's modeling_doge2.py): the probe tests the torch release only
_PROBED = """
    from transformers.utils import is_torch_flex_attn_available

    if is_torch_flex_attn_available():
        from transformers.integrations.flex_attention import make_flex_block_causal_mask


    def update_causal_mask(config, attention_mask):
        if config._attn_implementation == "flex_attention":
            return make_flex_block_causal_mask(attention_mask)
        return attention_mask
"""


def test_a_torch_release_probe_is_no_guard_the_ascend_path_skips(engine):
    found = findings_by_line(engine, _PROBED, "models/modeling_doge2.py")
    assert not [f for f in found.get(5, []) if f.code == "NPU397"]
    assert [f.data.get("context") for f in found[10] if f.code == "NPU397"] == [None]
    # the probe's body runs on a torch_npu >= 2.5: a call there is no "never true on Ascend" path
    compiled = """
        import torch
        from transformers.utils import is_torch_flex_attn_available

        if is_torch_flex_attn_available():
            from torch.nn.attention.flex_attention import flex_attention
            flex_attention_compiled = torch.compile(flex_attention, dynamic=False)
    """
    found = findings_by_line(engine, compiled, "models/modeling_x.py")
    assert [(f.severity, f.data.get("context")) for f in found[7] if f.code == "NPU397"] == [("warning", None)]


def test_a_flash_attention_probe_is_still_an_import_guard(engine):
    src = _PROBED.replace("is_torch_flex_attn_available", "is_flash_attn_2_available").replace(
        "transformers.integrations.flex_attention import make_flex_block_causal_mask",
        "flash_attn import flash_attn_func").replace("make_flex_block_causal_mask(", "flash_attn_func(")
    found = findings_by_line(engine, src, "models/modeling_x.py")
    assert {f.data.get("context") for f in found[10]} <= {"import-guard", "guarded-import"} and found[10]


# `conda list --export > requirements.txt` of a CUDA torch environment (small-doge's litecot shape): pip's packages
# are pinned `name=version=pypi_0`
_CONDA_EXPORT = """\
# This file may be used to create an environment using:
# $ conda create --name <env> --file <this file>
# platform: linux-64
_libgcc_mutex=0.1=main
ca-certificates=2024.12.31=h06a4308_0
numpy=1.26.4=pypi_0
nvidia-cublas-cu12=12.4.5.8=pypi_0
nvidia-cuda-runtime-cu12=12.4.127=pypi_0
python=3.11.11=he870216_0
torch=2.6.0=pypi_0
"""


def test_torch_cuda_wheels_in_a_conda_export_are_info(tmp_path):
    from tests.static_snippets import code_severity_in_tree

    found = code_severity_in_tree(tmp_path, {"projects/litecot/requirements.txt": _CONDA_EXPORT})
    assert found[("projects/litecot/requirements.txt", 8)]["NPU440"] == "info"


def test_torch_cuda_wheels_in_a_hand_written_requirements_file_keep_their_error(tmp_path):
    from tests.static_snippets import code_severity_in_tree

    found = code_severity_in_tree(tmp_path, {"requirements.txt": "numpy\nnvidia-cuda-runtime-cu12==12.4.127\ntorch\n"})
    assert found[("requirements.txt", 2)]["NPU440"] == "error"
