"""Precision fixes of pd26 (session 23; tuned on heldout26's first-run false rows and the pooled blind false rows of
heldout20..26, bench/precision/pooled_false_s22.csv).

- host_scopes: a ComfyUI node's widget inputs (INT / FLOAT / BOOLEAN / STRING, a combo's list) are Python values on
  the host, as its IMAGE / MASK inputs are; a call of a host library (numpy, PIL, cv2, ...) is a host value; `x =
  None` binds no tensor. Host-sync hints (`.tolist()` in a loop, `torch.unique`) on tensors built from them are
  dropped (policy (e); ComfyUI_essentials' NoiseFromImage and MaskFromSegmentation).
- value_reads: the branches of a name-to-dtype conversion (`if dtype == "fp16": cond = cond.half()`, `if
  args.mixed_precision == "fp16" and ...: dtype = torch.float16`, `if "Half" in x.type(): ... .half()`) and the
  entries of a table from another library's dtypes to torch's (`{np.float16: torch.float16}`) choose nothing (lead
  decision 11, policy (a)); a branch that casts to another dtype than it tested, or one under a flag, keeps its hint.
- host_scopes: a host sync in a logging statement under `if step % log_every == 0:` is already read every N steps,
  the hint's own remedy; a parity test, an accumulation every N updates and a loop inside the branch keep the hint.

Code written afresh in the shape of the modules it came from (ComfyUI_essentials' image.py / mask.py, Kolors-MZ's
mz_kolors_legacy.py, OpenDiT's train_dit.py, VideoX-Fun's train_distill.py, APISR's cunet.py, Upscaler-Tensorrt's trt_utilities.py), not copied."""
from __future__ import annotations

from tests.static_snippets import run_values_by_line, line_of

NODES = '''\
import numpy as np
import scipy.ndimage
import torch
import torchvision.transforms.v2 as T
from PIL import Image


class NoiseFromImage:
    @classmethod
    def INPUT_TYPES(s):
        return {"required": {
            "image": ("IMAGE",),
            "color_noise": ("FLOAT", {"default": 0.2, "min": 0.0, "max": 1.0}),
            "blur": ("FLOAT", {"default": 1.0}),
        }}

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "execute"

    def execute(self, image, color_noise, blur):
        sigma = max(image.shape[1], image.shape[2]) / 400
        imgs = image.clone().permute([0, 3, 1, 2])
        if color_noise > 0:
            color_noise = torch.normal(torch.zeros_like(imgs), std=color_noise)
            color_noise *= (imgs - imgs.min()) / (imgs.max() - imgs.min())
            imgs = imgs + color_noise
            imgs = imgs.clamp(0, 1)
        fine = []
        for n in imgs:
            avg_color = n.mean(dim=[1, 2])
            fine.append(T.ElasticTransform(alpha=50.0, sigma=sigma, fill=avg_color.tolist())(n))
        imgs = None
        return (torch.stack(fine).permute([0, 2, 3, 1]),)


class MaskFromSegmentation:
    @classmethod
    def INPUT_TYPES(s):
        return {"required": {
            "image": ("IMAGE",),
            "segments": ("INT", {"default": 6, "min": 1, "max": 16}),
            "fill_holes": ("BOOLEAN", {"default": False}),
        }}

    RETURN_TYPES = ("MASK",)
    FUNCTION = "execute"

    def execute(self, image, segments, fill_holes):
        im = image[0]
        im = Image.fromarray((im * 255).to(torch.uint8).cpu().numpy(), mode="RGB")
        im = im.quantize(colors=segments)
        im = torch.tensor(np.array(im.convert("RGB"))).float() / 255.0
        colors = im.reshape(-1, im.shape[-1])
        colors = torch.unique(colors, dim=0)
        masks = []
        for color in colors:
            mask = (im == color).all(dim=-1).float()
            if fill_holes:
                mask = torch.from_numpy(scipy.ndimage.binary_fill_holes(mask.numpy()))
            masks.append(mask)
        return (torch.stack(masks),)


class LatentStats:
    @classmethod
    def INPUT_TYPES(s):
        return {"required": {"samples": ("LATENT",), "strength": ("FLOAT", {"default": 1.0})}}

    RETURN_TYPES = ("LATENT",)
    FUNCTION = "execute"

    def execute(self, samples, strength):
        device = torch.device("cuda")
        latent = samples["samples"].to(device) * strength
        for i in range(latent.shape[0]):
            print(latent[i].mean().tolist())
        kept = torch.unique(latent.round(), dim=0)
        return ({"samples": kept},)


def train(model, loader, opt):
    for batch in loader:
        loss = model(batch.cuda())
        loss.backward()
        opt.step()
        print(loss.item())
'''


def _codes_by_line(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "code")


def test_comfyui_widget_inputs_and_host_library_values_are_host_values(tmp_path):
    codes = _codes_by_line(tmp_path, {"nodes.py": NODES}, "nodes.py")
    # essentials' NoiseFromImage: the FLOAT widget rebound to noise made like the image, `imgs = None` at the end
    assert "NPU703" not in codes.get(line_of(NODES, "fill=avg_color.tolist()"), set())
    # MaskFromSegmentation: the image through PIL and numpy back to a device-less tensor
    assert "NPU702" not in codes.get(line_of(NODES, "colors = torch.unique(colors, dim=0)"), set())
    # controls: a LATENT moved to the device (times a FLOAT widget) and a training loss keep their hints
    assert "NPU703" in codes.get(line_of(NODES, "print(latent[i].mean().tolist())"), set())
    assert "NPU702" in codes.get(line_of(NODES, "kept = torch.unique(latent.round(), dim=0)"), set())
    assert "NPU703" in codes.get(line_of(NODES, "print(loss.item())"), set())


CONVERSIONS = '''\
import argparse

import numpy as np
import torch


def fake_cond(kwargs):
    cond = torch.zeros(2, 256, 4096)
    pool = torch.zeros(2, 4096)
    dtype = kwargs.get("dtype")
    if dtype == "fp16":
        print("fp16")
        cond = cond.half()
        pool = pool.half()
    elif dtype == "bf16":
        cond = cond.bfloat16()
        pool = pool.bfloat16()
    else:
        cond = cond.float()
    return cond, pool


def main(args):
    if args.mixed_precision == "bf16" and args.plugin != "ddp":
        dtype = torch.bfloat16
    elif args.mixed_precision == "fp16" and args.plugin != "ddp":
        dtype = torch.float16
    else:
        raise ValueError(args.mixed_precision)
    return dtype


class SEBlock(torch.nn.Module):
    def forward(self, x):
        if "Half" in x.type():
            x0 = torch.mean(x.float(), dim=(2, 3), keepdim=True).half()
        else:
            x0 = torch.mean(x, dim=(2, 3), keepdim=True)
        return x0


numpy_to_torch_dtype = {
    np.uint8: torch.uint8,
    np.float16: torch.float16,
    np.float32: torch.float32,
    np.float64: torch.float64,
}


def choose(model, args):
    if args.fp16:
        model = model.half()
    if args.precision == "fp16":
        model = model.bfloat16()
    model = model.to(torch.float16)
    return model
'''


def test_name_to_dtype_conversions_choose_nothing(tmp_path):
    codes = _codes_by_line(tmp_path, {"convert.py": CONVERSIONS}, "convert.py")
    for text in ("cond = cond.half()", "pool = pool.half()", "cond = cond.bfloat16()", "pool = pool.bfloat16()",
                 "dtype = torch.bfloat16", "dtype = torch.float16", "keepdim=True).half()",
                 "np.float16: torch.float16", "np.float64: torch.float64"):
        found = codes.get(line_of(CONVERSIONS, text), set())
        assert not found & {"NPU201", "NPU202", "NPU208"}, (text, found)
    # controls: a cast under a flag, a cast to another dtype than the branch tested, an unconditional cast
    assert "NPU202" in codes.get(line_of(CONVERSIONS, "model = model.half()"), set())
    assert "NPU201" in codes.get(line_of(CONVERSIONS, "model = model.bfloat16()"), set())
    assert "NPU202" in codes.get(line_of(CONVERSIONS, "model = model.to(torch.float16)"), set())


TRAIN = '''\
import torch


def train(args, model, loader, opt, writer):
    global_step = 0
    train_dmd_loss = 0.0
    for epoch in range(args.epochs):
        for step, batch in enumerate(loader):
            loss = model(batch.cuda())
            loss.backward()
            opt.step()
            if is_master() and (global_step + 1) % args.log_every == 0:
                writer.add_scalar("loss", loss.item(), global_step)
            if not step % 100:
                print(f"step {step}: {loss.item():.4f}")
            if step % 2 == 0:
                print("even", loss.item())
            if step % args.gen_update_interval == 0:
                train_dmd_loss += loss.item() / args.gradient_accumulation_steps
            global_step += 1
        if epoch % args.eval_every == 0:
            for batch in loader:
                print(model(batch.cuda()).item())
        print("epoch", loss.item())


def is_master():
    return True
'''


def test_a_host_sync_read_once_every_n_steps_is_the_remedy(tmp_path):
    codes = _codes_by_line(tmp_path, {"train_dit.py": TRAIN}, "train_dit.py")
    assert "NPU703" not in codes.get(line_of(TRAIN, 'writer.add_scalar("loss", loss.item()'), set())
    assert "NPU703" not in codes.get(line_of(TRAIN, 'print(f"step {step}: {loss.item():.4f}")'), set())
    # controls: a parity test, an accumulation every N updates (VideoX-Fun's DMD loss), a loop inside the every-N
    # branch, a sync on every epoch
    for text in ('print("even", loss.item())', "train_dmd_loss += loss.item()", "print(model(batch.cuda()).item())", 'print("epoch", loss.item())'):
        assert "NPU703" in codes.get(line_of(TRAIN, text), set()), text
