"""setting_reads.reads_fact, read in one pass over the file's shared node list (h24b, session 24): what counts as a
read of a config key and what does not, on a yacs defaults module and a training script shaped like PSHuman's and
V-Express's."""
from __future__ import annotations

import ast
import textwrap

from auditor.project.setting_reads import reads_fact

YACS_DEFAULTS = textwrap.dedent("""\
    from yacs.config import CfgNode as CN
    _C = CN()
    _C.DEVICE = 'cuda'
    _C['SOLVER'] = CN()
    _C.SOLVER.BASE_LR = 1e-4
    del _C['UNUSED']
    """)
TRAIN = textwrap.dedent("""\
    import torch
    from omegaconf import OmegaConf
    cfg = OmegaConf.load(args.config)
    weight_dtype = torch.float16 if cfg.solver.mixed_precision == "fp16" else torch.float32
    lr = cfg["solver"]["learning_rate"]
    steps = cfg.solver.get("max_steps", 1000)
    trainer = Trainer(**cfg.trainer)
    model = instantiate(cfg.model, device=device)
    merged = {**cfg.data}
    """)


def test_assignment_targets_are_not_reads():
    fact = reads_fact(ast.parse(YACS_DEFAULTS))
    assert not {"DEVICE", "BASE_LR", "UNUSED"} & set(fact["named"])
    assert ["_C", "SOLVER"] in fact["under"]          # `_C.SOLVER.BASE_LR = ...` reads `_C.SOLVER` to store into it
    assert ["_C", "DEVICE"] not in fact["under"] and ["_C", "UNUSED"] not in fact["under"]
    assert fact["imported"] == ["yacs"]


def test_reads_by_attribute_subscript_and_get_and_handed_sections():
    fact = reads_fact(ast.parse(TRAIN))
    for section, key in (("solver", "mixed_precision"), ("solver", "learning_rate"), ("solver", "max_steps")):
        assert [section, key] in fact["under"]
    assert fact["handed"] == ["data", "model", "trainer"]
    assert "device" in fact["named"] and "fp16" in fact["named"]
    assert fact["imported"] == ["omegaconf", "torch"]
