"""tk40 (session 40; TUNED on test87, test88, test90, test91): Baidu warp-ctc's and 1ytic's warp-rnnt CUDA losses
(NPU416), CUDA-named helpers whose name holds the
letters "npu" / "hip" inside a word (NPU039), a CUDA toolkit folder handed to a build helper (NPU353), CLIP's /
open_clip's fp16 weight conversion (NPU247), VAR's `flash_if_available=True` (NPU825), Blender Cycles' CUDA backend
(NPU902). Each family with its nearest negatives."""
from __future__ import annotations

from tests.test_tk38 import _at, _codes, _line


# deep-text-recognition-benchmark train.py (trimmed)
DTRB_TRAIN = '''
import torch


def train(opt, device):
    if 'CTC' in opt.Prediction:
        if opt.baiduCTC:
            # need to install warpctc. see our guideline.
            from warpctc_pytorch import CTCLoss
            criterion = CTCLoss()
        else:
            criterion = torch.nn.CTCLoss(zero_infinity=True).to(device)
    return criterion
'''


def test_warp_ctc_import_and_bare_loss_are_a_cuda_extension_library():
    codes = _codes(DTRB_TRAIN, "train.py")
    assert _at(codes, _line(DTRB_TRAIN, "from warpctc_pytorch import CTCLoss"), "NPU416")
    assert _at(codes, _line(DTRB_TRAIN, "criterion = CTCLoss()"), "NPU416")
    # torch's own CTC loss and the comment naming warpctc stay quiet
    assert not any(c[1] == "NPU416" for c in codes if c[0] in (
        _line(DTRB_TRAIN, "torch.nn.CTCLoss"), _line(DTRB_TRAIN, "# need to install warpctc")))


def test_warp_rnnt_loss_is_a_cuda_extension_library():
    src = '''
    import torch
    from warp_rnnt import rnnt_loss


    class TransducerLoss(torch.nn.Module):
        def forward(self, log_probs, labels, frames_lengths, labels_lengths):
            return rnnt_loss(log_probs, labels, frames_lengths, labels_lengths, average_frames=False,
                             reduction="mean", blank=0, gather=True)
    '''
    codes = _codes(src, "criterion.py")
    assert _at(codes, _line(src, "from warp_rnnt import"), "NPU416")
    assert _at(codes, _line(src, "return rnnt_loss("), "NPU416")


def test_ctc_losses_of_torch_and_messages_stay_quiet():
    src = '''
    import logging
    import torch

    ctc = torch.nn.CTCLoss(blank=0, reduction="mean")
    logging.warning("pytorch warpctc is not installed; using torch.nn.CTCLoss")
    # from warpctc_pytorch import CTCLoss
    '''
    assert not any(c[1] == "NPU416" for c in _codes(src, "asr.py"))


# mermaid mermaid/libraries/functions/stn_nd.py (trimmed)
MERMAID_STN = '''
from mermaid.data_wrapper import USE_CUDA


class STNFunction_ND_BCXYZ_Compile(object):
    def backward_stn(self, input1, input2, grad_input1, grad_input2, grad_output, ndim, device_c, use_cuda=USE_CUDA,
                     zero_boundary=True):
        if use_cuda:
            if ndim == 1:
                my_lib_1D.BilinearSamplerBCW_updateGradInput_cuda_1D(input1, input2, grad_input1, grad_input2,
                                                                     grad_output, device_c, int(zero_boundary))
        else:
            my_lib_nd.BilinearSamplerBCXYZ_updateGradInput_ND(input1, input2, grad_input1, grad_input2, grad_output,
                                                              ndim, int(zero_boundary))
'''


def test_cuda_helper_whose_name_holds_npu_letters_inside_a_word():
    codes = _codes(MERMAID_STN, "stn_nd.py")
    assert _at(codes, _line(MERMAID_STN, "updateGradInput_cuda_1D("), "NPU039")
    assert not _at(codes, _line(MERMAID_STN, "updateGradInput_ND("), "NPU039")


def test_helpers_that_name_npu_or_hip_as_a_word_stay_quiet():
    src = '''
    move_cuda_to_npu(model)
    stats = cuda_npu_memory_stats(device)
    y = hip_or_cuda_kernel(x)
    z = cudaToNpu(x)
    '''
    assert not any(c[1] == "NPU039" for c in _codes(src, "helpers.py"))


# torch-radon setup.py (trimmed)
RADON_SETUP = '''
import os
from setuptools import setup
from build import build

cuda_home = os.getenv("CUDA_HOME", "/usr/local/cuda")
print(f"Using CUDA_HOME={cuda_home}")
build(cuda_home=cuda_home)
setup(name="torch_radon", packages=["torch_radon"])
'''


def test_cuda_toolkit_folder_handed_to_a_build_helper():
    codes = _codes(RADON_SETUP, "setup.py")
    assert _at(codes, _line(RADON_SETUP, "build(cuda_home=cuda_home)"), "NPU353")
    # the message showing the folder stays quiet
    assert not any(c[0] == _line(RADON_SETUP, "print(f\"Using CUDA_HOME") for c in codes)


def test_no_cuda_home_given_stays_quiet():
    src = '''
    from build_tools import build
    build(cuda_home=None, verbose=True)
    build(verbose=True)
    '''
    assert not any(c[1] == "NPU353" for c in _codes(src, "build.py"))


def test_clip_fp16_weight_conversion():
    src = '''
    from clip.model import convert_weights
    import open_clip


    def start_training(self):
        convert_weights(self.first_stage.prompter.clip_model)  # convert weights to float16 during training
        open_clip.convert_weights_to_lp(self.teacher, dtype=torch.float16)
    '''
    codes = _codes(src, "end_to_end_model.py")
    assert _at(codes, _line(src, "convert_weights(self.first_stage"), "NPU247")
    assert _at(codes, _line(src, "open_clip.convert_weights_to_lp("), "NPU247")


def test_eva_vit_fp16_conversion_call_not_its_definition():
    # MiniGPT-4 minigpt4/models/eva_vit.py (trimmed)
    src = '''
    def convert_weights_to_fp16(model: nn.Module):
        """Convert applicable model parameters to fp16"""
        def _convert_weights_to_fp16(l):
            if isinstance(l, (nn.Conv1d, nn.Conv2d, nn.Linear)):
                l.weight.data = l.weight.data.half()
        model.apply(_convert_weights_to_fp16)


    def create_eva_vit_g(img_size=224, precision="fp16"):
        model = VisionTransformer(img_size=img_size)
        if precision == "fp16":
            convert_weights_to_fp16(model)
        return model
    '''
    codes = _codes(src, "eva_vit.py")
    assert _at(codes, _line(src, "    convert_weights_to_fp16(model)"), "NPU247")
    assert not _at(codes, _line(src, "def convert_weights_to_fp16"), "NPU247")
    assert not _at(codes, _line(src, "model.apply(_convert_weights_to_fp16)"), "NPU247")


def test_other_convert_weights_stay_quiet():
    src = '''
    from tools.checkpoint import convert_weights

    state = convert_weights(torch.load(path, map_location="cpu"))
    '''
    assert not any(c[1] == "NPU247" for c in _codes(src, "convert.py"))


# VAR models/basic_var.py (trimmed)
VAR_ATTENTION = '''
from torch import nn


class SelfAttention(nn.Module):
    def __init__(
        self, block_idx, embed_dim=768, num_heads=12,
        attn_drop=0., proj_drop=0., attn_l2_norm=False, flash_if_available=True,
    ):
        super().__init__()
        self.using_flash = flash_if_available and flash_attn_func is not None


class AdaLNSelfAttn(nn.Module):
    def __init__(self, block_idx, last_drop_p, embed_dim, cond_dim, shared_aln: bool, norm_layer,
                 flash_if_available=False, fused_if_available=True):
        super().__init__()
        self.attn = SelfAttention(block_idx=block_idx, embed_dim=embed_dim, flash_if_available=flash_if_available)
'''


def test_var_flash_if_available_default_on():
    codes = _codes(VAR_ATTENTION, "basic_var.py")
    assert _at(codes, _line(VAR_ATTENTION, "attn_l2_norm=False, flash_if_available=True"), "NPU825")
    assert not _at(codes, _line(VAR_ATTENTION, "flash_if_available=False, fused_if_available"), "NPU825")
    assert not _at(codes, _line(VAR_ATTENTION, "flash_if_available=flash_if_available)"), "NPU825")


# OpenLRM scripts/data/objaverse/blender_script.py (trimmed)
OPENLRM_BLENDER = '''
import bpy

scene = bpy.context.scene
scene.render.engine = "CYCLES"
scene.cycles.device = "GPU"

# Set the device_type
cycles_preferences = bpy.context.preferences.addons["cycles"].preferences
cycles_preferences.compute_device_type = "CUDA"  # or "OPENCL"
cuda_devices = cycles_preferences.get_devices_for_type("CUDA")
for device in cuda_devices:
    device.use = True
'''


def test_blender_cycles_cuda_backend():
    codes = _codes(OPENLRM_BLENDER, "blender_script.py")
    assert _at(codes, _line(OPENLRM_BLENDER, 'compute_device_type = "CUDA"'), "NPU902")
    assert _at(codes, _line(OPENLRM_BLENDER, 'get_devices_for_type("CUDA")'), "NPU902")
    assert all(c[2] == "warning" for c in codes if c[1] == "NPU902")


def test_blender_backend_tried_in_turn_or_not_nvidia_stays_quiet():
    src = '''
    import bpy

    cprefs = bpy.context.preferences.addons["cycles"].preferences
    for compute_device_type in ("CUDA", "OPENCL", "NONE"):
        try:
            cprefs.compute_device_type = compute_device_type
            break
        except TypeError:
            pass
    cprefs.compute_device_type = "METAL"
    metal = cprefs.get_devices_for_type("METAL")
    print("Compute device selected: CUDA")
    '''
    assert not any(c[1] == "NPU902" for c in _codes(src, "render_shapenet.py"))
