"""FLOPs of one aten call: torch.utils.flop_counter's formulas, plus the CPU attention kernels it lacks.

On the CPU (where fake tensors live) `F.scaled_dot_product_attention` dispatches to
`_scaled_dot_product_flash_attention_for_cpu(_backward)`, which has no entry in
`torch.utils.flop_counter.flop_registry`; without one the SDPA path of a model counts no attention
FLOPs at all while the eager path (bmm -> softmax -> bmm) counts them. The CPU kernels compute what the
CUDA flash kernel computes, so they get its formulas (`sdpa_flop_count`, `sdpa_backward_flop_count`;
the backward recomputes the scores, as flash attention does). `_grouped_mm` (transformers' grouped MoE
experts) counts 2 * rows * in * out. `convolution_backward` is counted here as the forward's FLOPs once
per gradient it computes (input, weight): torch's formula ignores `groups`, which overcounts a
depthwise convolution (Mamba's conv1d) by its channel count.
"""
from __future__ import annotations

import torch
from torch.utils.flop_counter import conv_flop_count, flop_registry, sdpa_backward_flop_count, sdpa_flop_count


def _heads_first(shape) -> tuple:
    """(B, H, S, D); a 3-D (H, S, D) tensor is one batch."""
    shape = tuple(shape)
    return shape if len(shape) == 4 else (1, *shape)


def _cpu_flash_forward(query, key, value, *args, out_val=None, **kwargs) -> int:
    return sdpa_flop_count(_heads_first(query.shape), _heads_first(key.shape), _heads_first(value.shape))


def _cpu_flash_backward(grad_out, query, key, value, *args, out_val=None, **kwargs) -> int:
    return sdpa_backward_flop_count(_heads_first(grad_out.shape), _heads_first(query.shape),
                                    _heads_first(key.shape), _heads_first(value.shape))


def _grouped_mm(mat_a, mat_b, *args, out_val=None, **kwargs) -> int:
    """(S, K) x (E, K, N) with offsets: every row meets one expert's weight: 2 * S * K * N."""
    if mat_a.dim() == 2 and mat_b.dim() == 3:
        return 2 * mat_a.shape[0] * mat_a.shape[1] * mat_b.shape[-1]
    if out_val is not None and isinstance(out_val, torch.Tensor):
        return 2 * out_val.numel() * mat_a.shape[-1]
    return 0


def _conv_backward(grad_out, x, weight, bias_sizes, stride, padding, dilation, transposed, output_padding,
                   groups, output_mask, *args, out_val=None, **kwargs) -> int:
    # the weight's shape already holds C_in / groups, so the forward's count is right for grouped convs
    forward = conv_flop_count(list(x.shape), list(weight.shape), list(grad_out.shape), transposed)
    return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))


OVERRIDES = {torch.ops.aten.convolution_backward: _conv_backward}
EXTRA_FORMULAS = {}
for _name, _formula in (("_scaled_dot_product_flash_attention_for_cpu", _cpu_flash_forward),
                        ("_scaled_dot_product_flash_attention_for_cpu_backward", _cpu_flash_backward),
                        ("_grouped_mm", _grouped_mm)):
    _packet = getattr(torch.ops.aten, _name, None)
    if _packet is not None and _packet not in flop_registry:
        EXTRA_FORMULAS[_packet] = _formula


def op_flops(func: torch._ops.OpOverload, args: tuple, kwargs: dict, out) -> int:
    """FLOPs of one call (0 for ops without a formula: elementwise ops, views)."""
    packet = func._overloadpacket
    formula = OVERRIDES.get(packet) or flop_registry.get(packet) or EXTRA_FORMULAS.get(packet)
    if formula is None:
        return 0
    try:
        return int(formula(*args, **kwargs, out_val=out))
    except (AssertionError, TypeError, ValueError, IndexError):
        return 0  # a shape the formula does not describe: count nothing rather than stop the trace
