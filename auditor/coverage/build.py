"""Build the coverage tables in op_tables/ from the Ascend snapshots in ../shared/ascend/.

    python -m auditor.coverage.build [--ascend-dir DIR] [--out DIR]

Deterministic: the same sources and the same installed torch give byte-identical files.
Reads only committed data besides the Ascend snapshots: op_tables/inputs/ (torch schemas per version,
torch_npu strings, pinned by sha256) and op_tables/wheel_data/ (torch_npu registrations); no torch needed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from auditor.coverage import build_aten, build_docs, build_extra
from auditor.coverage.products import products_in_hardware_series

SCHEMA = 1
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ASCEND_DIR = REPO_ROOT.parent / "shared" / "ascend"
DEFAULT_OUT = REPO_ROOT / "op_tables"
WHEEL_DATA = REPO_ROOT / "op_tables" / "wheel_data"  # written by op_tables/crosscheck_wheel.py (network)
INPUTS = REPO_ROOT / "op_tables" / "inputs"  # pinned registry inputs, op_tables/inputs.py


class BuildError(Exception):
    """Missing or unreadable sources; main() prints it without a traceback."""


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    path.write_text(text + "\n", encoding="utf-8")


def api_doc_for_line(line: str, doc_versions: list[str]) -> str:
    """The support list that answers for a torch_npu line: the newest page set whose torch version is
    not newer than the line, else the oldest one (lines older than every page set)."""
    def key(v: str) -> tuple[int, int]:
        major, minor = v.lstrip("v").split(".")[:2]
        return int(major), int(minor)

    older = [v for v in doc_versions if key(v) <= key(line)]
    return older[-1] if older else doc_versions[0]


def split_op_plugin(rows: list[dict], registry: set[str]) -> tuple[dict[str, dict], dict[str, dict]]:
    """op-plugin entries -> (aten overloads, torch_npu custom ops), merging repeated entries."""
    aten: dict[str, dict] = {}
    custom: dict[str, dict] = {}
    for row in rows:
        is_aten = row["section"] in build_aten.ATEN_SECTIONS or row["op"] in registry
        table = aten if is_aten else custom
        merged = table.setdefault(row["op"], {"kernels": {}, "sources": []})
        for kind, lines in row["kernels"].items():
            merged["kernels"][kind] = sorted(set(merged["kernels"].get(kind, [])) | set(lines),
                                             key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))
        merged["sources"].append(row["source"])
    for table in (aten, custom):
        for row in table.values():
            row["source"] = "; ".join(row.pop("sources"))
    return aten, custom


def missing_modules(api_sets: list[tuple[str, dict]], schemas: dict[str, dict]) -> dict[str, list[str]]:
    """torch version -> modules that support-list APIs live in but that torch version does not ship
    (torch.distributed.pipelining before 2.4): those APIs are absent on the lines built on it."""
    modules_of = {s["version"]: set(s["modules"]) for s in schemas.values()}
    every = set().union(*modules_of.values())
    wanted = set()
    for _, apis in api_sets:
        for name in apis:
            parts = name.split(".")
            for i in range(len(parts), 1, -1):
                if ".".join(parts[:i]) in every:
                    wanted.add(".".join(parts[:i]))
                    break
    out = {}
    for version, mods in sorted(modules_of.items()):
        missing = sorted(m for m in wanted - mods if not any(m.startswith(x + ".") for x in wanted - mods if x != m))
        out[version] = missing
    return out


def read_npu_strings(lines: list[str]) -> dict[str, dict]:
    """line -> the strings extracted from the newest pinned torch_npu wheel of that line."""
    by_line: dict[str, dict] = {}
    for path in sorted(INPUTS.glob("torch_npu-*.strings.json"), key=lambda p: build_aten._vkey(p.name)):
        data = json.loads(path.read_text(encoding="utf-8"))
        major, minor = data["release"].split(".")[:2]
        line = f"v{major}.{minor}"
        if line in lines:
            by_line[line] = data   # sorted oldest first: the newest release of a line wins
    for i, line in enumerate(lines):   # v2.2, v2.15: no wheel on PyPI; the nearest older line's wheel stands in
        if line not in by_line:
            older = [l for l in lines[:i] if l in by_line and not by_line[l].get("stand_in_for")]
            if older:
                by_line[line] = {**by_line[older[-1]], "stand_in_for": line}
    return by_line


def hardware_lists(npu_strings: dict[str, dict]) -> dict[str, dict]:
    """line -> the products its own torch_npu wheel names under "Hardware support" (README in METADATA), with
    the file and line read. Lines without their own wheel, or whose README has no such list, are absent."""
    out: dict[str, dict] = {}
    for line, data in npu_strings.items():
        hw = data.get("hardware")
        if hw and not data.get("stand_in_for"):
            products = sorted({p for title in hw["series"] for p in products_in_hardware_series(title)})
            out[line] = {"products": products, "series": hw["series"],
                         "source": f"{data['wheel']}: {hw['file']}:{hw['line']} (Hardware support)"}
    return out


def build(ascend_dir: Path | str = DEFAULT_ASCEND_DIR, out_dir: Path | str = DEFAULT_OUT) -> dict[str, int]:
    """Write every table; returns the number of rows per file (what `audit tables build` prints)."""
    ascend_dir, out_dir = Path(ascend_dir), Path(out_dir)
    if not (ascend_dir / build_aten.OP_PLUGIN_YAML).is_file():
        raise BuildError(f"{ascend_dir} does not hold the Ascend snapshots "
                         f"({build_aten.OP_PLUGIN_YAML} is missing); pass --ascend-dir")
    lines, op_rows = build_aten.read_op_plugin(ascend_dir)
    pinned = json.loads((INPUTS / "PINNED.json").read_text(encoding="utf-8"))
    schemas = build_aten.read_torch_schemas(INPUTS, pinned["torch_for_line"], lines)
    all_schema_ops = set().union(*(s["ops"] for s in schemas.values()))
    aten_npu, custom_npu = split_op_plugin(op_rows, all_schema_ops)
    counts: dict[str, int] = {}

    decomp_path = INPUTS / "decompositions.json"
    decompositions = json.loads(decomp_path.read_text(encoding="utf-8")) if decomp_path.is_file() else {"ops": {}}
    wheels = build_aten.read_wheel_extracts(WHEEL_DATA)
    npu_strings = read_npu_strings(lines)
    aten = build_aten.aten_table(lines, aten_npu, schemas, wheels, decompositions, npu_strings)
    write_json(out_dir / "aten.json", aten)
    counts["aten.json"] = aten["count"]

    docs = build_docs.doc_sets(ascend_dir)
    if not docs:
        raise BuildError(f"no pytorch_X-Y-Z folders under {ascend_dir / build_docs.NATIVE_API_DIR}")
    api_sets = []
    for version, folder in docs:
        apis = build_docs.parse_native_api(ascend_dir, folder)
        api_sets.append((version, apis))
        write_json(out_dir / "api" / f"torch-{version}.json", {
            "schema": SCHEMA, "torch_version": version,
            "source": folder.relative_to(ascend_dir).as_posix(), "apis": apis})
        counts[f"api/torch-{version}.json"] = len(apis)

    extra = build_extra.build_all(ascend_dir, lines, custom_npu, build_aten.read_deprecated(ascend_dir),
                                   api_sets, npu_strings, wheels,
                                   json.loads((INPUTS / "torch_npu-source.json").read_text(encoding="utf-8")))
    for name, table in extra.items():
        write_json(out_dir / f"{name}.json", table)
        counts[f"{name}.json"] = table["count"]

    doc_versions = [v for v, _ in docs]
    write_json(out_dir / "index.json", {
        "hardware": hardware_lists(npu_strings),
        "schema": SCHEMA,
        "generated_by": "python -m auditor.coverage.build",
        "lines": lines,
        "torch_versions": aten["torch_versions"],
        "torch_wheels": {s["version"]: f"{s['wheel']} (file list)" for s in schemas.values()},
        "missing_modules": missing_modules(api_sets, schemas),
        "api_docs": {line: api_doc_for_line(line, doc_versions) for line in lines},
        "approximations": aten["approximations"] + [
            "Composites are followed to their leaves only where the leaves are known (structured delegates, "
            "auto-generated out= overloads, view_copy ops, measured decompositions); otherwise 'unverified'.",
            "Python API support per line uses the nearest native_api support list not newer than the line "
            f"(lists exist for torch {', '.join(doc_versions)}); older lines use the {doc_versions[0]} list "
            "only for APIs that exist in the line's torch; otherwise unverified.",
            "The native_api lists have columns for Atlas A2, Atlas A3 and Ascend 950DT only; 910A and "
            "310P answers for Python APIs are 'unverified' unless a restriction names them.",
            "Kernel registrations have no product dimension: an aten yes from a registration holds for the "
            "products the line's own torch_npu wheel names under 'Hardware support' (its METADATA), 910A only "
            "with an acl_op kernel; other products are unverified.",
        ],
        "files": dict(sorted(counts.items())),
    })
    return counts


def build_cli(args: argparse.Namespace) -> int:
    """`audit tables build` and `python -m auditor.coverage.build`: exit 0, or 2 with a message."""
    try:
        counts = build(getattr(args, "ascend_dir", None) or DEFAULT_ASCEND_DIR, getattr(args, "out", None) or DEFAULT_OUT)
    except (BuildError, ValueError, OSError, KeyError) as exc:
        print(f"error: cannot build the coverage tables: {exc}", file=sys.stderr)
        return 2
    for name, n in sorted(counts.items()):
        print(f"{name}: {n} rows")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m auditor.coverage.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ascend-dir", type=Path, default=DEFAULT_ASCEND_DIR,
                        help="the Ascend snapshots (default: ../shared/ascend next to the repository)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the tables (default: op_tables/)")
    return build_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
