"""t29b (issue 14, session 29; static test49): `apex.amp.initialize(` on an `apex` no import of the file binds."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _codes(src: bytes) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in _ENGINE.analyze_bytes(src, "train.py").findings}


_TRAIN = b'''import torch
from mmcv.runner import build_optimizer


def train_detector(model, dataset, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    # use apex fp16 optimizer
    if cfg.optimizer_config.get("use_fp16", False):
        model, optimizer = apex.amp.initialize(
            model.cuda(), optimizer, opt_level="O1")
    return model
'''


def test_apex_amp_initialize_without_an_import():
    assert (9, "NPU817") in _codes(_TRAIN)


def test_other_initialize_calls_stay_quiet():
    src = (b"import deepspeed\n\nengine, opt, _, _ = deepspeed.initialize(model=model, optimizer=opt)\n"
           b"torch.distributed.rpc.initialize()\nself.amp_state.initialize()\n")
    assert not {c for _, c in _codes(src)} & {"NPU817"}
