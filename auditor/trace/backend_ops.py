"""Backend-specific aten ops mapped back to the op (and Python API) the user called.

Which aten op a fused call lowers to depends on the device the trace runs on: fake tensors live on
the CPU, so F.scaled_dot_product_attention shows up as `_scaled_dot_product_flash_attention_for_cpu`,
convolutions as `mkldnn_convolution`; code captured on a GPU shows `_cudnn_*` / `*_cuda` ops. On the
NPU torch_npu registers the user-level op, so that is the one to judge.
"""
from __future__ import annotations

import re

SDPA_API = "torch.nn.functional.scaled_dot_product_attention"

# (pattern on the op key, the op torch_npu is asked about, the user-level API). First match wins.
_RULES: tuple[tuple[re.Pattern, str, str], ...] = tuple((re.compile(p), op, api) for p, op, api in (
    (r"^_scaled_dot_product_(flash_attention_for_cpu|flash_attention|efficient_attention|cudnn_attention"
     r"|fused_attention_overrideable)(_backward)?(\.\w+)?$", "scaled_dot_product_attention", SDPA_API),
    (r"^_(flash|efficient)_attention_(forward|backward)(\.\w+)?$", "scaled_dot_product_attention", SDPA_API),
    (r"^_fused_sdp_choice(\.\w+)?$", "scaled_dot_product_attention", SDPA_API),
    (r"^(cudnn|miopen|mkldnn)_convolution(\.\w+)?$", "convolution", "torch.nn.functional.conv2d"),
    (r"^(cudnn|miopen|mkldnn)_convolution_transpose(\.\w+)?$", "convolution", "torch.nn.functional.conv_transpose2d"),
    (r"^(cudnn|miopen)_convolution.*_backward.*$", "convolution_backward", "torch.nn.functional.conv2d"),
    (r"^(cudnn|miopen)_batch_norm(\.\w+)?$", "native_batch_norm", "torch.nn.functional.batch_norm"),
    (r"^(cudnn|miopen)_batch_norm_backward(\.\w+)?$", "native_batch_norm_backward", "torch.nn.functional.batch_norm"),
    (r"^_cudnn_rnn(_backward)?(\.\w+)?$", "lstm.input", "torch.nn.LSTM"),
    (r"^(mkldnn_rnn_layer|miopen_rnn)(_backward)?(\.\w+)?$", "lstm.input", "torch.nn.LSTM"),
    (r"^_cudnn_ctc_loss(\.\w+)?$", "_ctc_loss", "torch.nn.functional.ctc_loss"),
    (r"^_cudnn_ctc_loss_backward(\.\w+)?$", "_ctc_loss_backward", "torch.nn.functional.ctc_loss"),
    (r"^_cudnn_attention_(forward|backward)(\.\w+)?$", "scaled_dot_product_attention", SDPA_API),
))
_CUDA_SUFFIX = re.compile(r"^(\w+?)_cuda(\.\w+)?$")


def user_level_op(op: str) -> tuple[str, str | None]:
    """(op to judge, user-level API or None) for an aten op key such as 'mkldnn_convolution'."""
    for pattern, target, api in _RULES:
        if pattern.match(op):
            return target, api
    m = _CUDA_SUFFIX.match(op)
    if m:
        return m.group(1) + (m.group(2) or ""), None
    return op, None
