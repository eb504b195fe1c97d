"""Parent side of `--trace --world-size N`: the recorded collectives judged against HCCL, summed per step.

The child (auditor.trace.distributed) returns one record per distinct collective call: op, reduce op,
dtype, payload bytes, process group, phase and call site. Here they become

* findings (source 'trace', codes NPU160-NPU165 in rules/dynamic_distributed.yaml) where the target's
  HCCL coverage (auditor.coverage: the support list of torch.distributed and the reduce-op facts) rejects
  the op, its reduce op, its dtype or its group size;
* the report's top-level `collectives` list (the contract `audit plan` reads, see docs/trace.md), and
* a per-step summary by collective and process group.

Torch-free: the parent never imports torch.
"""
from __future__ import annotations

import re

from auditor.findings import Finding

_PHASES = ("setup", "forward", "backward", "optimizer")
_MESH_DIM = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\d+)$")


class LayoutError(ValueError):
    """--world-size / --mesh that cannot describe a job; the message says what to write."""


# SUM / MAX / MIN / PRODUCT: the reductions every collective library has; an "unverified" answer for them is
# the support list's silence about ReduceOp members, not a doubt worth a finding on every all_reduce.
_NAMED_OPS = frozenset({"SUM", "MAX", "MIN", "PRODUCT"})

def parse_layout(world_size: int | None, mesh: str | None, rank: int = 0) -> dict | None:
    """{'world_size', 'rank', 'mesh': [(name, size), ...]} from the flags; None when neither is given."""
    if world_size is None and not mesh:
        return None
    dims: list[tuple[str, int]] = []
    for part in (mesh or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = _MESH_DIM.match(part)
        if not m or int(m.group(2)) < 1:
            raise LayoutError(f"--mesh: {part!r} is not NAME=SIZE with SIZE >= 1 (e.g. --mesh dp=2,tp=4)")
        if any(name == m.group(1) for name, _ in dims):
            raise LayoutError(f"--mesh: dimension {m.group(1)!r} given twice")
        dims.append((m.group(1), int(m.group(2))))
    product = 1
    for _, size in dims:
        product *= size
    if world_size is None:
        world_size = product
    if world_size < 1:
        raise LayoutError("--world-size must be at least 1")
    if dims and product != world_size:
        raise LayoutError(f"--mesh {mesh} has {product} ranks but --world-size is {world_size}")
    if not 0 <= rank < world_size:
        raise LayoutError(f"rank {rank} is outside a world of {world_size}")
    return {"world_size": world_size, "rank": rank, "mesh": dims}


def mesh_groups(layout: dict) -> dict[tuple[int, ...], str]:
    """Rank tuple -> mesh dimension name for the groups the traced rank belongs to."""
    dims = layout.get("mesh") or []
    world = layout["world_size"]
    out = {tuple(range(world)): "world"}
    if not dims:
        return out
    sizes = [s for _, s in dims]
    strides = [1] * len(sizes)
    for i in range(len(sizes) - 2, -1, -1):
        strides[i] = strides[i + 1] * sizes[i + 1]
    rank = layout.get("rank", 0)
    coords = [(rank // strides[i]) % sizes[i] for i in range(len(sizes))]
    for i, (name, size) in enumerate(dims):
        base = rank - coords[i] * strides[i]
        out[tuple(base + k * strides[i] for k in range(size))] = name
    return out


def group_label(ranks: tuple[int, ...], names: dict[tuple[int, ...], str]) -> str:
    name = names.get(tuple(ranks))
    shown = _ranks_text(ranks)
    return f"{name} ({len(ranks)}: {shown})" if name else f"{len(ranks)} ranks: {shown}"


def _ranks_text(ranks) -> str:
    ranks = list(ranks)
    if len(ranks) > 2 and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}-{ranks[-1]}"
    if len(ranks) > 8:
        return ",".join(map(str, ranks[:8])) + ",..."
    return ",".join(map(str, ranks))


def human_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def _bytes_range(lo: int, hi: int) -> str:
    """'50.60-65.54 MB' (one unit when both share it), '4 B - 2.10 MB' otherwise."""
    low, high = human_bytes(lo), human_bytes(hi)
    if low == high:
        return low
    if low.split()[1] == high.split()[1]:
        return f"{low.split()[0]}-{high}"
    return f"{low} - {high}"


def judge_collectives(result: dict, target, place) -> tuple[list[Finding], dict]:
    """Findings, and the section {'title', 'rows', 'calls'}: rows summarise a step, calls are the JSON list."""
    from auditor.coverage import Coverage

    cov = Coverage.load(target)
    layout = result.get("distributed") or {}
    names = mesh_groups(layout) if layout else {}
    calls: dict[tuple, dict] = {}
    for rec in result.get("collectives", []):
        path, line, library = place.place(rec["frame"])
        key = (rec["op"], rec["reduce_op"], rec["dtype"], rec["bytes"], rec["buffer_bytes"], rec["group_size"],
               tuple(rec["group_ranks"]), rec["phase"], path, line, rec["any_source"])
        entry = calls.setdefault(key, {
            "op": rec["op"], "reduce_op": rec["reduce_op"] or None, "dtype": rec["dtype"], "bytes": rec["bytes"],
            "group_size": rec["group_size"], "count": 0, "path": path, "line": line, "phase": rec["phase"],
            "buffer_bytes": rec["buffer_bytes"], "group_ranks": list(rec["group_ranks"]),
            "group": group_label(tuple(rec["group_ranks"]), names), "library_lines": set(), "torch_ops": set(),
            "any_source": rec["any_source"]})
        entry["count"] += rec["count"]
        if rec["library"] or library:
            entry["library_lines"].add(rec["library"] or library)
        entry["torch_ops"].add(rec["torch_op"])
    ordered = sorted(calls.values(), key=lambda c: (_PHASES.index(c["phase"]) if c["phase"] in _PHASES else 9,
                                                   c["path"], c["line"], c["op"]))
    for c in ordered:
        c["library_lines"] = sorted(c["library_lines"])
        c["torch_ops"] = sorted(c["torch_ops"])
    findings = _hccl_findings(ordered, cov, target)
    for c in ordered:
        c.pop("any_source")
    section = {"title": _title(layout, ordered), "rows": _summary_rows(ordered), "calls": ordered}
    for ddp in layout.get("ddp_buckets") or []:
        path, line, _ = place.place(ddp["frame"])
        section[f"DDP at {path}:{line}, from step 2"] = (
            f"{ddp['calls']} all_reduce calls, {human_bytes(sum(ddp['bucket_bytes']))} in all: buckets of "
            f"{human_bytes(ddp['cap_bytes'])} rebuilt in gradient order (the traced first step sends one bucket)")
    if layout.get("problems"):
        # a collective the recorder could not read: say so rather than under-count silently
        section["not recorded"] = "; ".join(f"{k} (x{n})" for k, n in sorted(layout["problems"].items()))
    return findings, section


def _title(layout: dict, calls: list[dict]) -> str:
    per_step = sum(c["bytes"] * c["count"] for c in calls if c["phase"] != "setup")
    mesh = ", ".join(f"{n}={s}" for n, s in layout.get("mesh") or [])
    asked = ", ".join(sorted(layout.get("requested_backends") or {}))
    return (f"Collectives per training step on rank {layout.get('rank', 0)} of {layout.get('world_size', '?')} "
            f"(fake process group{' standing in for ' + asked if asked else ''}{', mesh ' + mesh if mesh else ''}): "
            f"{human_bytes(per_step)} per step")


def _summary_rows(calls: list[dict]) -> list[dict]:
    """One row per (collective, reduce op, dtype, group), steady step first, set-up (once) last."""
    groups: dict[tuple, dict] = {}
    for c in calls:
        once = c["phase"] == "setup"
        key = (once, c["op"], c["reduce_op"] or "", c["dtype"], c["group"])
        g = groups.setdefault(key, {"calls": 0, "bytes": 0, "sizes": set(), "phases": set()})
        g["calls"] += c["count"]
        g["bytes"] += c["bytes"] * c["count"]
        g["sizes"].add(c["bytes"])
        g["phases"].add(c["phase"])
    rows = []
    for (once, op, reduce_op, dtype, group), g in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1]["bytes"])):
        lo, hi = min(g["sizes"]), max(g["sizes"])
        rows.append({
            "collective": op, "reduce op": reduce_op or "-", "dtype": dtype, "group": group,
            "when": "set-up (once)" if once else "/".join(p for p in _PHASES if p in g["phases"]),
            "calls": g["calls"],
            "bytes per call": _bytes_range(lo, hi),
            "bytes": human_bytes(g["bytes"]),
        })
    step = [c for c in calls if c["phase"] != "setup"]
    if step:   # after the step's rows, before the set-up ones
        rows.insert(sum(1 for key in groups if not key[0]), {
            "collective": "total per step", "reduce op": "", "dtype": "", "group": "", "when": "",
            "calls": sum(c["count"] for c in step), "bytes per call": "",
            "bytes": human_bytes(sum(c["bytes"] * c["count"] for c in step))})
    return rows


def _hccl_findings(calls: list[dict], cov, target) -> list[Finding]:
    from auditor.trace import RULES

    groups: dict[tuple, dict] = {}

    def add(code: str, symbol: str, call: dict, reason: str, source: str, substitute: str | None) -> None:
        g = groups.setdefault((code, symbol, call["path"], call["line"]), {
            "count": 0, "bytes": 0, "groups": set(), "phases": set(), "library_lines": set(), "dtypes": set(),
            "ops": set(), "reason": reason, "source": source, "substitute": substitute})
        g["count"] += call["count"]
        g["bytes"] += call["bytes"] * call["count"]
        g["groups"].add(call["group"])
        g["phases"].add(call["phase"])
        g["library_lines"].update(call["library_lines"])
        g["dtypes"].add(call["dtype"])
        g["ops"].add(call["op"])

    for call in calls:
        op = call["op"]
        answer = cov.collective(op)
        if answer.kind == "unknown":
            continue  # not in the tables: nothing to judge it by
        qual = f"torch.distributed.{op}"
        if call["any_source"]:
            fact = cov.hccl_fact("no_any_source_recv") or {}
            add("NPU160", "torch.distributed.recv(src=None)", call,
                f"a receive from any source: HCCL has {fact.get('text', 'no receive-from-any-source')}",
                fact.get("source", ""), "pass src= the sending rank")
        if answer.supported is False:
            add("NPU160", qual, call, f"{qual} is {answer.via} on {target.describe()}", answer.source,
                answer.substitute)
        if call["reduce_op"]:
            red = cov.collective(f"ReduceOp.{call['reduce_op']}")
            if red.kind != "unknown" and red.supported is False:
                add("NPU161", f"torch.distributed.ReduceOp.{call['reduce_op']}", call,
                    f"ReduceOp.{call['reduce_op']}: {red.notes.split(';')[0]}", red.source, None)
            elif red.kind != "unknown" and red.supported is not False and red.via.startswith("emulated"):
                # the emulation is torch_npu's code path on every product (a product the sources leave
                # unstated makes the answer unverified, not the emulation)
                add("NPU162", f"torch.distributed.ReduceOp.{call['reduce_op']}", call,
                    f"ReduceOp.{call['reduce_op']}: {red.notes.split(';')[0]}", red.source, None)
            elif red.kind != "unknown" and red.supported == "unverified" and call["reduce_op"] not in _NAMED_OPS:
                # the sources are silent for this member: say so, do not guess error or fine
                add("NPU165", f"torch.distributed.ReduceOp.{call['reduce_op']}", call,
                    f"ReduceOp.{call['reduce_op']}: {red.notes.split(';')[0]}", red.source, None)
        bad = [d for d in call["dtype"].split(",") if answer.dtypes and d not in answer.dtypes and d != "-"]
        if bad:
            add("NPU163", f"{qual}[{','.join(bad)}]", call,
                f"{qual} supports {', '.join(answer.dtypes)} on HCCL, not {', '.join(bad)}", answer.source, None)
        rejected = cov.rejected_world_sizes(op)
        if call["group_size"] in rejected:
            add("NPU164", f"{qual}[group of {call['group_size']}]", call,
                f"{qual} rejects process groups of {', '.join(map(str, rejected))} ranks", answer.source, None)

    findings = []
    for (code, symbol, path, line), g in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][3], kv[0][0])):
        name, category, severity, effort = RULES[code]
        phases = "/".join(p for p in _PHASES if p in g["phases"])
        where = f" (issued at {', '.join(sorted(g['library_lines'])[:2])})" if g["library_lines"] else ""
        message = (f"{g['reason']}: {g['count']} call(s) in the {phases} on {', '.join(sorted(g['groups']))}, "
                   f"{human_bytes(g['bytes'])} in all{where}")
        data = {"count": g["count"], "bytes": g["bytes"], "groups": sorted(g["groups"]), "phases": sorted(g["phases"]),
                "dtypes": sorted(g["dtypes"]), "ops": sorted(g["ops"]), "library_lines": sorted(g["library_lines"]),
                "coverage_source": g["source"]}
        findings.append(Finding(code=code, name=name, category=category, severity=severity, effort=effort,
                                path=path, line=line, col=1, end_line=line, end_col=1, message=message,
                                substitution=g["substitute"] or _default_substitution(code), fix="none",
                                source="trace", symbol=symbol, data=data))
    return findings


def _default_substitution(code: str) -> str | None:
    from auditor.rules import rules_by_code

    rule = rules_by_code().get(code)
    return rule.substitution if rule else None
