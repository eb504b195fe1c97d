"""`audit plan`: will this model fit on a cluster, how should it be laid out, and what will it reach.

Model facts come from the architecture's closed forms (auditor.plan.model) and, where the fake-tensor trace
can run, from a measured, layer-scaled trace (auditor.plan.measure, in the sandbox's child process); cluster
figures from op_tables/clusters/clusters.yaml; everything assumed from auditor/plan/assumptions.yaml.
"""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

from auditor.plan.clusters import ClusterError, list_clusters, load_assumptions, resolve
from auditor.plan.layouts import (
    Layout,
    LayoutError,
    check,
    evaluate,
    parse_layout,
    search,
)
from auditor.plan.model import ArchError, arch_from_config, model_facts
from auditor.plan.report import clusters_text, emit, emit_many, walls


class PlanError(Exception):
    """Bad input for `audit plan`: the message is for the user (exit 2)."""


def run_measure(source, entry, hf_config, seq):
    from auditor.plan.measure import measure

    return measure(source, entry, hf_config, seq)


def _measure(args, arch, seq: int, notes: list) -> dict | None:
    want = args.trace_facts
    if want == "off":
        return None
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None:
        notes.append("model facts from the closed form only: the fake-tensor trace needs torch and transformers "
                      "(pip install 'npu-audit[trace]')")
        return None
    if arch is not None and arch.is_moe and want == "auto":
        notes.append("MoE model: facts from the config's closed form (experts, top-k, shared experts); the fake-tensor "
                     "trace cannot route tokens without data, so it is not run (--trace-facts on forces it)")
        return None
    from auditor.sandbox import SandboxError, run_in_child

    kwargs = {"source": str(args.path) if args.path else None, "entry": args.entry,
              "hf_config": str(args.hf_config) if args.hf_config else None, "seq": seq}
    try:
        return run_in_child(run_measure, kwargs, args.timeout)
    except SandboxError as exc:
        if arch is None:
            raise PlanError(f"the trace of the entry failed, and without --hf-config there is no closed form "
                            f"to fall back on: {exc}") from None
        notes.append(f"the fake-tensor trace did not finish ({exc.kind}: {exc.message.splitlines()[0][:200]}); "
                     "model facts from the closed form")
        return None


def _assumption_lines(A: dict) -> list[str]:
    e, o, b = A["efficiency"], A["overlap"], A["bytes_per_param"]
    return [
        f"mixed-precision AdamW: {b['weights']} B weights + {b['grads']} B grads + {b['optimizer']} B fp32 master "
        f"weights and moments = {b['weights'] + b['grads'] + b['optimizer']} bytes per parameter (ZeRO shards them)",
        f"sustained fraction of peak: matmul {e['compute']:.0%}, HBM {e['hbm']:.0%}, links {e['comm']:.0%}",
        "overlap with compute: " + ", ".join(f"{k} {v:.0%}" for k, v in o.items())
        + " (DP gradient sync hides behind the last micro-batch's backward; ZeRO-3 gathers behind every one)",
        f"{A['reserved_gib']:g} GiB per device reserved for the framework, {A['usable_fraction']:.0%} of the rest usable",
        f"flash attention: {'yes' if A['flash_attention'] else 'no'}; sequence parallelism with TP: "
        f"{'yes' if A['sequence_parallel'] else 'no'}; pipeline: 1F1B, interleaved when micro-batches allow",
        "collective latency and kernel launch overheads are not modelled: small messages are optimistic",
    ]


def build_report(args) -> dict:
    A = load_assumptions(args.assumptions)
    notes: list[str] = []
    if not args.hf_config:
        if not args.path:
            raise PlanError("give --hf-config CONFIG_JSON or a Python file with an audit_entry() function")
        return _entry_report(args, A, notes)
    from auditor.entry import EntryError, load_hf_config_dict

    try:
        data = load_hf_config_dict(Path(args.hf_config))
    except EntryError as exc:
        raise PlanError(str(exc)) from None
    try:
        arch = arch_from_config(data, name=Path(args.hf_config).stem if Path(args.hf_config).is_file() else "")
    except ArchError as exc:
        raise PlanError(f"--hf-config {args.hf_config}: {exc}") from None
    seq, gb = args.seq_len, args.global_batch
    if seq < 1 or gb < 1:
        raise PlanError("--seq-len and --global-batch must be positive")
    facts = model_facts(arch, seq, gb)
    fixed = parse_layout(args.layout) if args.layout else {}
    if args.micro_batch:
        fixed.setdefault("micro_batch", args.micro_batch)
    target = resolve(args.cluster, A, args.dtype)
    clusters = [target] + ([resolve(args.compare, A, args.dtype)] if args.compare else [])
    runs = []
    for cluster in clusters:
        if fixed and all(k in fixed for k in ("tp", "pp")) and "dp" in fixed:
            lay = Layout(**{k: v for k, v in fixed.items()})
            why = check(lay, facts, cluster)
            if why:
                raise PlanError(f"--layout on {cluster.name}:{cluster.devices}: {why}")
            results, evaluated = [evaluate(lay, facts, cluster, A)], 1
        else:
            results, evaluated = search(facts, cluster, A, fixed)
        runs.append((cluster, results[: A["search"]["show"]], evaluated))
    measured = _measure(args, arch, seq, notes)   # last: every flag is checked before the trace runs
    model = _model_section(arch, facts, measured, A, clusters)
    report = {
        "tool": "npu-audit plan",
        "model": model,
        "cluster": runs[0][0].to_dict(),
        "layouts": runs[0][1],
        "evaluated": runs[0][2],
        "compare": ({"cluster": runs[1][0].to_dict(), "layouts": runs[1][1], "evaluated": runs[1][2]}
                    if len(runs) > 1 else None),
        "assumptions": A,
        "assumption_lines": _assumption_lines(A),
        "notes": notes + [n for c in clusters for n in c.notes]
                 + [f"{c.name}: ASSUMED (no public figure) {', '.join(c.assumed)}; see hardware_gaps in the "
                    "assumptions file" for c in clusters if c.assumed],
    }
    report["walls"] = walls(report)
    return report


def _entry_report(args, A: dict, notes: list) -> dict:
    """An audit_entry() file: facts measured on its example inputs; data-parallel / ZeRO layouts only."""
    from auditor.plan.layouts import search_measured
    from auditor.plan.measure import intensity_split

    if args.global_batch < 1:
        raise PlanError("--global-batch must be positive")
    fixed = parse_layout(args.layout) if args.layout else {}
    if args.micro_batch:
        fixed.setdefault("micro_batch", args.micro_batch)
    clusters = [resolve(args.cluster, A, args.dtype)] + ([resolve(args.compare, A, args.dtype)] if args.compare else [])
    if args.trace_facts == "off":
        raise PlanError("an audit_entry() file is planned from its trace: drop --trace-facts off, or use --hf-config")
    bad = [k for k in ("tp", "pp", "cp", "ep") if fixed.get(k, 1) != 1]
    if bad:
        raise PlanError(f"--layout {', '.join(bad)}: a model known only from its audit_entry() trace is planned with "
                        "data parallelism and ZeRO only; tensor, pipeline, context and expert parallelism need the "
                        "architecture: give --hf-config")
    one = copy.copy(args)
    one.trace_facts = "on"
    measured = _measure(one, None, args.seq_len, notes)
    if measured is None:        # torch or transformers is missing: the last note says so
        raise PlanError(notes[-1] if notes else "the model could not be traced")
    gb = args.global_batch
    runs = []
    for cluster in clusters:
        results, n = search_measured(measured, gb, cluster, A, fixed)
        runs.append((cluster, results[: A["search"]["show"]], n))
    per_step = measured["flops"] * gb // max(measured["batch"], 1)
    model = {
        "name": measured["label"], "model_type": "", "source": "fake-tensor trace of the audit_entry() example batch",
        "parameters": measured["parameters"], "active_parameters": measured["parameters"],
        "parameters_by_dtype": measured["by_dtype"], "flops_per_step": per_step, "flops_per_step_measured": per_step,
        "flops_check": {}, "closed_forms": {}, "sequence_length": None, "global_batch": gb,
        "example_batch": measured["batch"], "tokens_per_step": None,
        "activation_bytes_per_sample": measured["saved_bytes"] / max(measured["batch"], 1),
        "measured": {k: v for k, v in measured.items() if k != "ops"},
        "intensity": {c.name: intensity_split(measured["ops"], c.peak_tflops.value, c.hbm_tb_s.value) for c in clusters},
    }
    notes.append("layouts from the trace alone: data parallelism and ZeRO only; tensor, pipeline, context and expert "
                 "parallelism need the architecture (plan it with --hf-config); tokens_per_s counts samples; "
                 f"activations as traced ({', '.join(measured['by_dtype'])}), scaled from the example batch of "
                 f"{measured['batch']}")
    report = {"tool": "npu-audit plan", "model": model, "cluster": runs[0][0].to_dict(), "layouts": runs[0][1],
              "evaluated": runs[0][2],
              "compare": ({"cluster": runs[1][0].to_dict(), "layouts": runs[1][1], "evaluated": runs[1][2]}
                          if len(runs) > 1 else None),
              "assumptions": A, "assumption_lines": _assumption_lines(A),
              "notes": notes + [n for c in clusters for n in c.notes]}
    report["walls"] = walls(report)
    return report


def _model_section(arch, facts, measured, A, clusters) -> dict:
    seq, gb = facts.seq, facts.global_batch
    p = facts.parameters
    flops = facts.flops_per_step
    checks = {}
    for key, value in facts.closed_forms.items():
        label = {"six_nd": "6ND (N = active parameters)", "six_nd_non_embedding": "6ND (N without embeddings)",
                 "megatron_2021": "Megatron-LM 2021 72Bslh^2(1 + s/6h + V/12lh)"}[key]
        why = {"six_nd": "6ND counts the input embedding (a lookup, no FLOPs) and leaves out attention scores "
                         f"(12 s h_q L per token: {12 * seq * arch.q_dim * arch.layers / (6 * p['active']) * 100:.1f}% here)",
               "six_nd_non_embedding": "without the embedding, 6ND still leaves out the attention scores and "
                                       "counts the lm_head once",
               "megatron_2021": "same terms; differences come only from rounding"}[key]
        checks[label] = f"{_fmt(value)} ({(flops / value - 1) * 100:+.1f}% ours vs it): {why}"
    section = {
        "name": arch.name, "model_type": arch.model_type,
        "source": "closed form from config.json" + (" + fake-tensor trace (1 and 2 layers, scaled)" if measured else ""),
        "parameters": p["total"], "active_parameters": p["active"],
        "parameters_by_dtype": {arch.dtype: p["total"]},
        "flops_per_step": flops,
        "flops_per_step_closed_form": flops,
        "flops_check": checks,
        "closed_forms": facts.closed_forms,
        "sequence_length": seq, "global_batch": gb, "tokens_per_step": seq * gb,
        "activation_bytes_per_layer": {
            "none": arch.activation_bytes_per_layer(seq, 1, recompute="none", flash=A["flash_attention"]),
            "selective": arch.activation_bytes_per_layer(seq, 1, recompute="selective"),
            "full": arch.activation_bytes_per_layer(seq, 1, recompute="full"),
            "korthikanti_none": arch.korthikanti(seq, 1),
            "korthikanti_selective": arch.korthikanti(seq, 1, recompute="selective"),
        },
        "architecture": arch.to_dict(),
    }
    if arch.is_moe:
        section["moe"] = {"experts": arch.experts, "top_k": arch.top_k, "expert_ffn": arch.moe_ffn,
                          "shared_ffn": arch.shared_ffn, "moe_layers": arch.moe_layers,
                          "expert_parameters": p["experts"], "source": "config closed form"}
    if measured:
        per_step = measured["flops"] * gb // max(measured["batch"], 1)
        section["measured"] = {k: v for k, v in measured.items() if k != "ops"}
        section["flops_per_step_measured"] = per_step
        section["parameters_by_dtype_traced"] = measured["by_dtype"]
        diff_p = (measured["parameters"] / p["total"] - 1) * 100
        diff_f = (per_step / flops - 1) * 100
        section["flops_check"]["fake-tensor trace (FlopCounterMode)"] = (
            f"{_fmt(per_step)} ({diff_f:+.1f}% vs the closed form; parameters {diff_p:+.2f}%): the trace counts "
            "every aten op torch.utils.flop_counter has a formula for (matmuls, attention), in the dtype transformers "
            "builds (the parameter difference is weights the built model does or does not tie)")
        from auditor.plan.measure import intensity_split

        section["intensity"] = {c.name: intensity_split(measured["ops"], c.peak_tflops.value, c.hbm_tb_s.value)
                                for c in clusters}
    return section


def _fmt(n: float) -> str:
    from auditor.plan.report import _num

    return _num(n)


def run(args, stream) -> int:
    """The `audit plan` command; raises PlanError for bad input."""
    try:
        if args.clusters:
            stream.write(clusters_text(list_clusters(load_assumptions(args.assumptions)), args.format))
            return 0
        if not args.cluster:
            raise PlanError("give --cluster NAME[:DEVICES] (`audit plan --clusters` lists them)")
        configs = list(args.hf_config or [])
        reports = []
        for config in configs or [None]:
            one = copy.copy(args)
            one.hf_config = config
            reports.append(build_report(one))
    except (ClusterError, LayoutError) as exc:
        raise PlanError(str(exc)) from None
    if len(reports) == 1:
        emit(reports[0], args.format, stream)
    else:
        emit_many(reports, args.format, stream)
    return 0


__all__ = ["PlanError", "build_report", "run"]
