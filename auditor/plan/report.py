"""`audit plan` output: one report dict (the JSON contract) rendered as console text, JSON or Markdown."""
from __future__ import annotations

import json
from typing import TextIO

FORMATS = ("console", "json", "markdown")

WALL_NAMES = {"tp": "tensor-parallel collectives", "cp": "context-parallel KV exchange",
              "ep": "expert all-to-all", "pp": "pipeline sends", "dp": "gradient sync (data parallel)",
              "bubble": "the pipeline bubble", "hbm": "memory-bound operators (HBM)", "compute": "matrix compute",
              "comm": "exposed communication, all kinds together"}


def _num(n: float) -> str:
    for unit, size in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f}{unit}"
    return f"{n:g}"


def _secs(t: float) -> str:
    return f"{t:.2f}" if t >= 0.01 else f"{t * 1e3:.3f}m"


def _gib(x: float) -> str:
    return f"{x:.1f} GiB" if x >= 0.05 else f"{x * 1024:.2f} MiB"


def _where(cluster: dict) -> str:
    n, size = cluster["devices"], cluster["scale_up"]["size"]
    if n > size and n % size == 0:
        return f"{n // size} x {size}-device {cluster['name']} domains"
    return f"{n} devices of {cluster['name']}"


def walls(report: dict) -> list[str]:
    """The walls in plain words: what, besides compute, takes a share of the best layout's step."""
    runs = [("cluster", report["cluster"], report["layouts"])]
    if report.get("compare"):
        runs.append(("compare", report["compare"]["cluster"], report["compare"]["layouts"]))
    shares: dict[str, list[tuple[str, float]]] = {}
    out = []
    for _, cluster, layouts in runs:
        best = next((l for l in layouts if l["fits"]), None)
        if best is None:
            out.append(f"nothing fits on {_where(cluster)}: the smallest layout needs "
                       f"{min(l['memory_gib']['total'] for l in layouts):.1f} GiB per device, "
                       f"{layouts[0]['capacity_gib']:.1f} GiB usable" if layouts else
                       f"no layout of this model divides onto {_where(cluster)}")
            continue
        step = best["step_time_s"]
        for key, t in best["time_breakdown_s"].items():
            if key != "compute":
                shares.setdefault(key, []).append((_where(cluster), t / step if step else 0.0))
        comm = sum(best["time_breakdown_s"][k] for k in ("tp", "cp", "ep", "pp", "dp"))
        shares.setdefault("comm", []).append((_where(cluster), comm / step if step else 0.0))
    for key, rows in shares.items():
        if max(share for _, share in rows) < 0.05:
            continue
        text = ", ".join(f"{share * 100:.0f} % of the step on {where}" if i == 0 else f"{share * 100:.0f} % on {where}"
                         for i, (where, share) in enumerate(rows))
        out.append(f"{WALL_NAMES[key]}: {text}")
    return out


def emit(report: dict, fmt: str, stream: TextIO) -> None:
    if fmt == "json":
        json.dump(report, stream, indent=1)
        stream.write("\n")
    elif fmt == "markdown":
        stream.write(markdown(report))
    else:
        stream.write(console(report))


def summary_rows(reports: list[dict]) -> list[list[str]]:
    rows = []
    for r in reports:
        m = r["model"]
        runs = [(r["cluster"], r["layouts"])] + ([(r["compare"]["cluster"], r["compare"]["layouts"])] if r.get("compare") else [])
        for cluster, layouts in runs:
            best = next((l for l in layouts if l["fits"]), None)
            name = f"{cluster['name']}:{cluster['devices']}"
            if best is None:
                rows.append([m["name"], _num(m["parameters"]), name, "nothing fits", "", "", "", "", ""])
                continue
            lay = (f"dp{best['dp']} tp{best['tp']} pp{best['pp']} cp{best['cp']} ep{best['ep']} "
                   f"z{best['zero']} {best['recompute']} mb{best['micro_batch']}")
            comm = sum(best["time_breakdown_s"][k] for k in ("tp", "cp", "ep", "pp", "dp")) / best["step_time_s"]
            rows.append([m["name"], _num(m["parameters"]), name, lay, f"{best['memory_gib']['total']:.1f}",
                         f"{best['step_time_s']:.2f}", f"{best['mfu'] * 100:.1f}%", _num(best["tokens_per_s"]),
                         f"{best['bound_by']} (comm {comm * 100:.0f}%)"])
    return rows


SUMMARY_COLUMNS = ("model", "params", "cluster", "best layout", "GiB/dev", "step s", "MFU", "tokens/s", "bound by")


def emit_many(reports: list[dict], fmt: str, stream: TextIO) -> None:
    """Several models planned with the same flags: a summary table, then each plan."""
    if fmt == "json":
        json.dump({"plans": reports, "summary": [dict(zip(SUMMARY_COLUMNS, row)) for row in summary_rows(reports)]},
                  stream, indent=1)
        stream.write("\n")
        return
    if fmt == "markdown":
        stream.write("## audit plan: summary\n\n" + _md_table(SUMMARY_COLUMNS, summary_rows(reports)) + "\n")
        for r in reports:
            stream.write(markdown(r))
        return
    stream.write("summary (best fitting layout per model and cluster):\n" + _table(SUMMARY_COLUMNS, summary_rows(reports)) + "\n")
    for r in reports:
        stream.write(console(r) + "\n")


# -- shared pieces --------------------------------------------------------------------------------------

LAYOUT_COLUMNS = ("dp", "tp", "pp", "cp", "ep", "zero", "recompute", "mb", "vpp", "GiB/dev", "fits", "step s",
                  "MFU", "tokens/s", "bound by")


def _layout_row(l: dict) -> list[str]:
    return [str(l["dp"]), str(l["tp"]), str(l["pp"]), str(l["cp"]), str(l["ep"]), str(l["zero"]), l["recompute"],
            str(l["micro_batch"]), str(l["virtual_stages"]), f"{l['memory_gib']['total']:.1f}",
            "yes" if l["fits"] else "NO", _secs(l["step_time_s"]), f"{l['mfu'] * 100:.1f}%",
            _num(l["tokens_per_s"]), l["bound_by"]]


def _model_rows(m: dict) -> list[tuple[str, str]]:
    rows = [("model", m["name"]), ("facts from", m["source"]),
            ("parameters", f"{_num(m['parameters'])} ({', '.join(f'{k}: {_num(v)}' for k, v in m['parameters_by_dtype'].items())})")]
    if m.get("moe"):
        moe = m["moe"]
        rows.append(("experts", f"{moe['experts']} routed (top-{moe['top_k']}), shared width {moe['shared_ffn']}; "
                                f"active {_num(m['active_parameters'])} of {_num(m['parameters'])} per token"))
    if m.get("sequence_length"):
        rows.append(("sequence x batch", f"{m['sequence_length']} tokens x {m['global_batch']} sequences = "
                                         f"{_num(m['tokens_per_step'])} tokens per step"))
    else:
        rows.append(("batch", f"{m['global_batch']} samples per step (the entry's example batch: {m['example_batch']})"))
    rows.append(("FLOPs per step", f"{_num(m['flops_per_step'])} (fwd + bwd, no recompute)"))
    for key, value in m["flops_check"].items():
        rows.append((f"  vs {key}", value))
    act = m.get("activation_bytes_per_layer")
    if act:
        rows.append(("activations / layer", f"{act['none'] / 2**20:.0f} MiB stored, {act['selective'] / 2**20:.0f} MiB "
                                            f"with selective recompute, {act['full'] / 2**20:.0f} MiB full "
                                            "(micro-batch 1, no TP)"))
        rows.append(("  Korthikanti 2022", f"{act['korthikanti_none'] / 2**20:.0f} MiB (sbh(34 + 5as/h)), "
                                           f"{act['korthikanti_selective'] / 2**20:.0f} MiB selective (34sbh)"))
    elif m.get("activation_bytes_per_sample") is not None:
        rows.append(("activations", f"{m['activation_bytes_per_sample'] / 2**20:.1f} MiB saved for backward per sample "
                                    "(measured: autograd saved-tensor hooks)"))
    meas = m.get("measured")
    if meas:
        rows.append(("trace", f"{meas['mode']}, {meas['seconds']} s: {_num(meas['parameters'])} parameters, "
                              f"{_num(m['flops_per_step_measured'])} FLOPs per step"))
    for name, split in (m.get("intensity") or {}).items():
        tops = ", ".join(f"{t['op']} {t['share'] * 100:.0f}% ({t['bound']})" for t in split["top_ops"][:4])
        rows.append((f"intensity on {name}", f"ridge {split['ridge_flops_per_byte']} FLOP/B: "
                                              f"{split['compute_bound_share'] * 100:.0f}% of roofline time compute-bound, "
                                              f"{split['hbm_bound_share'] * 100:.0f}% HBM-bound; {tops}"))
    return rows


def _cluster_rows(c: dict) -> list[tuple[str, str]]:
    rows = [("cluster", f"{c['name']}: {c['title']}"), ("devices", f"{c['devices']} x {c['device']}"
                                                         + (f" [{c['status'].upper()}, {c.get('available', '')}]"
                                                            if c["status"] != "shipping" else "")),
            ("peak", f"{c['peak_tflops']:g} TFLOPS {c['dtype']}"),
            ("HBM", f"{c['hbm_gb']:g} GB at {c['hbm_tb_s']:g} TB/s"),
            ("scale-up", f"{c['scale_up']['link']}: {c['scale_up']['size']} devices, "
                         f"{c['scale_up']['gb_s_per_device']:g} GB/s per device each way"),
            ("scale-out", f"{c['scale_out']['link']}: "
                          + (f"{c['scale_out']['gb_s_per_device']:g} GB/s per device each way"
                             if c["scale_out"]["gb_s_per_device"] else "none published"))]
    for key, cite in c["sources"].items():
        rows.append((f"  source {key}", cite))
    for note in c["notes"]:
        rows.append(("  note", note))
    return rows


def _detail(l: dict) -> list[str]:
    mem = l["memory_gib"]
    out = [f"memory per device (most loaded stage): weights {mem['weights']:.1f} + grads {mem['grads']:.1f} + "
           f"optimizer {mem['optimizer']:.1f} + activations {mem['activations']:.1f} = {mem['total']:.1f} GiB "
           f"of {l['capacity_gib']:.1f} usable"]
    comm = ", ".join(f"{k} {_gib(v)} over {l['links'][k]['link']}" for k, v in l["comm_gib_per_step"].items()
                     if v and k in l["links"])
    out.append(f"sent per device per step: {comm or 'nothing'}")
    br = ", ".join(f"{k} {_secs(v)}" for k, v in l["time_breakdown_s"].items() if v)
    out.append(f"step {_secs(l['step_time_s'])} s = {br} (s, m = ms); bubble fraction {l['pipeline_bubble'] * 100:.1f}% "
               f"with {l['micro_batches']} micro-batches, {l['virtual_stages']} virtual stage(s)")
    out += [f"WARNING: {w}" for w in l["warnings"]]
    return out


# -- console ------------------------------------------------------------------------------------------

def _table(header, rows) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(str(c).rjust(w) if i < len(cells) - 2 else str(c).ljust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]) + "\n"


def _pairs(rows) -> str:
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k.ljust(width)}  {v}\n" for k, v in rows)


def console(r: dict) -> str:
    out = ["audit plan: will it fit, how to lay it out, what it reaches\n\n", _pairs(_model_rows(r["model"])), "\n"]
    runs = [(r["cluster"], r["layouts"], r["evaluated"])]
    if r.get("compare"):
        runs.append((r["compare"]["cluster"], r["compare"]["layouts"], r["compare"]["evaluated"]))
    for cluster, layouts, evaluated in runs:
        out += [_pairs(_cluster_rows(cluster)), "\n"]
        if layouts:
            out.append(f"best layouts ({evaluated} evaluated):\n")
            out.append(_table(LAYOUT_COLUMNS, [_layout_row(l) for l in layouts]))
            out += [f"  {line}\n" for line in _detail(layouts[0])]
        else:
            out.append("no layout divides this model onto this cluster\n")
        out.append("\n")
    if r["walls"]:
        out.append("walls:\n" + "".join(f"  - {w}\n" for w in r["walls"]) + "\n")
    out.append("assumptions (change them with --assumptions FILE; defaults in auditor/plan/assumptions.yaml):\n")
    out += [f"  - {line}\n" for line in r["assumption_lines"]]
    if r["notes"]:
        out.append("notes:\n" + "".join(f"  - {n}\n" for n in r["notes"]))
    return "".join(out)


# -- markdown -----------------------------------------------------------------------------------------

def _md_table(header, rows) -> str:
    esc = lambda x: str(x).replace("|", "\\|")
    return ("| " + " | ".join(map(esc, header)) + " |\n|" + "---|" * len(header) + "\n"
            + "".join("| " + " | ".join(map(esc, row)) + " |\n" for row in rows))


def markdown(r: dict) -> str:
    out = ["## audit plan\n\n", _md_table(("fact", "value"), _model_rows(r["model"])), "\n"]
    runs = [(r["cluster"], r["layouts"], r["evaluated"])]
    if r.get("compare"):
        runs.append((r["compare"]["cluster"], r["compare"]["layouts"], r["compare"]["evaluated"]))
    for cluster, layouts, evaluated in runs:
        out += [f"### {cluster['name']} ({cluster['devices']} devices)\n\n",
                _md_table(("figure", "value"), _cluster_rows(cluster)), "\n"]
        if layouts:
            out += [f"Best layouts ({evaluated} evaluated):\n\n", _md_table(LAYOUT_COLUMNS, [_layout_row(l) for l in layouts]),
                    "\n", "".join(f"- {line}\n" for line in _detail(layouts[0])), "\n"]
    if r["walls"]:
        out.append("### Walls\n\n" + "".join(f"- {w}\n" for w in r["walls"]) + "\n")
    out.append("### Assumptions\n\n" + "".join(f"- {line}\n" for line in r["assumption_lines"]) + "\n")
    if r["notes"]:
        out.append("### Notes\n\n" + "".join(f"- {n}\n" for n in r["notes"]) + "\n")
    return "".join(out)


def clusters_text(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=1) + "\n"
    header = ("name", "devices", "device", "peak TFLOPS", "HBM GB", "TB/s", "scale-up", "GB/s", "scale-out GB/s", "status")
    table = []
    for c in rows:
        if "error" in c:
            table.append((c["name"], "-", c["error"], "", "", "", "", "", "", ""))
            continue
        table.append((c["name"], str(c["devices"]), c["device"], f"{c['peak_tflops']:g} {c['dtype']}", f"{c['hbm_gb']:g}",
                      f"{c['hbm_tb_s']:g}", f"{c['scale_up']['link']} x{c['scale_up']['size']}",
                      f"{c['scale_up']['gb_s_per_device']:g}",
                      f"{c['scale_out']['gb_s_per_device']:g}" if c["scale_out"]["gb_s_per_device"] else "-",
                      c["status"] + (" (assumed: " + ", ".join(c["assumed"]) + ")" if c["assumed"] else "")))
    if fmt == "markdown":
        return _md_table(header, table)
    return _table(header, table)
