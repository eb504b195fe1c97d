"""An Ascend variable set FROM a CUDA one (pd56, session 32; VideoMind's scripts/*.sh:
`export ASCEND_RT_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES`): the line is the port itself, so the CUDA name's read
there is no finding; its own setting, and a read that feeds anything else, keep theirs."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_shell_ascend_variable_from_cuda_variable(engine):
    src = """\
        #!/bin/bash
        set -e
        export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
        export ASCEND_RT_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES
        export ASCEND_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
        GPUS=$CUDA_VISIBLE_DEVICES
        torchrun --nproc_per_node 8 videomind/train/train.py
        """
    found = codes_by_line(engine, src, "scripts/train.sh")
    assert "NPU004" not in found.get(line_of(src, "ASCEND_RT_VISIBLE_DEVICES=$"), set())
    assert "NPU004" not in found.get(line_of(src, "ASCEND_VISIBLE_DEVICES="), set())
    # controls: the CUDA setting, and a copy into the script's own variable
    assert "NPU004" in found.get(line_of(src, "export CUDA_VISIBLE_DEVICES=0"), set())
    assert "NPU004" in found.get(line_of(src, "GPUS=$CUDA"), set())


def test_python_ascend_variable_from_cuda_variable(engine):
    src = """\
        import os

        import torch

        if "CUDA_VISIBLE_DEVICES" in os.environ:
            os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
        os.environ["ASCEND_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
        gpus = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")
        """
    found = codes_by_line(engine, src, "videomind/utils/env.py")
    assert "NPU004" not in found.get(line_of(src, 'os.environ["ASCEND_RT'), set())
    assert "NPU004" not in found.get(line_of(src, 'os.environ["ASCEND_VISIBLE'), set())
    assert "NPU004" in found.get(line_of(src, "gpus = "), set())      # control: a read the code uses itself
