"""t35b (session 34, TUNED on heldout36 / heldout37): false families of the held-out draws, each on code shaped like
the tree it came from, with the nearest case that keeps its finding and severity."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, code_severities_by_line, line_of

# -- a boolean setting named flash_attn (python-audio-separator's Roformer configs, heldout36) ------------------------
ROFORMER_LOADER = """\
    import torch
    from torch import nn

    from .model_configuration import RoformerConfig


    class RoformerLoader:
        def _model_args(self, config):
            return {
                'dim': config.get('dim', 384),
                'attn_dropout': config.get('attn_dropout', 0.0),
                'flash_attn': config.get('flash_attn', True),
                'mlp_expansion_factor': config.get('mlp_expansion_factor', 4),
            }

        def _defaults(self):
            return {'dim': 384, 'depth': 6, 'flash_attn': True, 'sage_attention': False}

        def _from_settings(self, settings):
            return {'depth': settings.depth, 'flash_attn': settings.flash_attn}

        def _disable(self, config):
            config["flash_attention"] = False
            return getattr(config, "flash_attn", False)

        def load(self, path, config):
            model = self.build(self._model_args(config))
            model.load_state_dict(torch.load(path, map_location="cpu"))
            return model.to("cuda")


    PARAMETER_TYPES = {
        'dim': int,
        'attn_dropout': float,
        'flash_attn': bool,
    }


    def check(config):
        if config.get('sage_attention', False) and config.get('flash_attn', False):
            return "sage_attention and flash_attn are exclusive"
        return None


    NORMALISED = {'stereo': 'true', 'flash_attn': 'false'}
    """

# the nearest cases: the string is a value that names the implementation, or a key mapped to the implementation
ATTENTION_BACKENDS = """\
    import os

    import flash_attn
    import torch.nn.functional as F
    from flash_attn import flash_attn_func

    BACKEND = 'flash_attn'
    MODULES = {"flash_attn": flash_attn, "sdpa": F}
    KERNELS = {"flash_attn": flash_attn_func, "sdpa": F.scaled_dot_product_attention}


    def pick(config, parser):
        parser.add_argument("--attention_mode", choices=["sdpa", "flash_attn"], default="sdpa")
        mode = config.get("attention_mode", "flash_attn")
        table = KERNELS.get("flash_attn")
        return mode, table, os.environ.get("ATTN_BACKEND", BACKEND)
    """


# -- a torch.cuda function imported by name and rebound from torch.npu at module level (xDiT's timer / seeds, heldout36) --
TIMER = """\
import time

import torch
from torch.cuda import synchronize
from torch.cuda import manual_seed_all as device_manual_seed_all
from torch.cuda import empty_cache

try:
    import torch_musa
    from torch_musa.core.device import synchronize
except ModuleNotFoundError:
    pass

import xfuser.envs as envs
if envs._is_npu():
    from torch.npu import synchronize
try:
    from torch.npu import manual_seed_all as device_manual_seed_all
except ModuleNotFoundError:
    pass


def gpu_timer_decorator(func):
    def wrapper(*args, **kwargs):
        synchronize()
        start_time = time.time()
        result = func(*args, **kwargs)
        synchronize()
        device_manual_seed_all(0)
        empty_cache()
        torch.cuda.synchronize()
        print(f"{func.__name__} took {time.time() - start_time} seconds")
        return result

    return wrapper
"""

# the nearest case: the NPU import binds a local name inside a function, the module's name stays CUDA's
LOCAL_REBIND = """\
import torch
from torch.cuda import synchronize


def on_npu():
    from torch.npu import synchronize
    synchronize()


def timed(fn):
    synchronize()
    return fn()
"""


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_a_flash_attn_setting_switched_on_or_off_names_no_implementation(engine):
    found = codes_by_line(engine, ROFORMER_LOADER, "audio_separator/separator/roformer/roformer_loader.py")
    for needle in ("'flash_attn': config.get(", "'flash_attn': True, 'sage", "'flash_attn': settings.flash_attn",
                   'config["flash_attention"] = False', 'getattr(config, "flash_attn", False)', "'flash_attn': bool",
                   "config.get('flash_attn', False)", "'flash_attn': 'false'"):
        assert "NPU386" not in found.get(line_of(ROFORMER_LOADER, needle), set()), needle
    assert "NPU003" in found.get(line_of(ROFORMER_LOADER, 'model.to("cuda")'), set())    # control: CUDA stays


def test_a_flash_attn_string_that_names_the_implementation_keeps_its_finding(engine):
    found = codes_by_line(engine, ATTENTION_BACKENDS, "attention/config.py")
    for needle in ("BACKEND = 'flash_attn'", 'MODULES = {"flash_attn": flash_attn', 'KERNELS = {"flash_attn"',
                   'config.get("attention_mode", "flash_attn")',
                   'KERNELS.get("flash_attn")'):
        assert "NPU386" in found.get(line_of(ATTENTION_BACKENDS, needle), set()), needle


def test_a_torch_cuda_name_rebound_from_torch_npu_already_has_its_npu_path(engine):
    found = code_severities_by_line(engine, TIMER.encode(), "xfuser/core/utils/timer.py")
    for needle in ("from torch.cuda import synchronize", "from torch.cuda import manual_seed_all", "        synchronize()",
                   "device_manual_seed_all(0)"):
        lines = [i for i, text in enumerate(TIMER.splitlines(), 1) if needle in text]
        for line in lines:
            assert found.get(line) == {("NPU002", "info")}, (needle, line, found.get(line))
    # controls: a name the file never rebinds, and the attribute call, keep their error
    assert ("NPU002", "error") in found[line_of(TIMER, "from torch.cuda import empty_cache")]
    assert ("NPU002", "error") in found[line_of(TIMER, "        empty_cache()")]
    assert ("NPU002", "error") in found[line_of(TIMER, "torch.cuda.synchronize()")]


def test_a_rebinding_inside_a_function_leaves_the_module_name_cuda(engine):
    found = code_severities_by_line(engine, LOCAL_REBIND.encode(), "utils/timer.py")
    assert ("NPU002", "error") in found[line_of(LOCAL_REBIND, "from torch.cuda import synchronize")]
    assert ("NPU002", "error") in found[line_of(LOCAL_REBIND, "return fn()") - 1]
