"""Precision fixes of tq55e (session 55, tuned on heldout71 and heldout70).

- a string literal an `assert` only refuses (`assert not use_amp == 'apex', 'Cannot use APEX AMP with torchscripted
  model'`, timm's train.py and its copies): nothing is chosen there (auditor/static/visitor.py `_refused_literals`).

Code written afresh in the shape of the trees' code, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree


def _codes(root: Path, rel: str, line: int) -> list[tuple[str, str]]:
    """(code, severity) of the whole-tree static pass's findings on one line of `rel`."""
    return sorted((f.code, f.severity) for r in run_static([root], jobs=1).results if r.path == rel
                  for f in r.findings if f.line == line)


# a timm-style training script: apex AMP or native AMP by flag, TorchScript refused with apex
TRAIN = """\
    import argparse

    import torch

    try:
        from apex import amp
        has_apex = True
    except ImportError:
        has_apex = False

    parser = argparse.ArgumentParser()
    parser.add_argument("--apex-amp", action="store_true", default=False)
    parser.add_argument("--torchscript", action="store_true", default=False)


    def build(args, model, optimizer):
        use_amp = None
        if args.apex_amp and has_apex:
            use_amp = "apex"
        else:
            use_amp = "native"
        if args.torchscript:
            assert not use_amp == 'apex', 'Cannot use APEX AMP with torchscripted model'
            assert args.amp_backend not in ("apex", "deepspeed"), "scripted models need native AMP"
            model = torch.jit.script(model)
        if use_amp == "apex":
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        return model, optimizer
"""


def test_assert_refusing_apex_reports_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"train.py": TRAIN})
    assert not [c for c in _codes(root, "train.py", line_of(TRAIN, "assert not use_amp")) if c[0] == "NPU318"]
    assert not [c for c in _codes(root, "train.py", line_of(TRAIN, "not in (\"apex\"")) if c[0] == "NPU318"]
    # the choice itself keeps its finding
    assert ("NPU318", "warning") in _codes(root, "train.py", line_of(TRAIN, 'use_amp = "apex"'))


REQUIRE = """\
    import torch


    def wrap(args, model):
        assert args.amp_backend == "apex", "this trainer needs NVIDIA apex"
        assert args.amp_backend != "native" or args.amp_backend == "apex"
        return model
"""


def test_assert_requiring_apex_keeps_its_finding(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"train.py": REQUIRE})
    assert [c for c in _codes(root, "train.py", line_of(REQUIRE, 'assert args.amp_backend == "apex"'))
            if c[0] == "NPU318"]
    assert [c for c in _codes(root, "train.py", line_of(REQUIRE, 'or args.amp_backend == "apex"'))
            if c[0] == "NPU318"]
