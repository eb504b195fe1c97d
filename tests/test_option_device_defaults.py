"""t31c (issue 14, session 31; tuned on test53's sgmse): a command-line option that chooses the trainer's device
(`--accelerator`, `--device`) with a string default naming the GPU is the keyword it is passed on as
(`Trainer(accelerator="gpu")`, NPU050); other options' "gpu" defaults and non-GPU defaults are not."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import codes_at, finding_keys_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# sgmse train.py (Lightning Trainer options declared apart, then `pl.Trainer(**vars(args_trainer))`)
_TRAIN = '''
import argparse
import pytorch_lightning as pl

base_parser = argparse.ArgumentParser(add_help=False)
parser = argparse.ArgumentParser()
trainer_parser = parser.add_argument_group("Trainer", description="Lightning Trainer")
trainer_parser.add_argument("--accelerator", type=str, default="gpu", help="Supports passing different accelerator types.")
trainer_parser.add_argument("--devices", default="auto", help="How many gpus to use.")
trainer_parser.add_argument("--max_epochs", type=int, default=-1)
parser.add_argument("--backend", type=str, default="gpu", help="KeOps reduction backend")
parser.add_argument("--device-type", default="cpu")
args = parser.parse_args()
trainer = pl.Trainer(accelerator=args.accelerator, devices=args.devices, max_epochs=args.max_epochs)
'''


def test_accelerator_option_default_gpu_flagged(engine):
    found = finding_keys_by_line(engine, _TRAIN, "train.py")
    assert codes_at(found, line_of(_TRAIN, '"--accelerator", type=str, default="gpu"')) == {"NPU050"}


def test_other_option_defaults_not_flagged(engine):
    found = finding_keys_by_line(engine, _TRAIN, "train.py")
    for needle in ('"--devices", default="auto"', '"--backend", type=str, default="gpu"', '"--device-type", default="cpu"'):
        assert not found.get(line_of(_TRAIN, needle)), needle
