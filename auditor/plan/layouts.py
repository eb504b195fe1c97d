"""Layouts (DP x TP x PP x CP x EP, ZeRO stage, recompute, micro-batch) and what each costs on a cluster:
memory of the most loaded device, bytes per collective and the link that carries them, and a step-time model.

Conventions (Megatron-LM's): ranks are ordered tp, cp, ep (taken from the data-parallel ranks), dp, pp, so
tensor parallelism is innermost and the first dimension to leave the scale-up domain is the outermost one
that does not fit; sequence parallelism accompanies tensor parallelism; experts are sharded by ep and tp;
ZeRO shards over the dp x cp ranks (experts over dp x cp / ep). Bandwidth is per device and per direction.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from auditor.plan.clusters import Cluster
from auditor.plan.model import ModelFacts

GIB = 1024 ** 3
RECOMPUTE = ("none", "selective", "full")


class LayoutError(ValueError):
    """A --layout that cannot work for this model and cluster: the message says why."""


@dataclass(frozen=True)
class Layout:
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    zero: int = 1
    recompute: str = "selective"
    micro_batch: int = 1
    virtual_stages: int = 0       # 0: chosen automatically

    @property
    def devices(self) -> int:
        return self.dp * self.tp * self.pp * self.cp


def parse_layout(text: str) -> dict:
    """'dp=128,tp=8,pp=16,zero=1,recompute=selective' -> keyword arguments for Layout."""
    out: dict = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise LayoutError(f"--layout: {part!r} is not key=value")
        if key in ("mb", "micro_batch", "microbatch"):
            key = "micro_batch"
        if key in ("vpp", "virtual_stages"):
            key = "virtual_stages"
        if key == "recompute":
            if value not in RECOMPUTE:
                raise LayoutError(f"--layout: recompute must be one of {', '.join(RECOMPUTE)}, not {value!r}")
            out[key] = value
            continue
        if key not in ("dp", "tp", "pp", "cp", "ep", "zero", "micro_batch", "virtual_stages"):
            raise LayoutError(f"--layout: unknown key {key!r}; use dp, tp, pp, cp, ep, zero, recompute, "
                              "micro_batch, vpp")
        try:
            out[key] = int(value)
        except ValueError:
            raise LayoutError(f"--layout: {key}={value!r} is not a whole number") from None
        if out[key] < (0 if key in ("zero", "virtual_stages") else 1) or (key == "zero" and out[key] > 3):
            raise LayoutError(f"--layout: {key}={value} is out of range")
    return out


def check(layout: Layout, facts: ModelFacts, cluster: Cluster) -> str | None:
    """Why a layout cannot run this model on this cluster, or None."""
    a = facts.arch
    if layout.devices != cluster.devices:
        return (f"dp x tp x pp x cp = {layout.devices}, but the cluster has {cluster.devices} devices")
    if a.heads % layout.tp:
        return f"tp={layout.tp} does not divide the {a.heads} attention heads"
    if layout.tp > a.kv_heads and layout.tp % a.kv_heads or layout.tp <= a.kv_heads and a.kv_heads % layout.tp:
        return f"tp={layout.tp} does not fit the {a.kv_heads} key/value heads"
    if layout.pp > a.layers:
        return f"pp={layout.pp} is more stages than the {a.layers} layers"
    if facts.seq % (2 * layout.cp) and layout.cp > 1:
        return f"cp={layout.cp}: the sequence length {facts.seq} must divide into 2 x cp chunks"
    if layout.ep > 1:
        if not a.is_moe:
            return "ep > 1 needs a mixture-of-experts model"
        if a.experts % layout.ep:
            return f"ep={layout.ep} does not divide the {a.experts} experts"
        if layout.dp % layout.ep:
            return f"ep={layout.ep} must divide dp={layout.dp} (expert parallelism uses data-parallel ranks)"
    if facts.global_batch % (layout.dp * layout.micro_batch):
        return (f"the global batch of {facts.global_batch} sequences does not split into dp={layout.dp} x "
                f"micro_batch={layout.micro_batch}")
    return None


def _virtual_stages(layout: Layout, layers_per_stage: int, micro_batches: int) -> int:
    if layout.pp == 1:
        return 1
    if layout.virtual_stages:
        return layout.virtual_stages
    if micro_batches % layout.pp:
        return 1                   # the interleaved schedule needs micro-batches in multiples of pp
    best = 1
    for v in range(2, 9):
        if layers_per_stage % v == 0 and layers_per_stage // v >= 2:
            best = v
    return best


def _link(cluster: Cluster, span: int) -> tuple[str, float, bool]:
    """(link name, GB/s per device, crosses the scale-up domain) for a group spanning `span` ranks."""
    if span <= cluster.scale_up_size.value:
        return cluster.scale_up_link, cluster.scale_up_gb_s.value, False
    if cluster.scale_out_gb_s is None:
        return cluster.scale_out_link or "scale-out", float("nan"), True
    return cluster.scale_out_link, cluster.scale_out_gb_s.value, True


def evaluate(layout: Layout, facts: ModelFacts, cluster: Cluster, A: dict) -> dict:
    a, s, gb = facts.arch, facts.seq, facts.global_batch
    tp, pp, cp, dp, ep, mb = layout.tp, layout.pp, layout.cp, layout.dp, layout.ep, layout.micro_batch
    eff, ov, bpp = A["efficiency"], A["overlap"], A["bytes_per_param"]
    m = gb // (dp * mb)                       # micro-batches per step per pipeline
    lps = math.ceil(a.layers / pp)            # layers on the most loaded stage
    v = _virtual_stages(layout, lps, m)
    moe_share = a.moe_layers / a.layers if a.is_moe else 0.0
    params = facts.parameters
    P = params["total"]
    expert_per_layer = (params["experts"] / a.moe_layers) if a.is_moe else 0.0
    layer_total = (P - a.embedding_params() - a.head_params())
    nonexp_per_layer = (layer_total - params["experts"]) / a.layers
    # -- parameters per device (first and last stage) ------------------------------------------------
    stage_nonexp = nonexp_per_layer * lps / tp
    stage_exp = expert_per_layer * moe_share * lps / (tp * ep)
    emb = a.embedding_params() / tp
    head = (a.vocab * a.hidden if (a.tied_embeddings and pp > 1) or not a.tied_embeddings else 0) / tp
    first_ne = stage_nonexp + emb + (head if pp == 1 else 0)
    last_ne = stage_nonexp + head if pp > 1 else first_ne
    g_ne, g_e = dp * cp, max(dp * cp // ep, 1)    # ZeRO / gradient-sync groups
    zero = layout.zero

    def memory(nonexp: float, exp_: float, first: bool) -> dict:
        w = bpp["weights"] * (nonexp / (g_ne if zero >= 3 else 1) + exp_ / (g_e if zero >= 3 else 1))
        if zero >= 3:   # one layer's full weights gathered at a time, the next one prefetched
            w += 2 * bpp["weights"] * (nonexp_per_layer + expert_per_layer * moe_share) / tp
        g = bpp["grads"] * (nonexp / (g_ne if zero >= 2 else 1) + exp_ / (g_e if zero >= 2 else 1))
        o = bpp["optimizer"] * (nonexp / (g_ne if zero >= 1 else 1) + exp_ / (g_e if zero >= 1 else 1))
        per_layer = a.activation_bytes_per_layer(s, mb, tp, cp, layout.recompute, A["flash_attention"],
                                                 sp=A["sequence_parallel"])
        if first:
            in_flight = min(m, pp) * (1 + (pp - 1) / (pp * v) if v > 1 else 1)
            act = per_layer * lps * in_flight + 2 * s / cp * mb * a.hidden / tp * in_flight
        else:
            act = per_layer * lps
        if not first or pp == 1:   # logits in bf16, their fp32 copy for the loss and its gradient
            act += s / cp * mb * a.vocab / tp * (2 + 4 + 4)
        return {"weights": w, "grads": g, "optimizer": o, "activations": act, "total": w + g + o + act}

    mem_first = memory(first_ne, stage_exp, True)
    mem_last = memory(last_ne, stage_exp, False) if pp > 1 else mem_first
    worst = max(mem_first, mem_last, key=lambda d: d["total"])
    capacity = (cluster.hbm_gb.value * 1e9 / GIB - A["reserved_gib"]) * A["usable_fraction"]
    fits = worst["total"] / GIB <= capacity

    # -- compute per micro-batch on the most loaded stage ------------------------------------------
    tok = s * mb
    per_layer_mm = (a.matmul_params_per_token() - a.vocab * a.hidden) / a.layers
    attn_core = 4 * s * a.q_dim
    layer_fwd = (2 * per_layer_mm + attn_core) * tok
    head_fwd = 2 * a.vocab * a.hidden * tok
    extra = {"none": 0.0, "selective": attn_core * tok, "full": layer_fwd}[layout.recompute]
    stage_flops = lps * (3 * layer_fwd + extra)
    stage_flops_last = stage_flops + 3 * head_fwd
    flops_mb = max(stage_flops, stage_flops_last if pp > 1 else stage_flops + 3 * head_fwd) / (tp * cp)
    t_comp = flops_mb / (cluster.peak_tflops.value * 1e12 * eff["compute"])
    # memory-bound operators: norms, residual adds, rotary, activation function, expert permutes, loss
    ffn_traffic = (a.top_k * a.moe_ffn + a.shared_ffn) * moe_share + a.ffn * (1 - moe_share) if a.is_moe else a.ffn
    elem = 10 * a.hidden + 2 * (a.q_dim + a.kv_dim) + (3 if a.gated_mlp else 2) * ffn_traffic
    if a.is_moe:
        elem += 4 * a.top_k * a.hidden * moe_share
    if not A["flash_attention"] and layout.recompute != "selective":
        elem += 3 * a.heads * s
    hbm_bytes = 3 * 2 * elem * tok * lps + 3 * 4 * a.vocab * tok   # + the loss over the logits (fp32), last stage
    t_hbm = hbm_bytes / (tp * cp) / (cluster.hbm_tb_s.value * 1e12 * eff["hbm"])

    # -- communication --------------------------------------------------------------------------------
    comm: dict[str, float] = {}
    links: dict[str, dict] = {}
    warnings: list[str] = []
    spans = {"tp": tp, "cp": tp * cp, "ep": tp * cp * ep, "dp": tp * cp * dp, "pp": tp * cp * dp * pp}
    act_bytes = 2 * s / cp * mb * a.hidden
    n_tp = 8 + (4 if layout.recompute == "full" else 0)
    comm["tp"] = lps * m * n_tp * (tp - 1) / tp * act_bytes if tp > 1 else 0.0
    kv_local = a.kv_dim / min(tp, a.kv_heads) if tp > 1 else a.kv_dim
    comm["cp"] = lps * m * 3 * (cp - 1) * 2 * (s / cp) * mb * 2 * kv_local if cp > 1 else 0.0
    comm["ep"] = (lps * moe_share * m * 4 * (ep - 1) / ep * (s / cp * mb / tp) * a.top_k * a.hidden * 2
                  if ep > 1 else 0.0)
    comm["pp"] = 2 * m * v * act_bytes / tp if pp > 1 else 0.0
    grad_ne = first_ne * bpp["grads"]
    grad_e = stage_exp * bpp["grads"]
    # ZeRO 0-2: one all-reduce (= reduce-scatter + all-gather) of the gradients per step, after the last
    # micro-batch. ZeRO-3 / FSDP: parameters all-gathered for every micro-batch's forward and backward and
    # gradients reduce-scattered after each backward: 3 passes per micro-batch.
    k_dp = 3 * m if zero >= 3 else 2
    comm["dp"] = (k_dp * (g_ne - 1) / g_ne * grad_ne if g_ne > 1 else 0.0) + \
                 (k_dp * (g_e - 1) / g_e * grad_e if g_e > 1 else 0.0)
    times: dict[str, float] = {}
    for dim, nbytes in comm.items():
        link, bw, crosses = _link(cluster, spans[dim])
        if nbytes == 0:
            times[dim] = 0.0
            continue
        if math.isnan(bw):
            raise LayoutError(f"{dim} spans {spans[dim]} ranks, beyond one {cluster.scale_up_link} domain of "
                              f"{int(cluster.scale_up_size.value)}, and no scale-out bandwidth is known")
        times[dim] = nbytes / (bw * 1e9 * eff["comm"])
        links[dim] = {"link": link, "gb_s": bw, "crosses_scale_up": crosses}
    if tp > 1 and links.get("tp", {}).get("crosses_scale_up"):
        warnings.append(f"tensor parallelism tp={tp} crosses the {int(cluster.scale_up_size.value)}-device "
                        f"{cluster.scale_up_link} domain: its collectives ride {cluster.scale_out_link}")
    if ep > 1 and links.get("ep", {}).get("crosses_scale_up"):
        warnings.append(f"expert parallelism ep={ep} (with tp x cp) leaves the {cluster.scale_up_link} domain: "
                        f"its all-to-alls ride {cluster.scale_out_link}")

    # -- step time ----------------------------------------------------------------------------------
    exposed_mb = sum((1 - ov[d]) * times[d] / m for d in ("tp", "cp", "ep"))
    t_mb = t_comp + t_hbm + exposed_mb
    bubble = (pp - 1) / v * t_mb
    pp_exposed = (1 - ov["pp"]) * times["pp"]
    hide = ov["dp"] * (2 / 3) * t_comp * (m if zero >= 3 else 1)
    dp_exposed = max(0.0, times["dp"] - hide)
    opt_params = (first_ne / (g_ne if zero >= 1 else 1) + stage_exp / (g_e if zero >= 1 else 1))
    t_opt = opt_params * 2 * (bpp["weights"] + bpp["grads"] + bpp["optimizer"]) / (
        cluster.hbm_tb_s.value * 1e12 * eff["hbm"])
    step = m * t_mb + bubble + pp_exposed + dp_exposed + t_opt
    breakdown = {
        "compute": m * t_comp, "hbm": m * t_hbm + t_opt,
        "tp": (1 - ov["tp"]) * times["tp"], "cp": (1 - ov["cp"]) * times["cp"],
        "ep": (1 - ov["ep"]) * times["ep"], "pp": pp_exposed, "dp": dp_exposed, "bubble": bubble,
    }
    model_flops = facts.flops_per_step
    mfu = model_flops / (step * cluster.devices * cluster.peak_tflops.value * 1e12)
    walls = {"compute": breakdown["compute"], "HBM bandwidth": breakdown["hbm"],
             "communication": sum(breakdown[k] for k in ("tp", "cp", "ep", "pp", "dp")),
             "pipeline bubble": breakdown["bubble"]}
    bound = "memory capacity" if not fits else max(walls, key=lambda k: walls[k])
    return {
        "dp": dp, "tp": tp, "pp": pp, "cp": cp, "ep": ep, "zero": zero, "recompute": layout.recompute,
        "micro_batch": mb, "virtual_stages": v, "micro_batches": m,
        "memory_gib": {k: round(val / GIB, 4) for k, val in worst.items()},
        "capacity_gib": round(capacity, 2), "fits": fits,
        "comm_gib_per_step": {k: round(val / GIB, 4) for k, val in comm.items()},
        "links": links,
        "step_time_s": round(step, 4),
        "time_breakdown_s": {k: round(val, 4) for k, val in breakdown.items()},
        "pipeline_bubble": round((pp - 1) / (v * m + pp - 1), 4),
        "mfu": round(mfu, 4),
        "tokens_per_s": round(gb * s / step, 1),
        "bound_by": bound,
        "warnings": warnings,
    }


def _powers(limit: int) -> list[int]:
    out, x = [], 1
    while x <= limit:
        out.append(x)
        x *= 2
    return out


def search(facts: ModelFacts, cluster: Cluster, A: dict, fixed: dict | None = None) -> tuple[list[dict], int]:
    """Every layout the search settings allow (or those matching `fixed`), ranked: layouts that fit first,
    then by tokens per second. Returns (ranked results, how many layouts were evaluated)."""
    S = A["search"]
    fixed = fixed or {}
    n = cluster.devices
    a = facts.arch
    tps = [fixed["tp"]] if "tp" in fixed else _powers(min(S["max_tp"], n))
    pps = [fixed["pp"]] if "pp" in fixed else [p for p in range(1, min(S["max_pp"], a.layers, n) + 1) if n % p == 0
                                                 and (p & (p - 1) == 0 or p in (3, 6, 12, 24, 48))]
    cps = [fixed["cp"]] if "cp" in fixed else _powers(S["max_cp"])
    mbs = [fixed["micro_batch"]] if "micro_batch" in fixed else list(S["micro_batches"])
    zeros = [fixed["zero"]] if "zero" in fixed else list(S["zero_stages"])
    rcs = [fixed["recompute"]] if "recompute" in fixed else list(S["recompute"])
    results, evaluated = [], 0
    for tp in tps:
        for pp in pps:
            for cp in cps:
                if n % (tp * pp * cp):
                    continue
                dp = n // (tp * pp * cp)
                if "dp" in fixed and fixed["dp"] != dp:
                    continue
                eps = [fixed["ep"]] if "ep" in fixed else (
                    [e for e in _powers(min(dp, a.experts)) if a.experts % e == 0 and dp % e == 0] if a.is_moe else [1])
                for ep in eps:
                    for mb in mbs:
                        for zero in zeros:
                            for rc in rcs:
                                lay = Layout(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero=zero, recompute=rc,
                                             micro_batch=mb, virtual_stages=fixed.get("virtual_stages", 0))
                                if check(lay, facts, cluster):
                                    continue
                                evaluated += 1
                                try:
                                    results.append(evaluate(lay, facts, cluster, A))
                                except LayoutError:
                                    continue
    results.sort(key=lambda r: (not r["fits"], -r["tokens_per_s"] if r["fits"] else r["memory_gib"]["total"]))
    return results, evaluated


def evaluate_measured(dp: int, zero: int, micro_batch: int, measured: dict, global_batch: int, cluster: Cluster,
                      A: dict) -> dict:
    """A data-parallel / ZeRO layout for a model known only from its trace (an audit_entry() file): the
    measured parameters, FLOPs and saved-activation bytes of the example batch, scaled to the micro-batch;
    each traced operator timed on the roofline (max of its FLOPs at the sustained peak and its bytes at the
    sustained HBM bandwidth)."""
    eff, ov, bpp = A["efficiency"], A["overlap"], A["bytes_per_param"]
    P, batch = measured["parameters"], max(int(measured["batch"]), 1)
    m = global_batch // (dp * micro_batch)
    scale = micro_batch / batch
    g = dp
    w = bpp["weights"] * P / (g if zero >= 3 else 1)
    gr = bpp["grads"] * P / (g if zero >= 2 else 1)
    o = bpp["optimizer"] * P / (g if zero >= 1 else 1)
    act = measured["saved_bytes"] * scale
    total = w + gr + o + act
    capacity = (cluster.hbm_gb.value * 1e9 / GIB - A["reserved_gib"]) * A["usable_fraction"]
    peak = cluster.peak_tflops.value * 1e12 * eff["compute"]
    bw = cluster.hbm_tb_s.value * 1e12 * eff["hbm"]
    t_comp = t_hbm = 0.0
    for _count, flops, nbytes in measured["ops"].values():
        if flops / peak >= nbytes / bw:
            t_comp += flops / peak * scale
        else:
            t_hbm += nbytes / bw * scale
    k = 3 * m if zero >= 3 else 2
    comm_dp = k * (g - 1) / g * bpp["grads"] * P if g > 1 else 0.0
    link, gbs, crosses = _link(cluster, dp)
    if comm_dp and math.isnan(gbs):
        raise LayoutError(f"dp={dp} spans more than one {cluster.scale_up_link} domain and no scale-out bandwidth is known")
    t_dp = comm_dp / (gbs * 1e9 * eff["comm"]) if comm_dp else 0.0
    t_mb = t_comp + t_hbm
    dp_exposed = max(0.0, t_dp - ov["dp"] * (2 / 3) * t_comp * (m if zero >= 3 else 1))
    t_opt = P / (g if zero >= 1 else 1) * 2 * (bpp["weights"] + bpp["grads"] + bpp["optimizer"]) / bw
    step = m * t_mb + dp_exposed + t_opt
    model_flops = measured["flops"] * global_batch / batch
    fits = total / GIB <= capacity
    walls = {"compute": m * t_comp, "HBM bandwidth": m * t_hbm + t_opt, "communication": dp_exposed}
    return {
        "dp": dp, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": zero, "recompute": "none", "micro_batch": micro_batch,
        "virtual_stages": 1, "micro_batches": m,
        "memory_gib": {"weights": round(w / GIB, 4), "grads": round(gr / GIB, 4), "optimizer": round(o / GIB, 4),
                       "activations": round(act / GIB, 4), "total": round(total / GIB, 4)},
        "capacity_gib": round(capacity, 2), "fits": fits,
        "comm_gib_per_step": {"tp": 0.0, "cp": 0.0, "ep": 0.0, "pp": 0.0, "dp": round(comm_dp / GIB, 6)},
        "links": {"dp": {"link": link, "gb_s": gbs, "crosses_scale_up": crosses}} if comm_dp else {},
        "step_time_s": round(step, 7),
        "time_breakdown_s": {"compute": round(m * t_comp, 7), "hbm": round(m * t_hbm + t_opt, 7), "tp": 0.0,
                             "cp": 0.0, "ep": 0.0, "pp": 0.0, "dp": round(dp_exposed, 7), "bubble": 0.0},
        "pipeline_bubble": 0.0,
        "mfu": round(model_flops / (step * cluster.devices * cluster.peak_tflops.value * 1e12), 4),
        "tokens_per_s": round(global_batch / step, 2),     # samples per second: the entry's sequence length is its own
        "bound_by": "memory capacity" if not fits else max(walls, key=lambda k: walls[k]),
        "warnings": [],
    }


def search_measured(measured: dict, global_batch: int, cluster: Cluster, A: dict, fixed: dict) -> tuple[list[dict], int]:
    dp = cluster.devices
    bad = [k for k in ("tp", "pp", "cp", "ep") if fixed.get(k, 1) != 1]
    if bad or fixed.get("dp", dp) != dp:
        raise LayoutError("a model known only from its audit_entry() trace is planned with data parallelism and "
                          f"ZeRO only (dp = all {dp} devices); {', '.join(bad) or 'dp'} needs the architecture: "
                          "give --hf-config")
    results, n = [], 0
    for zero in ([fixed["zero"]] if "zero" in fixed else A["search"]["zero_stages"]):
        for mb in ([fixed["micro_batch"]] if "micro_batch" in fixed else A["search"]["micro_batches"]):
            if global_batch % (dp * mb):
                continue
            n += 1
            results.append(evaluate_measured(dp, zero, mb, measured, global_batch, cluster, A))
    results.sort(key=lambda r: (not r["fits"], -r["tokens_per_s"] if r["fits"] else r["memory_gib"]["total"]))
    return results, n
