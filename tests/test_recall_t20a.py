"""t20a (session 20): test22's misses and the kernel / third_party families around them."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# awd-lstm-lm's main.py / finetune.py: a --cuda switch on unless given, and the project's `model` module rebound to
# the network built from it
AWD_MAIN = b"""import argparse
import torch
import model

parser = argparse.ArgumentParser(description='PyTorch PennTreeBank RNN/LSTM Language Model')
parser.add_argument('--cuda', action='store_false',
                    help='use CUDA')
parser.add_argument('--tied', action='store_false',
                    help='tie the word embedding and softmax weights')
args = parser.parse_args()

model = model.RNNModel(args.model, ntokens, args.emsize, args.nhid)
if args.cuda:
    model = model.cuda()
    criterion = criterion.cuda()
"""


def test_store_false_cuda_option_is_on_by_default():
    assert _lines(AWD_MAIN, "NPU025") == [6]


def test_store_true_cuda_option_is_the_users_switch():
    assert _lines(AWD_MAIN.replace(b"store_false',\n                    help='use", b"store_true',\n  help='use"),
                  "NPU025") == []


def test_imported_module_rebound_to_a_network_is_not_the_module():
    assert _lines(AWD_MAIN, "NPU001") == [14, 15]


def test_function_of_an_imported_module_stays_quiet():
    src = b"from torchdrug import utils\n\ndef evaluate(self, batch):\n    return utils.cuda(batch, device=self.device)\n"
    assert _lines(src, "NPU001") == []
