"""Model facts for `audit plan` in closed form, from a transformers config.json.

Parameter counts follow the modules transformers builds for the architecture (checked against the traced
model in tests/test_plan_model.py); FLOPs count the matrix multiplies of one forward + backward step without
recompute (backward = 2 x forward), attention scores over the full s x s square the way Megatron-LM's formula
(Narayanan et al. 2021, eq. 3) and torch.utils.flop_counter both count them; activation bytes per layer
follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", section 4),
generalised to grouped-query attention, gated MLPs and experts, and equal to their 34 sbh + 5 a s^2 b for
a GPT-3 layer.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


class ArchError(ValueError):
    """The config lacks what the closed forms need; the message says what."""


@dataclass
class Arch:
    name: str
    model_type: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int                      # dense MLP width (0 when every layer is MoE)
    vocab: int
    gated_mlp: bool               # SwiGLU-style: gate, up, down
    tied_embeddings: bool
    learned_positions: int = 0    # rows of a learned position table (GPT-2/3), else 0
    qkv_bias: bool = False
    linear_bias: bool = False     # every Linear has a bias (GPT-2/3)
    norm_params: int = 1          # per normalised feature: 1 for RMSNorm, 2 for LayerNorm
    qk_norm: bool = False
    dropout: bool = False
    dtype: str = "bfloat16"
    # MoE
    experts: int = 0
    top_k: int = 0
    moe_ffn: int = 0
    shared_ffn: int = 0           # total width of the shared expert(s), 0 when none
    shared_gate: bool = False     # Qwen2-MoE's sigmoid gate on the shared expert
    moe_layers: int = 0           # how many of the layers are MoE

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 0 and self.moe_layers > 0

    @property
    def dense_layers(self) -> int:
        return self.layers - self.moe_layers

    # -- parameters ----------------------------------------------------------------------------------

    def attention_params(self) -> int:
        h, q, kv = self.hidden, self.q_dim, self.kv_dim
        n = h * q + 2 * h * kv + q * h
        if self.qkv_bias or self.linear_bias:
            n += q + 2 * kv
        if self.linear_bias:
            n += h
        if self.qk_norm:
            n += 2 * self.head_dim
        return n

    def mlp_params(self, width: int) -> int:
        h = self.hidden
        if self.gated_mlp:
            return 3 * h * width + (2 * width + h if self.linear_bias else 0)
        return 2 * h * width + (width + h if self.linear_bias else 0)

    def norm_params_per_layer(self) -> int:
        return 2 * self.norm_params * self.hidden

    def moe_block_params(self) -> tuple[int, int]:
        """(total, active per token) parameters of one MoE block: experts, router, shared expert."""
        h = self.hidden
        expert = self.mlp_params(self.moe_ffn)
        router = h * self.experts
        shared = self.mlp_params(self.shared_ffn) if self.shared_ffn else 0
        gate = h if self.shared_gate else 0
        total = self.experts * expert + router + shared + gate
        active = self.top_k * expert + router + shared + gate
        return total, active

    def layer_params(self, moe: bool) -> tuple[int, int]:
        base = self.attention_params() + self.norm_params_per_layer()
        if moe:
            total, active = self.moe_block_params()
            return base + total, base + active
        dense = self.mlp_params(self.ffn)
        return base + dense, base + dense

    def embedding_params(self) -> int:
        return self.vocab * self.hidden + self.learned_positions * self.hidden

    def head_params(self) -> int:
        """Output projection (lm_head) and the final norm."""
        return (0 if self.tied_embeddings else self.vocab * self.hidden) + self.norm_params * self.hidden

    def parameters(self) -> dict:
        dense_total, _ = self.layer_params(False)
        moe_total, moe_active = self.layer_params(True) if self.is_moe else (0, 0)
        layers_total = self.dense_layers * dense_total + self.moe_layers * moe_total
        layers_active = self.dense_layers * dense_total + self.moe_layers * moe_active
        total = self.embedding_params() + layers_total + self.head_params()
        active = self.embedding_params() + layers_active + self.head_params()
        expert_total = self.moe_layers * self.experts * self.mlp_params(self.moe_ffn) if self.is_moe else 0
        return {"total": total, "active": active, "embedding": self.embedding_params(),
                "per_layer": dense_total if not self.is_moe else moe_total, "experts": expert_total,
                "non_expert": total - expert_total}

    # -- FLOPs ---------------------------------------------------------------------------------------

    def matmul_params_per_token(self) -> int:
        """Weights every token multiplies through (active experts only), lm_head included, embeddings not."""
        attn = self.hidden * self.q_dim * 2 + 2 * self.hidden * self.kv_dim
        per_dense = attn + (3 if self.gated_mlp else 2) * self.hidden * self.ffn
        n = self.dense_layers * per_dense
        if self.is_moe:
            mult = 3 if self.gated_mlp else 2
            per_moe = (attn + self.top_k * mult * self.hidden * self.moe_ffn + self.hidden * self.experts
                       + mult * self.hidden * self.shared_ffn + (self.hidden if self.shared_gate else 0))
            n += self.moe_layers * per_moe
        return n + self.vocab * self.hidden

    def forward_flops_per_token(self, seq: int) -> int:
        """2 FLOPs per multiply-add through the weights, plus QK^T and AV over the full s x s square."""
        return 2 * self.matmul_params_per_token() + 4 * seq * self.q_dim * self.layers

    def step_flops(self, seq: int, sequences: int) -> int:
        """One forward + backward (backward = 2 x forward), no recompute, for `sequences` of `seq` tokens."""
        return 3 * self.forward_flops_per_token(seq) * seq * sequences

    def closed_forms(self, seq: int, sequences: int) -> dict:
        """The textbook forms beside ours, and why they differ."""
        tokens = seq * sequences
        params = self.parameters()
        out = {"six_nd": 6 * params["active"] * tokens,
               "six_nd_non_embedding": 6 * (params["active"] - params["embedding"]) * tokens}
        if not self.is_moe and not self.gated_mlp and self.kv_heads == self.heads and self.ffn == 4 * self.hidden:
            h, l, v = self.hidden, self.layers, self.vocab
            out["megatron_2021"] = int(72 * sequences * seq * l * h * h * (1 + seq / (6 * h) + v / (12 * l * h)))
        return out

    # -- activations (Korthikanti et al. 2022, generalised) --------------------------------------------

    def activation_terms(self, moe: bool) -> tuple[float, float]:
        """(c, d): bytes of one layer's stored activations = s*b*(c + d*s) with no parallelism; c collects the
        per-token terms (x h in the paper's notation: 34 h for GPT-3), d*s the attention-score terms (5 a s)."""
        h, q, kv = self.hidden, self.q_dim, self.kv_dim
        drop = 1 if self.dropout else 0
        c = 4 * h                    # inputs of the two norms (2 bytes each)
        c += 2 * h                   # input of the QKV projection
        c += 2 * q + 2 * kv          # Q and K kept for QK^T
        c += 2 * kv                  # V kept for the attention over values
        c += 2 * q                   # input of the output projection
        c += drop * h                # attention-output dropout mask
        if moe:
            k, f = self.top_k, self.moe_ffn
            c += 2 * h * k           # dispatched copies of the token for its k experts
            c += (6 if self.gated_mlp else 4) * f * k
            if self.shared_ffn:
                c += 2 * h + (6 if self.gated_mlp else 4) * self.shared_ffn
        else:
            c += 2 * h               # input of the first MLP projection
            c += (6 if self.gated_mlp else 4) * self.ffn   # activation input(s) and the down-projection input
        c += drop * h                # MLP dropout mask
        d = (2 + 3 * drop) * self.heads   # softmax output; with dropout also its mask (1) and output (2)
        return float(c), float(d)

    def activation_bytes_per_layer(self, seq: int, micro_batch: int, tp: int = 1, cp: int = 1,
                                   recompute: str = "none", flash: bool = True, moe: bool | None = None,
                                   sp: bool = True) -> float:
        """Stored bytes of one layer for one micro-batch on one device, with tensor parallelism (with sequence
        parallelism everything divides by tp; without it the norm inputs, the inputs of the QKV and first MLP
        projections and the dropout masks stay whole: Korthikanti's sbh(10 + 24/t + 5as/ht)), context
        parallelism (sequence divided by cp) and recompute: 'selective' drops the attention-score terms,
        'full' keeps only the layer input."""
        moe = self.is_moe if moe is None else moe
        s_local = seq / cp
        if recompute == "full":
            return 2 * self.hidden * s_local * micro_batch / (tp if sp else 1)
        c, d = self.activation_terms(moe)
        score = 0.0 if (recompute == "selective" or flash) else d * seq   # scores: s_local x s (all keys)
        lse = 4 * self.heads if flash and recompute != "selective" else 0  # flash keeps an fp32 logsumexp per row
        whole = 0.0 if sp or tp == 1 else (8 + 2 * (1 if self.dropout else 0)) * self.hidden
        return s_local * micro_batch * (whole + (c - whole + score + lse) / tp)

    def korthikanti(self, seq: int, micro_batch: int, tp: int = 1, recompute: str = "none") -> float:
        """The paper's own per-layer form: sbh(34 + 5as/h)/t with TP+SP, 34sbh/t with selective recompute."""
        s, b, h, a = seq, micro_batch, self.hidden, self.heads
        if recompute == "selective":
            return 34 * s * b * h / tp
        return s * b * h * (34 + 5 * a * s / h) / tp

    def to_dict(self) -> dict:
        return asdict(self)


def _get(data: dict, *names, default=None):
    for name in names:
        if name in data and data[name] is not None:
            return data[name]
    return default


def arch_from_config(data: dict, name: str = "") -> Arch:
    """An Arch from a transformers config.json dict (llama, mistral, qwen2/3, mixtral, qwen2_moe, qwen3_moe,
    gpt2 and similar decoder-only families)."""
    mt = data.get("model_type", "")
    cfg = dict(data)
    if "text_config" in cfg and isinstance(cfg["text_config"], dict) and "hidden_size" not in cfg:
        cfg = {**cfg["text_config"], "model_type": cfg["text_config"].get("model_type", mt)}
        mt = cfg["model_type"]
    if mt.startswith("deepseek") or "kv_lora_rank" in cfg:
        raise ArchError(f"model_type {mt!r}: multi-head latent attention has no closed form here yet; "
                        "plan it from the trace (an audit_entry() file) instead")
    hidden = _get(cfg, "hidden_size", "n_embd", "d_model")
    layers = _get(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _get(cfg, "num_attention_heads", "n_head")
    vocab = _get(cfg, "vocab_size")
    missing = [k for k, v in (("hidden_size", hidden), ("num_hidden_layers", layers),
                              ("num_attention_heads", heads), ("vocab_size", vocab)) if not v]
    if missing:
        raise ArchError(f"config.json lacks {', '.join(missing)}: not a decoder-only language model config")
    kv = _get(cfg, "num_key_value_heads", default=heads)
    head_dim = _get(cfg, "head_dim", default=hidden // heads)
    gpt2 = mt in ("gpt2", "gpt_bigcode", "gpt_neo", "gptj", "opt", "bloom")
    act = str(_get(cfg, "hidden_act", "activation_function", default="")).lower()
    gated = not gpt2 and act in ("silu", "swish", "swiglu", "gelu_pytorch_tanh", "geglu", "gelu") \
        and mt not in ("gpt_neox", "phi", "falcon")
    ffn = _get(cfg, "intermediate_size", "n_inner", "ffn_dim", default=None) or 4 * hidden
    experts = _get(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0
    top_k = _get(cfg, "num_experts_per_tok", "moe_topk", default=0) or 0
    moe_ffn = _get(cfg, "moe_intermediate_size", default=None) or (ffn if experts else 0)
    shared = _get(cfg, "shared_expert_intermediate_size", default=0) or 0
    if not shared and _get(cfg, "n_shared_experts", default=0):
        shared = cfg["n_shared_experts"] * moe_ffn
    moe_layers = 0
    if experts and top_k:
        step = _get(cfg, "decoder_sparse_step", default=1) or 1
        only_mlp = set(_get(cfg, "mlp_only_layers", default=[]) or [])
        first_dense = _get(cfg, "first_k_dense_replace", default=0) or 0
        moe_layers = sum(1 for i in range(layers)
                         if i not in only_mlp and i >= first_dense and (i + 1) % step == 0)
    dropout = any(float(_get(cfg, k, default=0) or 0) > 0 for k in ("resid_pdrop", "attn_pdrop", "hidden_dropout",
                                                                    "attention_dropout", "dropout"))
    dtype = str(_get(cfg, "torch_dtype", "dtype", default="bfloat16")).replace("torch.", "")
    if dtype in ("float32", "float"):
        dtype = "bfloat16"   # training in mixed precision: the master copy is counted by the optimizer bytes
    return Arch(
        name=name or mt, model_type=mt, hidden=int(hidden), layers=int(layers), heads=int(heads),
        kv_heads=int(kv), head_dim=int(head_dim), ffn=int(ffn), vocab=int(vocab), gated_mlp=gated,
        tied_embeddings=bool(_get(cfg, "tie_word_embeddings", default=gpt2)),
        learned_positions=int(_get(cfg, "n_positions", default=0) or 0) if gpt2 else 0,
        qkv_bias=bool(_get(cfg, "attention_bias", "qkv_bias", default=mt in ("qwen2", "qwen2_moe"))),
        linear_bias=gpt2, norm_params=2 if gpt2 else 1, qk_norm=mt in ("qwen3", "qwen3_moe", "olmo2"),
        dropout=dropout, dtype=dtype, experts=int(experts) if moe_layers else 0, top_k=int(top_k),
        moe_ffn=int(moe_ffn) if moe_layers else 0, shared_ffn=int(shared), shared_gate=mt == "qwen2_moe" and bool(shared),
        moe_layers=moe_layers)


@dataclass
class ModelFacts:
    """What the planner needs about the model, and where each number came from."""
    arch: Arch
    seq: int
    global_batch: int
    parameters: dict
    flops_per_step: int
    closed_forms: dict
    measured: dict = field(default_factory=dict)   # from the fake-tensor trace, when it ran
    notes: list = field(default_factory=list)


def model_facts(arch: Arch, seq: int, global_batch: int) -> ModelFacts:
    return ModelFacts(arch=arch, seq=seq, global_batch=global_batch, parameters=arch.parameters(),
                      flops_per_step=arch.step_flops(seq, global_batch),
                      closed_forms=arch.closed_forms(seq, global_batch))
