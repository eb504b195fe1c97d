"""Session 31: one reader of a script's `__main__` guard and one parent map (astnodes), and the conventional
`cudnn` name bound to torch.backends.cudnn when the file itself never binds it (star_names)."""
from __future__ import annotations

import ast

import pytest

from auditor.astnodes import is_main_guard, parents_of
from tests.static_snippets import codes_by_line


@pytest.mark.parametrize("src, guard", [
    ('if __name__ == "__main__":\n    main()\n', True),
    ("if '__main__' == __name__:\n    main()\n", True),
    ('if __name__ == "__main__" and not args.dry_run:\n    main()\n', True),
    ('if __name__ != "__main__":\n    setup_logging()\n', False),
    ('if __name__ == "__main__" or FORCE:\n    main()\n', False),
    ('if name == "__main__":\n    main()\n', False),
    ('while __name__ == "__main__":\n    break\n', False),
])
def test_main_guard_forms(src, guard):
    assert is_main_guard(ast.parse(src).body[0]) is guard


def test_parents_of_maps_every_child_to_its_holder():
    tree = ast.parse("x = f(a, [b, c])\n")
    parents = parents_of(tree)
    call = tree.body[0].value
    b = call.args[1].elts[0]
    assert parents[id(b)] is call.args[1] and parents[id(call.args[1])] is call
    assert parents[id(tree.body[0])] is tree and id(tree) not in parents


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine
    return StaticEngine(load_rules())


# TFace's security/common/utils/model_init.py: the file never imports `cudnn` (a lost `import
# torch.backends.cudnn as cudnn`); a star import brings it the same way in other code bases
_LOST_IMPORT = '''\
import torch
from torch.nn import init


def init_model(net, restore=None):
    if restore is not None:
        net.load_state_dict(torch.load(restore, map_location="cpu"))
    if torch.cuda.is_available():
        cudnn.benchmark = True
        net.cuda()
    return net
'''

_STAR_IMPORT = '''\
from utils.common import *


def main(cfg):
    cudnn.deterministic = cfg.deterministic
    model = build_model(cfg)
    return model
'''

# controls: a `cudnn` the file binds to something else is not torch's
_CUPY = '''\
from cupy.cuda import cudnn


def conv_algo(handle, desc):
    return cudnn.getConvolutionForwardAlgorithm_v7(handle, desc)
'''

_LOCAL = '''\
def configure(args):
    cudnn = args.cudnn_settings
    cudnn.benchmark = True
    return cudnn
'''


def test_unbound_cudnn_is_torch_backends_cudnn(engine):
    assert "NPU006" in codes_by_line(engine, _LOST_IMPORT, "security/common/utils/model_init.py").get(9, set())
    assert "NPU006" in codes_by_line(engine, _STAR_IMPORT, "tools/train.py").get(5, set())


def test_cudnn_bound_by_the_file_is_not_rebound(engine):
    assert not any("NPU006" in codes for codes in codes_by_line(engine, _CUPY, "ops/conv.py").values())
    assert not any("NPU006" in codes for codes in codes_by_line(engine, _LOCAL, "cfg.py").values())
