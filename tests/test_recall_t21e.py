"""t21e (session 21): misses of static test24 (TUNED): argparse's `set_defaults(cuda=True)` (a CUDA switch given its
default apart from the option) and Lightning's integer `precision=16` (NPU256)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# e3_diffusion_for_molecules' qm9/data/args.py (test24): `--cuda` / `--no-cuda` share a dest, the default is set apart;
# the module that reads `args.cuda` is another one
QM9_ARGS = b"""import argparse


def setup_shared_args(parser):
    parser.add_argument('--num-epoch', type=int, default=255, metavar='N',
                        help='number of epochs to train (default: 511)')
    # Computation options
    parser.add_argument('--cuda', dest='cuda', action='store_true',
                        help='Use CUDA (default)')
    parser.add_argument('--no-cuda', '--cpu', dest='cuda', action='store_false',
                        help='Use CPU')
    parser.set_defaults(cuda=True)

    parser.add_argument('--float', dest='dtype', action='store_const', const='float',
                        help='Use floats.')
    return parser
"""


def test_set_defaults_turns_a_declared_cuda_switch_on():
    assert _lines(QM9_ARGS, "NPU025") == [12]


def test_set_defaults_off_or_undeclared_is_quiet():
    off = QM9_ARGS.replace(b"set_defaults(cuda=True)", b"set_defaults(cuda=False)")
    assert _lines(off, "NPU025") == []
    # a name no option of the file declares: `set_defaults(gpu=0)` is a value the code base may never read
    undeclared = QM9_ARGS.replace(b"set_defaults(cuda=True)", b"set_defaults(gpu=0)")
    assert _lines(undeclared, "NPU025") == []


def test_set_defaults_beside_a_device_type_option_is_quiet():
    # `--device cuda|cpu` chooses the device; the switch then serves that choice (`_DEVICE_TYPE_OPTION_RE`)
    src = QM9_ARGS.replace(b"    # Computation options\n",
                           b"    parser.add_argument('--device', type=str, default='cpu')\n")
    assert _lines(src, "NPU025") == []


# VideoTransformer-pytorch's model_pretrain.py (test24): Lightning 1.x's integer precision
VIDEO_TRANSFORMER = b"""import pytorch_lightning as pl
from pytorch_lightning.plugins import DDPPlugin


def main(args, find_unused_parameters):
    trainer = pl.Trainer(
        gpus=args.gpus,
        accelerator="ddp",
        precision=16,
        plugins=[DDPPlugin(find_unused_parameters=find_unused_parameters),],
        max_epochs=args.epoch,
    )
    return trainer
"""


def test_lightning_integer_precision_16_is_fp16():
    assert _lines(VIDEO_TRANSFORMER, "NPU256") == [9]


def test_other_precisions_and_other_callees_are_not_lightning_fp16():
    assert _lines(VIDEO_TRANSFORMER.replace(b"precision=16", b"precision=32"), "NPU256") == []
    assert _lines(VIDEO_TRANSFORMER.replace(b"precision=16", b"precision=args.precision"), "NPU256") == []
    printing = b"import numpy as np\nnp.set_printoptions(precision=16)\ntorch_round = round(1.0, 16)\n"
    assert _lines(printing, "NPU256") == []
