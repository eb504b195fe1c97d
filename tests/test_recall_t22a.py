"""t22a (session 22): misses of the fresh kernel sample tuned_t22a (TUNED): RAFT's `autocast = torch.cuda.amp.autocast`
bound in a module-level `try:` beside a dummy class in `except:` (auditor/static/context.py), and RAFT-Stereo's
comparisons with the name of a CUDA kernel variant (NPU836, rules/kernel_cuda_variant_compared.yaml)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# RAFT's core/raft.py, copied by RAFT-Stereo, FlowFormer and most optical-flow / stereo code built on RAFT
RAFT = b"""import torch
import torch.nn as nn

try:
    autocast = torch.cuda.amp.autocast
except:
    # dummy autocast for PyTorch < 1.6
    class autocast:
        def __init__(self, enabled):
            pass
        def __enter__(self):
            pass
        def __exit__(self, *args):
            pass


class RAFT(nn.Module):
    def forward(self, image1, image2, iters=12):
        with autocast(enabled=self.args.mixed_precision):
            fmap1, fmap2 = self.fnet([image1, image2])
        fmap1 = fmap1.float()
        for itr in range(iters):
            with autocast(enabled=self.args.mixed_precision):
                net, up_mask, delta_flow = self.update_block(fmap1, fmap2)
        return net
"""


def test_alias_bound_in_a_module_level_try_is_read_at_its_uses():
    assert _lines(RAFT, "NPU012") == [5, 19, 23]


def test_alias_bound_in_a_function_or_a_module_level_if_stays_local():
    # a function's local alias is a value of that function (context.py's `local_refs`), and a module-level `if`
    # may hold the NPU branch beside it: only a `try:` body binds like a top-level line
    in_function = b"""import torch

def forward(x, flag):
    autocast = torch.cuda.amp.autocast
    with autocast(enabled=flag):
        return x

def other(x, flag):
    with autocast(enabled=flag):
        return x
"""
    assert 9 not in _lines(in_function, "NPU012")
    in_if = b"""import torch

if torch.cuda.is_available():
    autocast = torch.cuda.amp.autocast
else:
    autocast = torch.npu.amp.autocast

def f(x, flag):
    with autocast(enabled=flag):
        return x
"""
    assert 9 not in _lines(in_if, "NPU012")


# RAFT-Stereo's core/raft_stereo.py and train_stereo.py (the stereo code built on it keeps the same option)
RAFT_STEREO = b"""import argparse

from core.corr import CorrBlock1D, PytorchAlternateCorrBlock1D, CorrBlockFast1D, AlternateCorrBlock


def build_corr(args, fmap1, fmap2):
    if args.corr_implementation == "reg": # Default
        corr_block = CorrBlock1D
    elif args.corr_implementation == "alt": # More memory efficient than reg
        corr_block = PytorchAlternateCorrBlock1D
    elif args.corr_implementation == "reg_cuda": # Faster version of reg
        corr_block = CorrBlockFast1D
    elif args.corr_implementation == "alt_cuda": # Faster version of alt
        corr_block = AlternateCorrBlock
    return corr_block(fmap1, fmap2, radius=args.corr_radius, num_levels=args.corr_levels)


parser = argparse.ArgumentParser()
parser.add_argument('--corr_implementation', choices=["reg", "alt", "reg_cuda", "alt_cuda"], default="reg",
                    help="correlation volume implementation")
"""


def test_cuda_kernel_variant_compared():
    assert _lines(RAFT_STEREO, "NPU836") == [11, 13]
    finding = next(f for f in ENGINE.analyze_bytes(RAFT_STEREO, "main.py").findings if f.code == "NPU836")
    assert (finding.category, finding.severity) == ("kernel", "info")


def test_cuda_kernel_variant_listed_or_passed_is_quiet():
    # the options listed in `choices=[...]` (line 19) choose nothing; a switch key is a config read
    src = RAFT_STEREO + b"""
def configure(p):
    if 'use_cuda' not in p:
        p['use_cuda'] = False
    return run(kernel="flash_cuda")
"""
    assert _lines(src, "NPU836") == [11, 13]


# olmo-core's nn/functional/cross_entropy_loss.py: an annotated declaration of the name before the guarded binding
OLMO_CE = b"""from typing import Callable, Optional

_fused_linear_cross_entropy_loss: Optional[Callable] = None

try:
    from liger_kernel.ops.fused_linear_cross_entropy import (  # type: ignore
        LigerFusedLinearCrossEntropyFunction,
    )

    _fused_linear_cross_entropy_loss = LigerFusedLinearCrossEntropyFunction.apply
except ImportError:
    pass


def fused_linear_cross_entropy_loss(_input, weight, labels):
    if _fused_linear_cross_entropy_loss is None:
        raise RuntimeError("'fused_linear_cross_entropy_loss' requires liger-kernel")
    return _fused_linear_cross_entropy_loss(_input, weight, labels)
"""


def test_annotated_declaration_of_an_alias_is_not_a_use():
    lines = _lines(OLMO_CE, "NPU404")
    assert 3 not in lines
    assert 18 in lines      # the call through the name is the use
