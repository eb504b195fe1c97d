"""aten operator coverage per torch_npu line, from op-plugin's op_plugin_functions.yaml and the
installed PyTorch's dispatcher registry (composite kernels)."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

OP_PLUGIN_YAML = "op-plugin/config/op_plugin_functions.yaml"
DEPRECATED_YAML = "op-plugin/config/deprecated.yaml"
KERNEL_KINDS = ("op_api", "acl_op", "dvm")  # preference order: aclnn (op_api) is what torch_npu runs by default
COMPOSITE_KEYS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
ATEN_SECTIONS = ("official", "autograd", "quant")  # sections whose entries are aten overloads by definition


def op_key(func: str) -> str:
    """'add.Tensor(Tensor self, ...) -> Tensor' -> 'add.Tensor'; 'lgamma(Tensor self)' -> 'lgamma'."""
    return func.split("(", 1)[0].strip()


def expand_versions(spec, all_lines: list[str]) -> list[str]:
    """The lines an `acl_op`/`op_api`/`dvm` value covers: 'all_version', a [from, to] range with
    'newest' as open end, one line 'v2.2', or a comma list 'v2.1, v2.2'."""
    if spec is None:
        return []
    if spec == "all_version":
        return list(all_lines)
    if isinstance(spec, str):
        items = [s.strip() for s in spec.split(",") if s.strip()]
        is_range = False
    else:
        items = [str(s).strip() for s in spec]
        is_range = len(items) == 2
    items = [all_lines[-1] if s == "newest" else s for s in items]
    unknown = [s for s in items if s not in all_lines]
    if unknown:
        raise ValueError(f"unknown torch_npu line(s) {unknown} in version spec {spec!r}")
    if is_range:
        lo, hi = all_lines.index(items[0]), all_lines.index(items[1])
        return all_lines[lo:hi + 1]
    return [s for s in all_lines if s in items]


def spec_text(spec) -> str:
    if isinstance(spec, list):
        return "[" + ", ".join(str(s) for s in spec) + "]"
    return str(spec)


def read_op_plugin(ascend_dir: Path) -> tuple[list[str], list[dict]]:
    """All entries of op_plugin_functions.yaml with section, line number and per-kind line lists."""
    path = ascend_dir / OP_PLUGIN_YAML
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    all_lines = [str(v) for v in doc["all_version"]]
    func_lines = [i + 1 for i, line in enumerate(text.splitlines()) if re.match(r"\s*-\s*func:", line)]
    entries: list[dict] = []
    for section, items in doc.items():
        if section == "all_version":
            continue
        for item in items or []:
            entries.append({"section": section, "item": item})
    if len(entries) != len(func_lines):
        raise ValueError(f"{path}: {len(entries)} entries but {len(func_lines)} '- func:' lines")
    rows = []
    for entry, lineno in zip(entries, func_lines):
        item = entry["item"]
        kernels = {kind: expand_versions(item.get(kind), all_lines) for kind in KERNEL_KINDS if kind in item}
        specs = "; ".join(f"{kind}: {spec_text(item[kind])}" for kind in KERNEL_KINDS if kind in item)
        rows.append({
            "op": op_key(item["func"]),
            "section": entry["section"],
            "kernels": kernels,
            "source": f"{OP_PLUGIN_YAML}:{lineno} ({entry['section']}: {op_key(item['func'])}; {specs or 'no kernel entry'})",
        })
    return all_lines, rows


def read_deprecated(ascend_dir: Path) -> dict[str, dict]:
    path = ascend_dir / DEPRECATED_YAML
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = {}
    for item in doc.get("deprecated", []):
        out[str(item["name"])] = {"replace": item.get("replace"), "source": f"{DEPRECATED_YAML} (name: {item['name']})"}
    return out


def torch_registry() -> tuple[str, dict[str, dict]]:
    """Every aten overload the installed torch registers, with its composite kernel kinds and,
    for CompositeExplicitAutogradNonFunctional ones, the out= overload their kernel calls."""
    import torch

    names = sorted(n for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::"))
    schemas: dict[str, object] = {}
    for qualified in names:
        name, _, overload = qualified[len("aten::"):].partition(".")
        try:
            schemas[qualified[len("aten::"):]] = torch._C._get_schema("aten::" + name, overload)
        except RuntimeError:
            continue
    by_base: dict[str, list[str]] = {}
    for key in schemas:
        by_base.setdefault(key.split(".")[0], []).append(key)

    def signature(schema) -> list[tuple[str, str]]:
        return [(a.name, str(a.type)) for a in schema.arguments if not a.is_out]

    registry: dict[str, dict] = {}
    for key, schema in schemas.items():
        kinds = [k for k in COMPOSITE_KEYS
                 if torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + key, k)]
        row: dict = {"composite": kinds}
        if "CompositeExplicitAutogradNonFunctional" in kinds:
            base = key.split(".")[0].rstrip("_")
            wanted = signature(schema)
            outs = sorted(k for k in by_base.get(base, [])
                          if any(a.is_out for a in schemas[k].arguments) and signature(schemas[k]) == wanted)
            row["out"] = outs[0] if outs else None
        registry[key] = row
    return torch.__version__.split("+")[0], registry


def to_ranges(covered: list[str], all_lines: list[str]) -> list[list[str]]:
    """['v2.1', 'v2.2', 'v2.5'] -> [['v2.1', 'v2.2'], ['v2.5', 'v2.5']] (runs of consecutive lines)."""
    runs: list[list[str]] = []
    last = None
    for line in sorted(covered, key=all_lines.index):
        idx = all_lines.index(line)
        if runs and last == idx - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
        last = idx
    return runs


def read_wheel_extracts(folder: Path) -> list[dict]:
    """The op lists op_tables/crosscheck_wheel.py extracted from torch_npu wheels, oldest first."""
    import json

    extracts = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("torch_npu-*.json"))]
    return sorted(extracts, key=lambda d: tuple(int(x) for x in re.findall(r"\d+", d["release"])))


def extract_for_line(line: str, extracts: list[dict], all_lines: list[str]) -> dict | None:
    """The wheel that speaks for a line: its own release, else the nearest older one, else the oldest newer one."""
    if not extracts:
        return None
    own = [e for e in extracts if e["line"] == line]
    if own:
        return own[-1]
    idx = all_lines.index(line)
    older = [e for e in extracts if e["line"] in all_lines and all_lines.index(e["line"]) < idx]
    return older[-1] if older else extracts[0]


def wheel_kernels(all_lines: list[str], npu_rows: dict[str, dict], extracts: list[dict],
                  names: set[str]) -> tuple[dict[str, dict], dict[str, dict[str, str]]]:
    """aten overloads a wheel registers for the NPU that op_plugin_functions.yaml does not list for the
    line (torch_npu's own kernels: view, empty, copy_, _fused_adam_ ...), and op-plugin kernels a
    line's own wheel lacks."""
    extra: dict[str, dict] = {}
    missing: dict[str, dict[str, str]] = {}
    for line in all_lines:
        ext = extract_for_line(line, extracts, all_lines)
        if ext is None:
            continue
        listed = {op for op, row in npu_rows.items() if any(line in v for v in row["kernels"].values())}
        # a line's own wheel speaks for everything it registers; another release only for torch_npu's
        # core kernels (npu_native_functions.yaml: views, empty, copy_ ...), which every release has
        from_wheel = ext["registered_ops"] if ext["line"] == line else ext["core_ops"]
        for op in from_wheel:
            if op in names and op not in listed:
                row = extra.setdefault(op, {"lines": [], "releases": []})
                row["lines"].append(line)
                if ext["release"] not in row["releases"]:
                    row["releases"].append(ext["release"])
        if ext["line"] == line:
            for op in sorted(listed - set(ext["registered_ops"])):
                missing.setdefault(op, {})[line] = ext["release"]
    return extra, missing


def aten_table(all_lines: list[str], npu_rows: dict[str, dict], registry: dict[str, dict],
               torch_version: str, extracts: list[dict] | None = None) -> dict:
    """One row per aten overload: NPU kernels as line ranges (with the yaml entry as source), and the
    composite kernels the installed torch registers.  auditor.coverage.aten resolves a line from it."""
    ops: dict[str, dict] = {}
    extra, missing = wheel_kernels(all_lines, npu_rows, extracts or [], set(npu_rows) | set(registry))
    for op in sorted(set(npu_rows) | set(registry)):
        row: dict = {}
        if op in npu_rows:
            row["npu"] = {k: to_ranges(v, all_lines) for k, v in npu_rows[op]["kernels"].items()}
            row["source"] = npu_rows[op]["source"]
        if op in extra:
            row.setdefault("npu", {})["torch_npu"] = to_ranges(extra[op]["lines"], all_lines)
            row["wheel_source"] = ("registered in torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml of the "
                                   f"torch_npu {', '.join(extra[op]['releases'])} wheel(s) "
                                   "(op_tables/wheel_data/; lines without their own wheel take only the core kernels of the nearest one)")
        if op in missing:
            row["missing_in_wheels"] = missing[op]
        if op in registry:
            row.update({k: v for k, v in registry[op].items() if v or k == "out"})
            if not registry[op]["composite"]:
                row.pop("out", None)
        else:
            row["not_in_torch"] = True
        ops[op] = row
    return {"schema": 1, "lines": all_lines, "torch_version": torch_version,
            "composite_source": f"torch {torch_version} dispatcher (torch._C._dispatch_has_kernel_for_dispatch_key)",
            "count": len(ops), "ops": ops}
