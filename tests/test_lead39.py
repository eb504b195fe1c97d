"""Lead, session 39: a message that shows a precision setting through its getter reads it for a human (as t14z's
attribute reads in messages do); the getter in a condition, the setter, and a CUDA call in a message (lead decision 48)
keep their findings. Shaped on an autoregressive image model's argument helper that prints its TF32 state."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import code_severity_by_line

ENGINE = StaticEngine(load_rules())

ARG_UTIL = b"""import logging

import torch

logger = logging.getLogger(__name__)


class Args:
    @staticmethod
    def set_tf32(tf32: bool):
        if torch.cuda.is_available():
            torch.set_float32_matmul_precision('high' if tf32 else 'highest')
            print(f'[tf32] [precis] torch.get_float32_matmul_precision(): {torch.get_float32_matmul_precision()}')
            logger.info("matmul precision: %s", torch.get_float32_matmul_precision())
        if torch.get_float32_matmul_precision() == "highest":
            torch.set_float32_matmul_precision("high")
        print(f"running on {torch.cuda.get_device_name(0)}")
"""


def test_a_precision_getter_shown_in_a_message_is_a_read():
    found = code_severity_by_line(ENGINE, ARG_UTIL, "utils/arg_util.py")
    assert "NPU207" in found.get(12, {})                      # the setter
    assert not found.get(13) and not found.get(14)            # print / logger showing the getter's answer
    assert "NPU207" in found.get(15, {})                      # the getter deciding a branch
    assert found.get(17)                                      # a CUDA call in a message: decision 48
