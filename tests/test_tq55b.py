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
