"""r2d (session 36, TUNED on heldout39): false families of the held-out draw, each on code shaped like the tree it
came from, with the nearest case that keeps its finding and severity."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _codes(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "code")


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- a context manager called without `with` (Style-Bert-VITS2's train_ms.py) ----------------------------------------
TRAIN_SCRIPT = """\
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("medium")
torch.backends.cuda.sdp_kernel("flash")
torch.backends.cuda.enable_flash_sdp(True)


def attend(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
"""


def test_sdp_kernel_called_without_with_sets_nothing(tmp_path):
    codes = _codes(tmp_path, {"train_ms.py": TRAIN_SCRIPT}, "train_ms.py")
    assert "NPU349" not in codes.get(line_of(TRAIN_SCRIPT, 'sdp_kernel("flash")'), set())
    # nearest: the setter is a plain function, and the context manager entered with `with` sets the flags
    assert "NPU349" in codes[line_of(TRAIN_SCRIPT, "enable_flash_sdp(True)")]
    assert "NPU349" in codes[line_of(TRAIN_SCRIPT, "with torch.backends.cuda.sdp_kernel")]


# -- a ctypes structure's field names (fastsdcpu's stable-diffusion.cpp binding) --------------------------------------
SDCPP_TYPES = """\
from ctypes import Structure, c_bool, c_char_p, c_int


class SDContextParams(Structure):
    _fields_ = [
        ("model_path", c_char_p),
        ("n_threads", c_int),
        ("flash_attn", c_bool),
        ("diffusion_flash_attn", c_bool),
    ]


class Options:
    attention_backend = "flash_attn"
"""


def test_ctypes_field_names_select_no_attention(tmp_path):
    codes = _codes(tmp_path, {"src/backend/gguf/sdcpp_types.py": SDCPP_TYPES}, "src/backend/gguf/sdcpp_types.py")
    assert "NPU386" not in codes.get(line_of(SDCPP_TYPES, '("flash_attn", c_bool)'), set())
    # nearest: the same name as a value chosen outside a struct layout keeps its finding
    assert "NPU386" in codes[line_of(SDCPP_TYPES, 'attention_backend = "flash_attn"')]


SDCPP_LATE_FIELDS = """\
import ctypes


class SDImage(ctypes.Structure):
    pass


SDImage._fields_ = [("width", ctypes.c_uint32), ("flash_attn", ctypes.c_bool)]
"""


def test_ctypes_fields_assigned_after_the_class(tmp_path):
    codes = _codes(tmp_path, {"sd/types.py": SDCPP_LATE_FIELDS}, "sd/types.py")
    assert "NPU386" not in codes.get(line_of(SDCPP_LATE_FIELDS, "SDImage._fields_"), set())


# -- ONNX Runtime's I/O-binding device name, read off the provider ORT chose (Style-Bert-VITS2's utils) ---------------
ORT_UTILS = """\
import onnxruntime
import torch


def get_onnx_device_options(onnx_session):
    first_provider = onnx_session.get_providers()[0]
    if first_provider == "CUDAExecutionProvider":
        device_type = "cuda"
    elif first_provider == "DmlExecutionProvider":
        device_type = "dml"
    else:
        device_type = "cpu"
    return device_type


def pick_device():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.zeros(1, device=device)
"""


def test_io_binding_device_name_of_the_chosen_provider_is_no_choice(tmp_path):
    codes = _codes(tmp_path, {"style_bert_vits2/utils/__init__.py": ORT_UTILS}, "style_bert_vits2/utils/__init__.py")
    assert "NPU003" not in codes.get(line_of(ORT_UTILS, 'device_type = "cuda"'), set())
    # nearest: torch's own device choice in the same file keeps its finding
    assert codes[line_of(ORT_UTILS, 'device = "cuda" if torch.cuda.is_available()')] & {"NPU002", "NPU003"}


# -- a flash switch whose path is plain SDPA (fastsdcpu's AuraSR) ------------------------------------------------------
AURA_SR = """\
import torch
import torch.nn.functional as F
from torch import nn


class Attend(nn.Module):
    def __init__(self, dropout=0.0, flash=False):
        super().__init__()
        self.flash = flash

    def flash_attn(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

    def forward(self, q, k, v):
        if self.flash:
            return self.flash_attn(q, k, v)
        sim = torch.einsum("b h i d, b h j d -> b h i j", q, k)
        return torch.einsum("b h i j, b h j d -> b h i d", sim.softmax(dim=-1), v)


class Transformer(nn.Module):
    def __init__(self, dim, dim_head=64, heads=8, depth=1, flash_attn=True, ff_mult=4):
        super().__init__()
        self.attend = Attend(flash=flash_attn)
"""

ATTEND_WITH_BACKENDS = AURA_SR.replace(
    "        return F.scaled_dot_product_attention(q, k, v)",
    "        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):\n"
    "            return F.scaled_dot_product_attention(q, k, v)")


def test_flash_switch_of_plain_sdpa_is_dropped(tmp_path):
    codes = _codes(tmp_path, {"src/upscale/aura_sr.py": AURA_SR}, "src/upscale/aura_sr.py")
    assert "NPU825" not in codes.get(line_of(AURA_SR, "flash_attn=True, ff_mult=4"), set())
    # nearest: the switch that also turns on CUDA SDPA backend choices keeps its finding
    kept = _codes(tmp_path / "b", {"src/upscale/aura_sr.py": ATTEND_WITH_BACKENDS}, "src/upscale/aura_sr.py")
    assert "NPU825" in kept[line_of(ATTEND_WITH_BACKENDS, "flash_attn=True, ff_mult=4")]


# -- `or` of device choices that are all another accelerator's (fastsdcpu's backend/device.py) ------------------------
DEVICE_PY = """\
import platform

import torch
from constants import DEVICE


def get_device_name() -> str:
    if DEVICE == "cuda" or DEVICE == "mps":
        default_gpu_index = torch.cuda.current_device()
        return torch.cuda.get_device_name(default_gpu_index)
    return platform.processor()


def get_memory() -> int:
    if DEVICE == "cuda" or DEVICE == "cpu":
        return torch.cuda.mem_get_info()[0]
    return 0
"""


def test_or_of_cuda_and_other_accelerator_choices_is_a_gate(tmp_path):
    files = {"src/backend/device.py": DEVICE_PY, "src/constants.py": "from os import environ\n"
             "DEVICE = environ.get('DEVICE', 'cpu')\n"}
    sev = _severities(tmp_path, files, "src/backend/device.py")
    assert sev[line_of(DEVICE_PY, "torch.cuda.current_device()")] == {"warning"}
    assert sev[line_of(DEVICE_PY, "torch.cuda.get_device_name(")] == {"warning"}
    # nearest: an `or` with a CPU arm runs on an Ascend host: the CUDA call there keeps its error
    assert "error" in sev[line_of(DEVICE_PY, "torch.cuda.mem_get_info()")]


# -- defaults every caller overrides: a helper call's value, a classmethod called through its class --------------------
CLIP_UP = """\
from functools import lru_cache

from torch import nn

from imaginairy.utils import get_device


class CLIPEmbedder(nn.Module):
    def __init__(self, version="openai/clip-vit-large-patch14", device="cuda"):
        super().__init__()
        self.device_name = device


@lru_cache
def clip_up_models():
    return CLIPEmbedder(device=get_device())
"""

UTILS = """\
import torch


def get_device():
    return "npu" if hasattr(torch, "npu") else "cpu"
"""

AURA_CLASS = """\
from torch import nn


class AuraSR:
    def __init__(self, config, device: str = "cpu"):
        self.device = device

    @classmethod
    def from_pretrained(cls, model_id: str = "fal-ai/AuraSR", device: str = "cuda"):
        return cls({}, device=device)
"""

AURA_CALLER = """\
from backend.upscale.aura_sr import AuraSR


def upscale_aura_sr(image_path: str):
    return AuraSR.from_pretrained("fal/AuraSR-v2", device="cpu")
"""


def test_default_overridden_by_a_helpers_value_is_info(tmp_path):
    files = {"imaginairy/enhancers/upscale_riverwing.py": CLIP_UP, "imaginairy/utils.py": UTILS}
    sev = _severities(tmp_path, files, "imaginairy/enhancers/upscale_riverwing.py")
    assert sev[line_of(CLIP_UP, 'device="cuda"')] == {"info"}
    # nearest: a caller that writes the CUDA device itself lets no choice through: the default keeps its error
    literal = {**files, "imaginairy/enhancers/upscale_riverwing.py": CLIP_UP.replace(
        "CLIPEmbedder(device=get_device())", 'CLIPEmbedder(device=torch.device("cuda", 0))').replace(
        "from torch import nn", "import torch\nfrom torch import nn")}
    sev = _severities(tmp_path / "b", literal, "imaginairy/enhancers/upscale_riverwing.py")
    assert "error" in sev[line_of(CLIP_UP, 'device="cuda"') + 1]


def test_classmethod_default_every_call_through_its_class_overrides_is_info(tmp_path):
    files = {"src/backend/upscale/aura_sr.py": AURA_CLASS, "src/backend/upscale/aura_sr_upscale.py": AURA_CALLER}
    sev = _severities(tmp_path, files, "src/backend/upscale/aura_sr.py")
    assert sev[line_of(AURA_CLASS, 'device: str = "cuda"')] == {"info"}
    # nearest: a call that leaves the device out lets the default through: it keeps its error
    bare = {**files, "src/backend/upscale/aura_sr_upscale.py": AURA_CALLER.replace(', device="cpu"', "")}
    sev = _severities(tmp_path / "b", bare, "src/backend/upscale/aura_sr.py")
    assert "error" in sev[line_of(AURA_CLASS, 'device: str = "cuda"')]


# -- a cast whose result is only written to disk (imaginAIry's vendored refiners ModelConverter) ----------------------
MODEL_CONVERTER = """\
import torch
from safetensors.torch import save_file


class ModelConverter:
    def save_to_safetensors(self, path, metadata=None, half=False):
        state_dict = self.get_state_dict()
        if half:
            state_dict = {key: value.half() for key, value in state_dict.items()}
        save_file(state_dict, path, metadata=metadata)

    def half_model(self, model, x):
        weights = {key: value.half() for key, value in model.state_dict().items()}
        model.load_state_dict(weights)
        save_file(weights, "model.safetensors")
        return model(x)
"""


def test_a_cast_only_saved_to_disk_has_no_dtype_hint(tmp_path):
    codes = _codes(tmp_path, {"refiners/fluxion/model_converter.py": MODEL_CONVERTER},
                   "refiners/fluxion/model_converter.py")
    assert "NPU202" not in codes.get(line_of(MODEL_CONVERTER, "state_dict = {key: value.half()"), set())
    # nearest: the cast weights are also loaded into the model that then runs: the hint stays
    assert "NPU202" in codes[line_of(MODEL_CONVERTER, "weights = {key: value.half()")]
