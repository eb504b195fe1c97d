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


# ---- per-line resolution --------------------------------------------------------------------------
# Every aten answer is resolved here, per torch_npu line, against that line's own torch schemas
# (op_tables/inputs/torch-X.json, from the torch wheel's native_functions.yaml) and its own torch_npu
# wheel (op_tables/wheel_data/).  Statuses: 'yes' | 'no' | 'unverified'.

COMPOSITE_KINDS = ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
MAX_DEPTH = 8
TORCH_SCHEMA = "torchgen/packaged/ATen/native/native_functions.yaml"


def read_torch_schemas(inputs_dir: Path, torch_for_line: dict[str, str], all_lines: list[str]) -> dict[str, dict]:
    """line -> {'version', 'ops', 'wheel', 'approx'}: the schemas of the torch the line builds on; a line
    whose torch wheel is not pinned takes the nearest older pinned version (flagged 'approx')."""
    import json

    have = {p.stem[len("torch-"):]: p for p in inputs_dir.glob("torch-*.json")}
    loaded: dict[str, dict] = {}
    out: dict[str, dict] = {}
    for line in all_lines:
        wanted = torch_for_line[line]
        version, approx = wanted, None
        if version not in have:
            older = [v for v in have if _vkey(v) < _vkey(wanted)]
            if not older:
                raise ValueError(f"no torch schemas for {line} (torch {wanted}) in {inputs_dir}")
            version = max(older, key=_vkey)
            approx = f"torch {wanted} is not pinned; the torch {version} schemas stand in for it"
        if version not in loaded:
            loaded[version] = json.loads(have[version].read_text(encoding="utf-8"))
        out[line] = {"version": version, "ops": loaded[version]["ops"], "wheel": loaded[version]["wheel"],
                     "modules": loaded[version].get("modules", []), "approx": approx}
    return out


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _base_view(op: str) -> str:
    """'view_copy.dtype' -> 'view.dtype'; 'transpose_copy.int' -> 'transpose.int'."""
    name, _, overload = op.partition(".")
    base = name[: -len("_copy")] if name.endswith("_copy") else name
    return base + ("." + overload if overload else "")


class LineResolver:
    """Resolves aten overloads on one torch_npu line: NPU kernel, composite followed to its leaves,
    CPU fallback, raises, or absent."""

    def __init__(self, line: str, schemas: dict, npu_rows: dict[str, dict], wheel: dict | None,
                 own_wheel: bool, decompositions: dict, sparse: dict | None = None):
        self.line, self.schemas, self.npu_rows = line, schemas, npu_rows
        self.sparse = sparse or {}   # the line's own wheel: kernels for sparse NPU tensors (libtorch_npu.so)
        self.wheel, self.own_wheel, self.decomp = wheel, own_wheel, decompositions
        self.registered = set(wheel["registered_ops"]) | set(wheel["core_ops"]) if wheel and own_wheel else set()
        self.core = set(wheel["core_ops"]) if wheel else set()
        self.memo: dict[str, tuple] = {}
        self.tv = schemas["version"]

    def wheel_src(self) -> str:
        return "{torch_npu_wheel}: torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"

    def schema_src(self, op: str) -> str:
        return "{torch_wheel}: " + f"{TORCH_SCHEMA} (aten::{op})"

    def no_kernel_src(self, op: str) -> str:
        """Where 'no NPU kernel' is read: op-plugin has no entry for the line, the line's wheel registers none."""
        src = f"{OP_PLUGIN_YAML} (no kernel entry for this line)"
        if self.own_wheel:
            src += "; {torch_npu_wheel}: torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml (not registered)"
        return src

    def npu_kernel(self, op: str) -> tuple | None:
        row = self.npu_rows.get(op) or {}
        kinds = [k for k in KERNEL_KINDS if row and self.line in row["kernels"].get(k, [])]
        if self.own_wheel:
            if op in self.registered:
                if kinds:
                    return ("yes", f"npu kernel ({kinds[0]})", "registered in the torch_npu {torch_npu} wheel",
                            row["source"] + "; " + self.wheel_src())
                return ("yes", "npu kernel (torch_npu)", "registered by torch_npu {torch_npu} itself",
                        self.wheel_src())
            if kinds:
                return ("unverified", "npu kernel not in the release",
                        f"op-plugin lists {'/'.join(kinds)} for this line, but the torch_npu "
                        "{torch_npu} wheel does not register it", row["source"] + "; " + self.wheel_src())
            return None
        if kinds:
            return ("yes", f"npu kernel ({kinds[0]})", "op-plugin lists it for this line (no torch_npu wheel of "
                    "this line on PyPI to confirm)", row["source"])
        if self.wheel and op in self.core:
            return ("yes", "npu kernel (torch_npu)", f"torch_npu core kernel (in every release; nearest wheel "
                    f"{self.wheel['release']})", f"{self.wheel['wheel']}: torch_npu/csrc/aten/npu_native_functions.yaml")
        return None

    def resolve(self, op: str, stack: tuple = ()) -> tuple[str, str, str, str]:
        """(status, via, note, source)."""
        if op in self.memo:
            return self.memo[op]
        if op in stack:
            return ("unverified", "cycle", f"its proof would go through itself ({' -> '.join(stack + (op,))})", "")
        if len(stack) >= MAX_DEPTH:
            return ("unverified", "too deep", f"decomposition deeper than {MAX_DEPTH} levels", "")
        result = self._resolve(op, stack + (op,))
        if result[1] not in ("cycle", "too deep"):
            self.memo[op] = result
        return result

    def _resolve(self, op: str, stack: tuple) -> tuple[str, str, str, str]:
        row = self.schemas["ops"].get(op)
        if row is None:
            if self.schemas["approx"]:   # the line's own torch is not pinned: its stand-in cannot prove absence
                return ("unverified", "absent from the stand-in torch", f"aten::{op} is not in torch " + "{torch}, "
                        f"which stands in for this line's torch ({self.schemas['approx']})", "{torch_wheel}: " + TORCH_SCHEMA)
            return ("no", "absent", f"aten::{op} does not exist in torch " + "{torch}", "{torch_wheel}: " + TORCH_SCHEMA)
        kernel = self.npu_kernel(op)
        if kernel and kernel[0] == "yes":
            return kernel
        keys = row["d"]
        composite = [k for k in COMPOSITE_KINDS if k in keys]
        if row.get("sd"):
            target = row["sd"]
            status, via, note, src = self.resolve(target, stack)
            head = f"structured: the functional/in-place kernel runs {target}"
            if status == "yes":
                return ("yes", f"structured ({target})", f"{head}, covered by {via}", f"{self.schema_src(op)}; {src}")
            result = (status, via, f"{head}: {note}", f"{self.schema_src(op)}; {src}")
        elif row.get("ag"):
            target = row["ag"]
            status, via, note, src = self.resolve(target, stack)
            overload = op.partition(".")[2]
            is_out = overload == "out" or overload.endswith("_out") or overload.startswith("out_")
            head = (f"auto-generated out= overload: calls {target} and copies" if is_out else
                    f"auto-generated functional variant: clones the inputs and calls {target}")
            result = (status, via if status != "yes" else f"autogen out= ({target})",
                      f"{head}" + (f", covered by {via}" if status == "yes" else f": {note}"),
                      f"{self.schema_src(op)}; {src}")
        elif composite:
            leaves = self.decomp["ops"].get(op) if set(composite) & {"CompositeImplicitAutograd",
                                                                     "CompositeExplicitAutograd"} else None
            how = f"measured on torch {self.decomp.get('torch_version')}: op_tables/inputs/decompositions.json"
            if row.get("vc"):
                leaves, how = [_base_view(op), "clone"], "view_copy tag: the view, then a copy"
            if leaves == []:
                return ("yes", f"composite ({composite[0]})", f"its kernel makes no dispatched call ({how}): "
                        "metadata only, runs on any backend", self.schema_src(op))
            if leaves is None:
                result = ("unverified", f"composite ({composite[0]})",
                          "decomposes into other aten ops in C++; its leaves are not known here, so whether "
                          "they all have NPU kernels is unverified", self.schema_src(op))
            else:
                results = [(leaf, self.resolve(leaf, stack)) for leaf in leaves]
                # a leaf missing from this line's torch: the decomposition was measured on another torch
                bad = [(leaf, r) for leaf, r in results if r[0] == "no" and r[1] != "absent"]
                unknown = [(leaf, r) for leaf, r in results if r[0] == "unverified" or r[1] == "absent"]
                srcs = "; ".join(sorted({r[3] for _, r in results if r[3]}))[:600]
                if bad:
                    leaf, r = bad[0]
                    result = ("no", r[1], f"composite ({composite[0]}) -> {', '.join(leaves)} ({how}); leaf {leaf}: "
                              f"{r[1]} ({r[2]})", f"{self.schema_src(op)}; {srcs}")
                elif unknown:
                    leaf, r = unknown[0]
                    result = ("unverified", f"composite ({composite[0]})",
                              f"decomposes into {', '.join(leaves)} ({how}); leaf {leaf} is unverified ({r[2]})",
                              f"{self.schema_src(op)}; {srcs}")
                else:
                    return ("yes", f"composite ({composite[0]})",
                            f"decomposes into {', '.join(leaves)} ({how}), each covered", f"{self.schema_src(op)}; {srcs}")
        elif "CPU" in keys:
            result = ("no", "cpu fallback", "no NPU kernel; torch has a CPU kernel, so it runs on the CPU at run "
                      "time (an error when TORCH_NPU_FALLBACK_CPU_DISABLE=1)", f"{self.no_kernel_src(op)}; {self.schema_src(op)}")
        else:
            result = ("no", "raises", "no NPU kernel and no CPU kernel to fall back to (torch registers it only "
                      f"for {', '.join(keys) or 'no backend'})", f"{self.no_kernel_src(op)}; {self.schema_src(op)}")
        if kernel:  # op-plugin lists it but the release does not register it
            return (kernel[0] if result[0] != "yes" else "yes", kernel[1], f"{kernel[2]}; otherwise: {result[2]}",
                    f"{kernel[3]}; {result[3]}")
        if result[0] == "no" and result[1] in ("cpu fallback", "raises"):
            return self.sparse_kernel(op, result)
        return result

    def sparse_kernel(self, op: str, dense: tuple) -> tuple:
        """A kernel for sparse NPU tensors (SparseNPU / SparseCsrNPU), which the registration yaml files do not
        list: on sparse inputs the op runs on the NPU, so 'no' is not a definite answer."""
        name, _, overload = op.partition(".")
        token = f"{name}_{overload}"
        keys = [k for k in ("SparseNPU", "SparseCsrNPU") if token in self.sparse.get(k, ())]
        if not keys:
            return dense
        symbols = ", ".join(f"wrap_{k}_{token}" for k in keys)
        return ("unverified", "sparse npu kernel",
                f"the torch_npu {{torch_npu}} wheel registers a kernel for sparse NPU tensors ({symbols}): on "
                f"{' / '.join(keys)} inputs it runs on the NPU; on dense ones: {dense[1]} ({dense[2]})",
                "{torch_npu_wheel}: " + f"{self.sparse['file']} ({symbols}); {dense[3]}")

    def cpu_kernel(self, op: str) -> bool:
        row = self.schemas["ops"].get(op) or {}
        if row.get("sd"):
            return self.cpu_kernel(row["sd"])
        return "CPU" in row.get("d", [])


def aten_table(all_lines: list[str], npu_rows: dict[str, dict], schemas: dict[str, dict],
               extracts: list[dict], decompositions: dict[str, list[str]],
               npu_strings: dict[str, dict] | None = None) -> dict:
    """One row per aten overload with its answer per line as runs [from, to, status, via, note, source]."""
    resolvers = {}
    for line in all_lines:
        ext = extract_for_line(line, extracts, all_lines)
        own = bool(ext and ext["line"] == line)
        line_strings = (npu_strings or {}).get(line, {})
        sparse = line_strings.get("sparse_kernels") if own and not line_strings.get("stand_in_for") else None
        resolvers[line] = LineResolver(line, schemas[line], npu_rows, ext, own, decompositions, sparse)
    names = set(npu_rows)
    for s in schemas.values():
        names |= set(s["ops"])
    ops: dict[str, dict] = {}
    strings: dict[str, int] = {}   # notes and sources repeat across ops and lines: stored once, by index

    def intern(text: str) -> int:
        return strings.setdefault(text, len(strings))

    for op in sorted(names):
        runs: list[list] = []
        for line in all_lines:
            status, via, note, src = resolvers[line].resolve(op)
            # "... wheel: file; ..." sources: split so the per-file parts are shared between ops
            cell = [status, intern(via), intern(note), [intern(part) for part in src.split("; ") if part]]
            if runs and runs[-1][2:] == cell and all_lines.index(runs[-1][1]) == all_lines.index(line) - 1:
                runs[-1][1] = line
            else:
                runs.append([line, line, *cell])
        row: dict = {"lines": runs}
        if op in npu_rows:
            row["npu"] = {k: to_ranges(v, all_lines) for k, v in npu_rows[op]["kernels"].items() if v}
        ops[op] = row
    return {"schema": 2, "lines": all_lines, "count": len(ops),
            "torch_versions": {line: schemas[line]["version"] for line in all_lines},
            # placeholders in notes and sources, filled per line by auditor.coverage
            "line_inputs": {line: {"torch": schemas[line]["version"], "torch_wheel": schemas[line]["wheel"],
                                   **({"torch_npu": r.wheel["release"], "torch_npu_wheel": r.wheel["wheel"]}
                                      if r.wheel and r.own_wheel else {})}
                            for line, r in resolvers.items()},
            "approximations": sorted({f"{line}: {s['approx']}" for line, s in schemas.items() if s["approx"]}),
            "strings": list(strings), "ops": ops}
