"""The attention family on realistic model code: FlashAttention v2/v3, varlen with bert_padding, rotary and
norm kernels, xformers and the SDPA backend switches, each with the npu_fusion_attention notes a porter needs."""
from __future__ import annotations

from test_rules_apex import audit, codes

FLASH_MODEL = '''\
import math
import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func, flash_attn_varlen_func
    from flash_attn.bert_padding import pad_input, unpad_input
    from flash_attn.layers.rotary import apply_rotary_emb
    from flash_attn.ops.triton.layer_norm import RMSNorm as FlashRMSNorm
except ImportError:  # flash_attn is optional; comments about flash_attn_func are not code
    flash_attn_func = None


class Attention(torch.nn.Module):
    """Uses flash_attn_func when available (see flash_attn.bert_padding for the varlen path)."""

    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.norm = FlashRMSNorm(dim, eps=1e-6)
        self.attn_fn = flash_attn_func
        self.dropout = dropout

    def forward(self, q, k, v, cos, sin, mask):
        q = apply_rotary_emb(q, cos, sin, interleaved=False)
        if mask is None:
            return self.attn_fn(q, k, v, dropout_p=self.dropout, causal=True)
        q_unpad, indices, cu_seqlens, max_s, _ = unpad_input(q, mask)
        out = flash_attn_varlen_func(q_unpad, k, v, cu_seqlens, cu_seqlens, max_s, max_s, causal=True)
        logger.debug("flash_attn_varlen_func took the unpadded path")
        return pad_input(out, indices, q.shape[0], q.shape[1])
'''


def test_flash_model_lines():
    found = audit(FLASH_MODEL)
    assert codes(found) == {
        6: ["NPU340", "NPU341"], 7: ["NPU345", "NPU345"], 8: ["NPU343"], 9: ["NPU344"],
        19: ["NPU344"], 20: ["NPU340"], 24: ["NPU343"], 26: ["NPU340"], 27: ["NPU345"], 28: ["NPU341"],
        30: ["NPU345"],
    }
    # flash-attn's fused norms are Triton / CUDA kernel implementations: kernel, whatever they compute
    assert all(f.category == ("kernel" if f.code == "NPU344" else "attention") for fs in found.values() for f in fs)


def test_fusion_attention_notes_are_in_the_substitutions():
    found = audit(FLASH_MODEL)
    dense = found[26][0].substitution
    # verified against torch_npu-npu_fusion_attention.md: BSND layout, keep_prob, scale default 1, sparse_mode 3
    for needle in ("torch_npu.npu_fusion_attention", '"BSND"', "keep_prob=1 - dropout_p", "sparse_mode=3",
                   "scale defaults to 1"):
        assert needle in dense, needle
    varlen = found[28][0].substitution
    for needle in ('"TND"', "actual_seq_qlen=cu_seqlens_q[1:]", "actual_seq_kvlen"):
        assert needle in varlen, needle
    assert "torch_npu.npu_rotary_mul" in found[24][0].substitution
    assert "torch_npu.npu_rms_norm" in found[19][0].substitution


def test_flash_attn_v3_and_packed_variants():
    found = audit('''\
        import flash_attn_interface
        from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func, flash_attn_varlen_kvpacked_func
        from flash_attn import flash_attn_with_kvcache

        out, lse = flash_attn_interface.flash_attn_func(q, k, v, causal=True)
        o1 = flash_attn_qkvpacked_func(qkv, 0.0, causal=True)
        o2 = flash_attn_varlen_kvpacked_func(q, kv, cu_q, cu_k, max_q, max_k)
        o3 = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens)
    ''')
    assert codes(found) == {1: ["NPU346"], 2: ["NPU340", "NPU341"], 3: ["NPU342"], 5: ["NPU340"],
                            6: ["NPU340"], 7: ["NPU341"], 8: ["NPU342"]}
    assert "qkv.unbind(2)" in found[6][0].substitution
    assert "kv.unbind(1)" in found[7][0].substitution
    assert "npu_fused_infer_attention_score" in found[8][0].substitution


def test_xformers_and_sdpa_switches():
    found = audit('''\
        import torch
        import xformers
        import xformers.ops as xops
        from torch.nn.attention import SDPBackend, sdpa_kernel

        XFORMERS_VERSION = xformers.__version__
        out = xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
        torch.backends.cuda.enable_flash_sdp(True)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        with sdpa_kernel(SDPBackend.MATH):
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    ''')
    assert codes(found) == {2: ["NPU348"], 3: ["NPU348"], 4: ["NPU397"], 6: ["NPU348"], 7: ["NPU347", "NPU347"],
                            8: ["NPU349"], 9: ["NPU350", "NPU387"], 11: ["NPU387"]}
    assert "sparse_mode=2" in found[7][0].substitution       # xformers' causal mask is top-left aligned
    assert "use_compatible_impl" in found[8][0].substitution


def test_attention_words_in_strings_and_docs_are_quiet():
    found = audit('''\
        ATTN_IMPL = "flash_attention_2"  # a transformers setting, checked by the model loader
        def f(cfg):
            """Set use_flash_attn=True to call flash_attn.flash_attn_func."""
            if cfg.use_flash_attn:
                warnings.warn("flash_attn_varlen_func needs cu_seqlens")
    ''')
    # the setting itself is one info finding (NPU386: transformers runs it through torch_npu on Ascend)
    assert [(f.code, f.severity) for f in found.pop(1)] == [("NPU386", "info")]
    assert found == {}
