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


    def flash_attention(q, k, v):
        return flash_attn_func(q, k, v)


    FUNCTIONS = {"flash_attention": flash_attention, "sdpa": F.scaled_dot_product_attention}
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


# -- lucidrains' Attend: CUDA checks that only pick the sdp_kernel configuration (audio-separator, rvc-cli, heldout36/33) --
ATTEND = """\
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch import nn

FlashAttentionConfig = namedtuple("FlashAttentionConfig", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self, dropout=0.0, flash=False):
        super().__init__()
        self.dropout = dropout
        self.flash = flash
        self.cpu_config = FlashAttentionConfig(True, True, True)
        self.cuda_config = None

        if not torch.cuda.is_available() or not flash:
            return

        device_properties = torch.cuda.get_device_properties(torch.device("cuda"))

        if device_properties.major == 8 and device_properties.minor == 0:
            print("A100 GPU detected, using flash attention if input tensor is on cuda")
            self.cuda_config = FlashAttentionConfig(True, False, False)
        else:
            self.cuda_config = FlashAttentionConfig(False, True, True)

    def flash_attn(self, q, k, v):
        _, heads, q_len, _, k_len, is_cuda, device = *q.shape, k.shape[-2], q.is_cuda, q.device
        config = self.cuda_config if is_cuda else self.cpu_config
        if is_cuda and q.dtype != torch.float16:
            config = FlashAttentionConfig(False, True, True)
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0)
        return out
"""

# the nearest cases: the early return skips more than the configuration, and is_cuda also picks a device
ATTEND_DEVICE = """\
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch import nn

FlashAttentionConfig = namedtuple("FlashAttentionConfig", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self, flash=False):
        super().__init__()
        self.cpu_config = FlashAttentionConfig(True, True, True)
        self.cuda_config = None
        self.scale = torch.ones(1)
        if not torch.cuda.is_available() or not flash:
            return
        self.cuda_config = FlashAttentionConfig(True, False, False)
        self.scale = self.scale.cuda()

    def flash_attn(self, q, k, v):
        is_cuda = q.is_cuda
        config = self.cuda_config if is_cuda else self.cpu_config
        mask = torch.ones(q.shape[-2], device="cuda" if is_cuda else "cpu")
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask) * self.scale
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
                   'FUNCTIONS = {"flash_attention"',
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


def test_cuda_checks_that_only_pick_the_sdp_kernel_configuration_are_warnings(engine):
    found = code_severities_by_line(engine, ATTEND.encode(), "uvr/uvr_lib_v5/attend.py")
    assert found[line_of(ATTEND, "if not torch.cuda.is_available() or not flash:")] == {("NPU002", "warning")}
    assert ("NPU005", "warning") in found[line_of(ATTEND, "q.is_cuda, q.device")]
    assert ("NPU005", "error") not in found[line_of(ATTEND, "q.is_cuda, q.device")]


def test_cuda_checks_that_also_pick_a_device_keep_their_error(engine):
    found = code_severities_by_line(engine, ATTEND_DEVICE.encode(), "models/attend.py")
    assert ("NPU002", "error") in found[line_of(ATTEND_DEVICE, "if not torch.cuda.is_available() or not flash:")]
    assert ("NPU005", "error") in found[line_of(ATTEND_DEVICE, "is_cuda = q.is_cuda")]
