"""`audit --trace`: what one real training step executes, judged against the target's coverage.

The user's model is built and stepped (forward, backward, optimizer) in a child process on fake
tensors (auditor.trace.record); this process only judges the plain records that come back, against
auditor.coverage, and turns gaps and fusion opportunities into findings (source 'trace').

Codes: NPU550-NPU554 operator coverage, NPU650-NPU654 fusion (static rules use the lower codes).
"""
from __future__ import annotations

from typing import Any

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from auditor.entry import definition_line
from auditor.findings import Finding
from auditor.findings import FileError
from auditor.target import Target

DEFAULT_TIMEOUT = 300.0



def _catalogue() -> dict[str, tuple[str, str, str, str]]:
    """code -> (name, category, severity, effort) of the trace codes, from rules/dynamic.yaml."""
    from auditor.rules import load_rules

    return {r.code: (r.name, r.category, r.severity_for("a2"), r.effort)
            for r in load_rules() if "trace" in r.match.get("dynamic", ())}


RULES = _catalogue()
FUSION_CODES = {"rms_norm": "NPU650", "rotary": "NPU651", "swiglu": "NPU652", "attention": "NPU653"}
FUSION_APIS = {"rms_norm": "torch_npu.npu_rms_norm", "rotary": "torch_npu.npu_rotary_mul",
               "swiglu": "torch_npu.npu_swiglu", "attention": "torch_npu.npu_fusion_attention"}


def trace_findings(source: Path | None, *, root: Path, entry: str | None, hf_config: Path | None,
                   amp: str | None, timeout: float, target: Target,
                   distributed: dict | None = None, seq_len: int | None = None,
                   batch: int | None = None, layers: int | str | None = None
                   ) -> tuple[list[Finding], list[FileError], dict]:
    """Trace one training step of the entry's model in a child process and judge what it ran.

    `distributed` ({'world_size', 'rank', 'mesh'}, auditor.trace.collectives.parse_layout): run the step
    as that rank of a job on the fake process group; the table then carries a 'collectives' section.
    `seq_len` / `batch` size the inputs of an --hf-config model; `layers` is how many blocks of each
    kind are traced ("all", or a count; default one per kind for --hf-config), scaled to the full depth.
    """
    from auditor.entry import EntryError, load_hf_config_dict
    from auditor.sandbox import SandboxError, run_in_child
    from auditor.trace.child import run_trace

    place = _Placer(Path(root), Path(source) if source else None, Path(hf_config) if hf_config else None, entry)
    if amp not in (None, "bf16", "fp16"):
        return [], [FileError(place.error_path, "trace", f"--amp must be bf16 or fp16, not {amp!r}")], {}
    if hf_config is not None:
        try:
            load_hf_config_dict(Path(hf_config))  # a bad file is a clear error without starting a child
        except EntryError as exc:
            return [], [FileError(place.error_path, "trace", str(exc))], {}
    kwargs: dict[str, Any] = {"source": str(source) if source else None, "entry": entry,
              "hf_config": str(hf_config) if hf_config else None, "amp": amp,
              "seq_len": seq_len, "batch": batch, "layers": layers}
    if distributed:
        kwargs["distributed"] = distributed
    try:
        result = run_in_child(run_trace, kwargs, timeout, label="trace")
    except SandboxError as exc:
        line = None
        if exc.line and place.source and Path(exc.line[0]).resolve() == place.source.resolve():
            line = exc.line[1]
        message = exc.message if not exc.user_traceback else f"{exc.message}\n{exc.user_traceback}"
        if exc.kind != "user-exception":
            message = f"{exc.kind}: {message}"
        return [], [FileError(place.error_path, "trace", message, line)], {}
    findings, errors, table = judge(result, target, place)
    if distributed:
        from auditor.trace.collectives import judge_collectives

        more, table["collectives"] = judge_collectives(result, target, place)
        findings += more
    return findings, errors, table


@dataclass
class _Placer:
    """Turns frames from the child into (path, line) relative to the scanned root."""
    root: Path
    source: Path | None
    hf_config: Path | None
    entry: str | None

    @property
    def base(self) -> Path:
        return self.root if self.root.is_dir() else self.root.parent

    def relative(self, file: str | Path) -> str:
        path = Path(file).resolve()
        try:
            return path.relative_to(self.base.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    @property
    def error_path(self) -> str:
        return self.relative(self.source or self.hf_config or self.root)

    def fallback(self) -> tuple[str, int]:
        """Where findings without a user frame go: the entry function, or line 1 of the config."""
        if self.source is not None and self.source.is_file() and not (self.entry and ":" in self.entry):
            return self.relative(self.source), (definition_line(self.source, self.entry or "audit_entry") or 1)
        return self.error_path, 1

    def place(self, frame: tuple | None) -> tuple[str, int, str | None]:
        """(path, line, library location) for a frame: user frames as they are; library frames go to
        the fallback with the library line kept for the message."""
        if frame and frame[2]:
            return self.relative(frame[0]), frame[1], None
        path, line = self.fallback()
        library = None
        if frame:
            text = Path(frame[0]).as_posix()
            text = text.split("site-packages/", 1)[-1].split("dist-packages/", 1)[-1]
            library = f"{text}:{frame[1]}"
        return path, line, library


def span(frame: tuple | None) -> tuple[int, int]:
    """(col, end_col) of a user frame; (1, 1) when the child could not tell."""
    if frame and frame[2] and len(frame) > 4 and frame[3]:
        return frame[3], frame[4] or frame[3]
    return 1, 1


def _narrowest(spans) -> tuple[int, int]:
    """The leftmost column among the calls a finding aggregates."""
    return min(spans) if spans else (1, 1)


def collapse_module(path: str) -> str:
    """'M.model.layers.17.mlp' -> 'M.model.layers.*.mlp': one row for every repeated block."""
    return re.sub(r"\.\d+(?=\.|$)", ".*", path)


def _finding(code: str, path: str, line: int, message: str, symbol: str, substitution: str | None,
             data: dict, severity: str | None = None, columns: tuple[int, int] = (1, 1)) -> Finding:
    name, category, default_severity, effort = RULES[code]
    return Finding(code=code, name=name, category=category, severity=severity or default_severity, effort=effort,
                   path=path, line=line, col=columns[0], end_line=line, end_col=columns[1], message=message,
                   substitution=substitution, fix="none", source="trace", symbol=symbol, data=data)


def _where(modules: set[str], libraries: set[str] | None = None) -> str:
    shown = sorted({collapse_module(m) for m in modules if m})
    text = f" in {', '.join(shown[:3])}{' ...' if len(shown) > 3 else ''}" if shown else ""
    libs = sorted(libraries or ())
    if libs:
        text += f" (at {', '.join(libs[:3])}{' ...' if len(libs) > 3 else ''})"
    return text


def _times(count: int) -> str:
    return f"{count} call{'s' * (count != 1)}"


def _new_group() -> dict:
    return {"count": 0, "modules": set(), "dtypes": set(), "phases": set(), "backend_ops": set(),
            "apis": set(), "libraries": set(), "ops": set(), "spans": set()}


def _group_data(group: dict) -> dict:
    data = {"count": group["count"], "modules": sorted({collapse_module(m) for m in group["modules"] if m}),
            "dtypes": sorted(group["dtypes"]), "phases": sorted(group["phases"]), "apis": sorted(group["apis"])}
    if group.get("sites"):
        data["sites"] = group["sites"]
    if group["backend_ops"]:
        data["backend_ops"] = sorted(group["backend_ops"])
    if group["libraries"]:
        data["library_lines"] = sorted(group["libraries"])
    return data


def _phases(group: dict) -> str:
    return "/".join(p for p in ("forward", "backward", "optimizer") if p in group["phases"])


def judge(result: dict, target: Target, place: _Placer) -> tuple[list[Finding], list[FileError], dict]:
    """Findings and the per-model table from the child's records."""
    from auditor.coverage import Coverage
    from auditor.trace.backend_ops import user_level_op

    cov = Coverage.load(target)
    findings: list[Finding] = []

    # Aggregate per (judged op, line) and per (dtype, line): counts, modules, dtypes, phases.
    by_op: dict[tuple, dict] = {}
    by_dtype: dict[tuple, dict] = {}
    dtypes_seen: set[str] = set()
    for rec in result["aten"]:
        if rec["bookkeeping"]:
            continue
        op = rec["op"]
        judged, api = user_level_op(op)
        dtypes_seen.update(rec["dtypes"])
        path, line, library = place.place(rec["frame"])
        groups = [by_op.setdefault((judged, path, line), _new_group())]
        groups += [by_dtype.setdefault((d, path, line), _new_group()) for d in rec["dtypes"]]
        for group in groups:
            group["count"] += rec["count"]
            group["modules"].add(rec["module"])
            group["dtypes"].update(rec["dtypes"])
            group["phases"].add(rec["phase"])
            group["ops"].add(judged)
            if judged != op:
                group["backend_ops"].add(op)
            if api or rec["api"]:
                group["apis"].add(api or rec["api"])
            if library:
                group["libraries"].add(library)
            else:
                group["spans"].add(span(rec["frame"]))

    answers = {op: cov.aten(op) for op in {key[0] for key in by_op}}
    # ops the line has kernels for on a product no source names for the line: one note in the table, not a
    # finding per op (the silence is about the product, the same for every op)
    unstated = {op for op, answer in answers.items() if answer.supported == "unverified" and cov.product_unstated(op)}
    op_kinds = {op: "native" if op in unstated else _kind(answer) for op, answer in answers.items()}
    by_op, by_dtype = merge_sites(by_op), merge_sites(by_dtype)
    for (op, path, line), group in sorted(by_op.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        answer = answers[op]
        if answer.kind == "unknown" or answer.supported is True or op in unstated:
            continue  # unknown: not an aten op torch knows under this name, nothing to judge
        data = {**_group_data(group), "via": answer.via, "coverage_source": answer.source}
        called = f" (from {', '.join(sorted(group['apis']))})" if group["apis"] else ""
        facts = (f"{_times(group['count'])}{_sites(group)} in the {_phases(group)}"
                 f"{_where(group['modules'], group['libraries'])}, dtypes {', '.join(data['dtypes']) or '-'}")
        if answer.supported is False:
            findings.append(_finding(
                "NPU550", path, line,
                f"aten::{op}{called} has no NPU kernel in torch_npu {target.torch_npu} and runs on the CPU "
                f"({answer.via}): {facts}. {answer.notes}", f"aten::{op}", answer.substitute, data,
                columns=_narrowest(group["spans"])))
        else:
            findings.append(_finding(
                "NPU551", path, line, f"aten::{op}{called} is only partly covered in torch_npu "
                f"{target.torch_npu} ({answer.via}): {facts}. {answer.notes}", f"aten::{op}", answer.substitute, data,
                columns=_narrowest(group["spans"])))
    for (dtype, path, line), group in sorted(by_dtype.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        answer = cov.dtype_answer(dtype)
        if answer.kind != "dtype" or answer.supported is not False:
            continue
        ops = sorted(group["ops"])
        data = {**_group_data(group), "ops": ops, "coverage_source": answer.source}
        findings.append(_finding(
            "NPU552", path, line,
            f"{dtype} is not supported on {target.describe()}, and the step runs {len(ops)} op(s) in it here "
            f"({', '.join(ops[:8])}{' ...' if len(ops) > 8 else ''}): {_times(group['count'])}{_sites(group)} in the "
            f"{_phases(group)}{_where(group['modules'], group['libraries'])}. {answer.notes}",
            dtype, "float16 (with loss scaling) or float32 on this product", data, columns=_narrowest(group["spans"])))

    findings += _api_findings(result, cov, target, place)
    findings += _fusion_findings(result, cov, target, place)
    findings += _optimizer_findings(result, cov, target, place)

    kinds: defaultdict[str, int] = defaultdict(int)
    for kind in op_kinds.values():
        kinds[kind] += 1
    row = {
        "model": result["label"] or result["model_class"],
        "class": result["model_class"],
        "parameters": _human(result["parameters"]),
        "step FLOPs": _human(result["flops"]),
        "ops seen": len(op_kinds),
        "native": kinds["native"],
        "composite": kinds["composite"],
        "fallback": kinds["fallback"],
        "dtypes": ", ".join(sorted(dtypes_seen)),
        "loss": result["loss"],
        "optimizer": result["optimizer"]["class"].rsplit(".", 1)[-1],
        "trace s": round(result["seconds"]["build"] + result["seconds"]["step"], 2),
    }
    if result.get("active_parameters") and result["active_parameters"] != result["parameters"]:
        row["active parameters"] = _human(result["active_parameters"])   # per token: top-k of the experts
    if result.get("layers", {}).get("traced"):
        row["traced blocks"] = result["layers"]["traced"] + ", scaled to the full depth"
    if result.get("inputs"):
        row["inputs"] = ", ".join(f"{k} {'x'.join(map(str, v))}" for k, v in result["inputs"].items())
    if result.get("user_autocast"):
        row["autocast"] = ", ".join(result["user_autocast"])
    if kinds["partial"]:
        row["partial"] = kinds["partial"]
    if kinds["unverified"]:
        row["unverified"] = kinds["unverified"]
    if unstated:
        row["product not stated"] = (f"{len(unstated)} of the native ops: torch_npu {target.torch_npu} registers "
                                     f"their kernels, but no source states {target.product} for this line "
                                     "(`audit ops aten::NAME` says why)")
    if result.get("dataloaders_in_process"):
        from auditor.trace.loaders import describe

        row["data loading"] = describe(result["dataloaders_in_process"], place.relative)
    if result["approximations"]:
        row["approximated"] = ", ".join(f"{k} x{v}" for k, v in sorted(result["approximations"].items()))
    table = {"title": f"Traced training step (fake tensors) for {target.describe()}", "rows": [row]}
    return findings, [], table


def merge_sites(groups: dict[tuple, dict]) -> dict[tuple, dict]:
    """One finding per decision: the groups of one symbol (op, dtype, API) at several lines become one,
    placed at its first line, with every line in `sites` ("path:line x count") and in the message."""
    by_symbol: dict[str, list[tuple]] = defaultdict(list)
    for key in groups:
        by_symbol[key[0]].append(key)
    merged: dict[tuple, dict] = {}
    for symbol, keys in by_symbol.items():
        keys.sort(key=lambda k: (k[1], k[2]))
        first = groups[keys[0]]
        if len(keys) == 1:
            merged[keys[0]] = first
            continue
        combined = {name: (set(value) if isinstance(value, set) else value) for name, value in first.items()}
        for key in keys[1:]:
            for name, value in groups[key].items():
                if isinstance(value, set):
                    combined[name] |= value
                elif name == "count":
                    combined[name] += value
        combined["sites"] = [f"{k[1]}:{k[2]} x{groups[k]['count']}" for k in keys]
        combined["spans"] = first.get("spans", set())
        merged[keys[0]] = combined
    return merged


def _sites(group: dict) -> str:
    sites = group.get("sites")
    if not sites:
        return ""
    shown = ", ".join(s.rsplit(" x", 1)[0] for s in sites[:6])
    return f" at {len(sites)} lines ({shown}{' ...' if len(sites) > 6 else ''})"


def _kind(answer) -> str:
    if answer.supported is True:
        return "composite" if answer.via.startswith("composite") else "native"
    if answer.supported == "partial":
        return "partial"
    if answer.supported == "unverified":
        return "unverified"
    return "fallback" if answer.kind != "unknown" else "unknown"


def _human(n: int) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def _api_findings(result: dict, cov, target: Target, place: _Placer) -> list[Finding]:
    """Python APIs the target's support list marks unsupported on the product (an error), or does not
    confirm for it (unverified: shown as info, never dropped, so an older target does not look cleaner
    for having less data). One finding per API, at its first line, listing the others."""
    groups: dict[tuple, dict] = {}
    for rec in result["api"]:
        answer = cov.api(rec["qualname"])
        if answer is None or answer.supported is True:
            continue
        path, line, library = place.place(rec["frame"])
        group = groups.setdefault((rec["qualname"], path, line), {"count": 0, "modules": set(),
                                                                   "dtypes": set(), "libraries": set(),
                                                                   "spans": set(), "answer": answer})
        if library:
            group["libraries"].add(library)
        else:
            group["spans"].add(span(rec["frame"]))
        group["count"] += rec["count"]
        group["modules"].add(rec["module"])
        group["dtypes"].update(rec["dtypes"])
    out = []
    unverified: dict[str, list] = defaultdict(list)
    for (qualname, path, line), group in sorted(merge_sites(groups).items(), key=lambda kv: kv[0][1:]):
        answer = group["answer"]
        if answer.supported is not False:
            # one decision: the support list does not answer for this product (same reason, many APIs)
            reason = (answer.notes.splitlines() or [""])[0]
            unverified[f"{answer.via}: {reason}" if reason else answer.via].append((qualname, path, line, group))
            continue
        unsupported = answer.supported is False
        verdict = (f"is marked unsupported on {target.describe()} by the support list" if unsupported else
                   f"is not confirmed for {target.describe()} (unverified)")
        data = {"count": group["count"], "modules": sorted({collapse_module(m) for m in group["modules"] if m}),
                "dtypes": sorted(group["dtypes"]), "coverage_source": answer.source, "via": answer.via,
                "verdict": "unsupported" if unsupported else "unverified"}
        if group.get("sites"):
            data["sites"] = group["sites"]
        out.append(_finding(
            "NPU553", path, line,
            f"{qualname} {verdict} ({answer.via}): {group['count']} call(s){_sites(group)}"
            f"{_where(group['modules'], group['libraries'])}. {answer.notes}".strip(),
            qualname, answer.substitute, data, severity=None if unsupported else "info",
            columns=_narrowest(group["spans"])))
    for reason, items in unverified.items():
        _, path, line, group = items[0]
        names = [f"{q} ({g['count']})" for q, _, _, g in items]
        out.append(_finding(
            "NPU553", path, line,
            f"{len(items)} API(s) this step calls are unverified on {target.describe()} ({reason}): "
            f"{', '.join(names[:12])}{' ...' if len(names) > 12 else ''}. Unverified is not unsupported: check "
            f"them on the device (--execute on an NPU) before relying on them.",
            items[0][0], None,
            {"verdict": "unverified", "reason": reason, "count": sum(g["count"] for *_, g in items),
             "apis": {q: {"count": g["count"], "sites": g.get("sites") or [f"{p}:{l} x{g['count']}"],
                          "via": g["answer"].via, "coverage_source": g["answer"].source}
                      for q, p, l, g in items}},
            severity="info", columns=_narrowest(group["spans"])))
    return out


def _fusion_call(pattern: str, detail: dict) -> str:
    """How to call the fused API at this site, from what the graph showed."""
    if pattern == "rms_norm":
        eps = detail.get("eps")
        return (f"torch_npu.npu_rms_norm(x, weight, epsilon={eps if eps is not None else 1e-6})[0]"
                + ("" if detail.get("weight") else " (no weight in this code: pass torch.ones(hidden))"))
    if pattern == "rotary":
        return ("torch_npu.npu_rotary_mul(x, cos, sin) in place of x * cos + rotate_half(x) * sin "
                "(x, cos, sin as 4-D tensors; cos/sin broadcast over batch and heads)")
    if pattern == "swiglu":
        if detail.get("one_tensor"):
            return "torch_npu.npu_swiglu(x, dim=-1) on the tensor that is split into [gate, up]"
        return ("torch_npu.npu_swiglu(torch.cat([gate, up], dim=-1), dim=-1); order [gate, up] "
                "(fuse the two projections into one weight to avoid the cat)")
    if pattern == "attention":
        shape = detail.get("query_shape")
        layout, heads = "BNSD", "N"
        if shape and len(shape) == 4:
            heads = str(shape[1])
        elif shape and len(shape) == 3:
            layout = "BSH"
        scale = detail.get("scale")
        mask = ", atten_mask=<bool mask, True = masked>, sparse_mode=0" if detail.get("masked") else ""
        return (f"torch_npu.npu_fusion_attention(q, k, v, head_num={heads}, input_layout=\"{layout}\", "
                f"scale={round(scale, 6) if isinstance(scale, float) else 'head_dim ** -0.5'}{mask}, "
                "keep_prob=1 - dropout_p)[0], or torch.nn.functional.scaled_dot_product_attention")
    return ""


def _fusion_limits(answer) -> str:
    if answer is None:
        return ""
    products = [p for p, ok in answer.products.items() if ok is True]
    parts = []
    floats = [d for d in answer.dtypes if d.startswith(("float", "bfloat"))]
    if floats:
        parts.append("dtypes " + ", ".join(floats))
    if products:
        parts.append("products " + ", ".join(products))
    return "; ".join(parts)


def _fusion_source(cov, api: str) -> str:
    for pattern in cov.fusion_patterns():
        if pattern.get("fused_api") == api:
            return pattern.get("source", "")
    return ""


# Patterns the static pass also finds (rules/fusion.yaml anchors them on torch.rsqrt and softmax): their
# findings name the anchored call, so the report merges the two; the others name the fused API.
_STATIC_ANCHORED = ("rms_norm", "attention")


def _fusion_symbol(pattern: str, anchored_call: str, fused_api: str) -> str:
    return anchored_call if pattern in _STATIC_ANCHORED and anchored_call else fused_api


def _fusion_findings(result: dict, cov, target: Target, place: _Placer) -> list[Finding]:
    describe = {"rms_norm": "hand-written RMSNorm (x * rsqrt(mean(x^2) + eps))",
                "rotary": "rotate_half rotary embedding (x * cos + rotate_half(x) * sin)",
                "swiglu": "SwiGLU written as silu(gate) * up",
                "attention": "attention written as matmul -> softmax -> matmul"}
    # Matches whose frames land on the same reported line (library code of an --hf-config model) merge.
    merged: dict[tuple, dict] = {}
    for match in result["fusions"]:
        path, line, library = place.place(match["frame"])
        key = (match["pattern"], path, line)
        group = merged.setdefault(key, {"count": 0, "modules": set(), "libraries": set(), "detail": match["detail"],
                                        "api": match.get("api", ""), "spans": set()})
        if not library:
            group["spans"].add(span(match["frame"]))
        group["count"] += match["count"]
        group["modules"].update(match["modules"])
        if library:
            group["libraries"].add(library)
    out = []
    for (pattern, path, line), group in sorted(merged.items(), key=lambda kv: kv[0][1:]):
        api = FUSION_APIS[pattern]
        answer = cov.custom_op(api)
        if answer is not None and answer.supported is False:
            continue  # the fused API does not exist for this target: nothing to suggest
        limits = _fusion_limits(answer)
        call = _fusion_call(pattern, group["detail"])
        data = {"count": group["count"], "modules": sorted({collapse_module(m) for m in group["modules"]}),
                "detail": group["detail"], "fused_api": api, "pattern_source": _fusion_source(cov, api)}
        if answer is not None:
            data["api_source"] = answer.source
        if group["libraries"]:
            data["library_lines"] = sorted(group["libraries"])
        note = f" ({answer.via})" if answer is not None and answer.supported == "partial" else ""
        out.append(_finding(
            FUSION_CODES[pattern], path, line,
            f"{describe[pattern]}, {group['count']} time(s){_where(group['modules'], group['libraries'])}: "
            f"{api}{note} does it in one kernel. Call: {call}." + (f" Limits: {limits}." if limits else ""),
            _fusion_symbol(pattern, group["api"], api), call, data, columns=_narrowest(group["spans"])))
    return out


def _optimizer_findings(result: dict, cov, target: Target, place: _Placer) -> list[Finding]:
    opt = result["optimizer"]
    short = opt["class"].rsplit(".", 1)[-1]
    if not opt["given"] or opt["defaults"].get("fused"):
        return []  # the trace's own default AdamW is not the user's code
    fused_api = next((p["fused_api"] for p in cov.fusion_patterns()
                      if p.get("family") == "Optimizer" and p.get("ops") == [f"{short}.step"]), None)
    if fused_api is None:
        return []
    answer = cov.custom_op(fused_api)
    if answer is not None and answer.supported is False:
        return []
    options = [f"{fused_api}(params, ...)"]
    native_fused = {"AdamW": "_fused_adamw_", "Adam": "_fused_adam_", "SGD": "_fused_sgd_"}.get(short)
    if native_fused and cov.aten(native_fused).supported is True:
        options.append(f"torch.optim.{short}(params, ..., fused=True) (aten::{native_fused} has an NPU kernel "
                       f"in torch_npu {target.torch_npu})")
    site = opt["site"]
    if site:
        path, line, _ = place.place(site)
    else:
        path, line = place.fallback()
    limits = _fusion_limits(answer)
    return [_finding(
        "NPU654", path, line,
        f"the optimizer is {opt['class']} without fused=True: a per-parameter loop of small kernels on the NPU. "
        f"Use {' or '.join(options)}." + (f" Limits: {limits}." if limits else ""),
        opt["public_name"], options[0],
        {"optimizer": opt["class"], "fused_api": fused_api, "pattern_source": _fusion_source(cov, fused_api),
         **({"api_source": answer.source} if answer is not None else {})},
        severity="info")]


__all__ = ["DEFAULT_TIMEOUT", "RULES", "trace_findings", "judge"]
