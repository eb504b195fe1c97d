"""t22d (session 22): misses of the blind static split test25: diffusers' xformers helpers imported by the
Tune-A-Video family, the bf16 fallback around diffusers' Upsample2D, OpenPCDet's CUDA extensions imported from their
package folder and its `spconv_utils` re-export of spconv, `deepspeed.init_distributed()`, flash-attention's setup.py
probe of CUDAGeneratorImpl.h."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# Tune-A-Video train_tuneavideo.py (and SimDA, vid2vid-zero, Gen-L-Video), abridged
TRAIN = b"""import torch
from accelerate import Accelerator
from diffusers.utils.import_utils import is_xformers_available
from diffusers.utils.import_utils import is_accelerate_available


def main(unet, enable_xformers_memory_efficient_attention: bool = True):
    if enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            unet.enable_xformers_memory_efficient_attention()
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")
"""

# VideoSwap's animatediff_models/attention.py, abridged (it never uses the processor class; SDXL pipelines import it for
# upcast_vae's isinstance check)
PROCESSORS = b"""from diffusers.models.attention_processor import XFormersAttnProcessor, AttnProcessor2_0
from diffusers.utils.import_utils import is_xformers_available
"""


def test_xformers_helper_imports_are_not_findings_and_the_check_stays_npu391():
    # lead decision 14 (docs/recall.md): the import of an availability helper runs on Ascend; its call carries the
    # finding (as test_recall_t14t's transformers probe)
    found = _found(TRAIN)
    assert 3 not in found and 4 not in found
    assert ("NPU391", "warning") in found[9]    # the call keeps its own rule
    procs = _found(PROCESSORS)
    assert 1 not in procs and 2 not in procs


# diffusers 0.11's resnet.py Upsample2D, as Tune-A-Video / vid2vid-zero / SimDA / ControlVideo copy it
UPSAMPLE = b"""import torch
import torch.nn as nn
import torch.nn.functional as F


class Upsample2D(nn.Module):
    def forward(self, hidden_states, output_size=None):
        assert hidden_states.shape[1] == self.channels

        if self.use_conv_transpose:
            return self.conv(hidden_states)

        # Cast to float32 to as 'upsample_nearest2d_out_frame' op does not support bfloat16
        # TODO(Suraj): Remove this cast once the issue is fixed in PyTorch
        # https://github.com/pytorch/pytorch/issues/86679
        dtype = hidden_states.dtype
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(torch.float32)

        # upsample_nearest_nhwc fails with large batch sizes. see https://github.com/huggingface/diffusers/issues/984
        if hidden_states.shape[0] >= 64:
            hidden_states = hidden_states.contiguous()

        # if `output_size` is passed we force the interpolation output
        # size and do not make use of `scale_factor=2`
        if output_size is None:
            hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        else:
            hidden_states = F.interpolate(hidden_states, size=output_size, mode="nearest")

        # If the input is bfloat16, we cast back to bfloat16
        if dtype == torch.bfloat16:
            hidden_states = hidden_states.to(dtype)

        return hidden_states
"""

# the same shape with no cast up before it, and a cast to the low dtype: the branch copies the dtype it tested
NO_FALLBACK = b"""import torch


def load(model, dtype):
    if dtype == torch.bfloat16:
        model = model.to(dtype)
    if dtype == torch.float16:
        model = model.to(torch.float16)
    return model
"""


# transformer-lens' vllm worker_extension.py: bf16 to fp32 bytes for the wire, no cast back (numpy has no bf16)
HOST_CAST = b"""import torch


def encode_tensor(t: torch.Tensor):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.to(torch.float32)
    return {"data": t.numpy().tobytes()}
"""


def test_bf16_fallback_casts_are_info():
    found = _found(UPSAMPLE)
    assert ("NPU201", "info") in found[17]      # the cast up
    assert ("NPU201", "info") in found[32]      # the cast back
    assert _found(NO_FALLBACK) == {}
    assert _found(HOST_CAST) == {}


# OpenPCDet pcdet/ops/roiaware_pool3d/roiaware_pool3d_utils.py (DSVT, UniTR), abridged
ROIAWARE = b"""import torch
from torch.autograd import Function

from ...utils import common_utils
from . import roiaware_pool3d_cuda
from . import pointnet2_stack_cuda as pointnet2
from . import box_ops


def points_in_boxes_gpu(points, boxes):
    box_idxs_of_pts = points.new_zeros((points.shape[0],), dtype=torch.int).fill_(-1)
    roiaware_pool3d_cuda.points_in_boxes_gpu(boxes.contiguous(), points.contiguous(), box_idxs_of_pts)
    pointnet2.ball_query_wrapper(boxes, points)
    common_utils.check_numpy_to_torch(points)
    box_ops.run(points)
    return box_idxs_of_pts
"""


def test_extension_imported_from_its_package_folder():
    found = _found(ROIAWARE)
    for line in (5, 6, 12, 13):
        assert ("NPU379", "error") in found[line]
    assert 4 not in found and 7 not in found and 14 not in found and 15 not in found


# UniTR pcdet/models/backbones_3d/focal_sparse_conv/focal_sparse_conv.py, abridged; the relative form is
# OpenPCDet's backbones (`from ...utils.spconv_utils import replace_feature, spconv`)
FOCAL = b"""import torch.nn as nn
from pcdet.utils.spconv_utils import spconv
from ...utils.box_utils import boxes_to_corners_3d


class FocalSparseConv(spconv.SparseModule):
    def __init__(self, inplanes, planes, indice_key=None):
        super().__init__()
        self.conv = spconv.SubMConv3d(inplanes, planes, kernel_size=3, stride=1, bias=False, indice_key=indice_key)
"""

BACKBONE = b"""import torch.nn as nn
from ...utils.spconv_utils import replace_feature, spconv


def post_act_block(in_channels, out_channels, kernel_size, indice_key=None):
    return spconv.SparseSequential(spconv.SubMConv3d(in_channels, out_channels, kernel_size, indice_key=indice_key))
"""


def test_spconv_reexported_by_its_utils_module():
    found = _found(FOCAL)
    assert ("NPU416", "error") in found[6] and ("NPU416", "error") in found[9]
    assert 3 not in found
    assert ("NPU416", "error") in _found(BACKBONE)[6]


# LM-Infinite scripts/eval_infinite_ppl.py, abridged
DEEPSPEED = b"""import os
import deepspeed


def main(args):
    world_size = int(os.getenv("WORLD_SIZE", "1"))
    if world_size > 1:
        deepspeed.init_distributed()
"""

# matmulfreellm / flash-attention setup.py, abridged
SETUP = b"""import os
import torch

# Check, if ATen/CUDAGeneratorImpl.h is found, otherwise use ATen/cuda/CUDAGeneratorImpl.h
generator_flag = []
torch_dir = torch.__path__[0]
if os.path.exists(os.path.join(torch_dir, "include", "ATen", "CUDAGeneratorImpl.h")):
    generator_flag = ["-DOLD_GENERATOR_PATH"]
"""


def test_deepspeed_init_distributed_and_generator_probe():
    assert ("NPU418", "info") in _found(DEEPSPEED)[8]
    found = _found(SETUP, "setup.py")
    assert ("NPU871", "info") in found[7]
    assert 4 not in found
