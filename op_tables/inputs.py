"""Pinned registry inputs of the coverage tables: fetch the wheels, extract compact data, check freshness.

    python op_tables/inputs.py fetch   [--wheel-dir DIR]   # pip download every pinned wheel, verify sha256
    python op_tables/inputs.py extract [--wheel-dir DIR]   # wheels -> op_tables/inputs/*.json, refresh PINNED.json
    python op_tables/inputs.py extract-source --repo GIT   # Ascend/pytorch clone -> inputs/torch_npu-source.json
    python op_tables/inputs.py check                       # offline: derived files match PINNED.json

Inputs (read as data, never installed):
- one PyTorch wheel per torch version a torch_npu line builds on: its
  torchgen/packaged/ATen/native/native_functions.yaml (every aten overload of that release, its dispatch
  keys, structured delegate, autogen'd out= overloads, tags) -> inputs/torch-X.json;
- the torch_npu wheels: registered aten overloads (op_tables/wheel_data/, see crosscheck_wheel.py) and the
  environment-variable names and collective facts read from their Python files and shared libraries, and the
  products the release names in its package description (METADATA's "Hardware support" tables)
  -> inputs/torch_npu-X.strings.json.
PINNED.json records each wheel's file name and sha256 and the sha256 of every derived file, so a build
from the committed derived data is reproducible and a stale or hand-edited derived file is caught.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
PINNED = INPUTS / "PINNED.json"
SOURCE_FACTS = "torch_npu-source.json"   # reduce-op facts from Ascend/pytorch's source (op_tables/source_facts.py)
NATIVE_FUNCTIONS = "torchgen/packaged/ATen/native/native_functions.yaml"
# torch version each torch_npu line builds on (torch_npu X.Y.* is built against torch X.Y.*)
TORCH_FOR_LINE = {"v2.1": "2.1.0", "v2.2": "2.2.0", "v2.3": "2.3.1", "v2.4": "2.4.0", "v2.5": "2.5.1",
                  "v2.6": "2.6.0", "v2.7": "2.7.1", "v2.8": "2.8.0", "v2.9": "2.9.1", "v2.10": "2.10.0",
                  "v2.11": "2.11.0", "v2.12": "2.12.0", "v2.13": "2.13.0", "v2.14": "2.14.0", "v2.15": "2.15.0"}
# the smallest wheel that carries native_functions.yaml (macOS arm64); pip args per version
TORCH_PLATFORMS = ("macosx_11_0_arm64", "macosx_14_0_arm64")
ENV_NAME = re.compile(rb"(?<![A-Za-z0-9_])((?:TORCH_HCCL|HCCL|P2P_HCCL|ASCEND|PYTORCH_NPU|PYTORCH_NO_NPU|TORCH_NPU|NPU|ACL"
                      rb"|INF_NAN|TASK_QUEUE|TORCH_NCCL|NCCL)_[A-Z0-9_]{2,})(?![A-Za-z0-9_])")
# strings that show how a release handles collectives (matched in its Python files and libtorch_npu.so)
FACT_PATTERNS = {
    "premul_sum": rb"_make_hccl_premul_sum|PreMulSum Data type must be[^\x00]*",
    "reduce_op_error": rb"Cannot use ReduceOp\.",
}


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n",
                    encoding="utf-8")


# ---- torch: native_functions.yaml --------------------------------------------------------------------

def _keys(dispatch: dict | None) -> list[str]:
    return sorted({k.strip() for key in (dispatch or {}) for k in str(key).split(",") if k.strip()})


def schema_rows(yaml_text: bytes) -> dict[str, dict]:
    """One row per aten overload: d (dispatch keys; 'CompositeImplicitAutograd' when the entry has none),
    sd (structured delegate), ag (the functional op an autogen'd out= overload is generated from), vc
    (view_copy tag), out (an out= overload)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rows: dict[str, dict] = {}
    for entry in yaml.load(yaml_text, Loader=loader):
        func = entry["func"]
        key = func.split("(", 1)[0].strip()
        row: dict = {}
        keys = _keys(entry.get("dispatch"))
        if entry.get("structured_delegate"):
            row["sd"] = entry["structured_delegate"]
        elif not keys:
            keys = ["CompositeImplicitAutograd"]
        row["d"] = keys
        tags = entry.get("tags") or []
        tags = [tags] if isinstance(tags, str) else tags
        if "view_copy" in tags:
            row["vc"] = True
        if re.search(r"\(\w!\)", func.split("->", 1)[0]) and "*" in func.split("->", 1)[0]:
            row["out"] = True
        rows[key] = row
        for gen in str(entry.get("autogen") or "").split(","):
            gen = gen.strip()
            if gen:
                rows[gen] = {"d": ["CompositeExplicitAutograd"], "ag": key, "out": True}
    return dict(sorted(rows.items()))


def extract_torch(wheel: Path, version: str) -> dict:
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(NATIVE_FUNCTIONS)
        modules = sorted(m for m in {n[:-len(".py")].removesuffix("/__init__").replace("/", ".")
                                     for n in zf.namelist() if n.startswith("torch/") and n.endswith(".py")}
                         if not any(part.startswith("_") for part in m.split(".")[1:]) and ".testing" not in m)
    return {"schema": 1, "torch_version": version, "wheel": wheel.name, "modules": modules,
            "source": f"{wheel.name}: {NATIVE_FUNCTIONS}", "yaml_sha256": hashlib.sha256(text).hexdigest(),
            "ops": schema_rows(text)}


# ---- torch_npu: strings ------------------------------------------------------------------------------

ASCEND_ENV_PAGES = HERE.parent.parent / "shared" / "ascend" / "pytorch" / "docs" / "environment_variable"


ASCEND_ENV_INFO = HERE.parent.parent / "shared" / "ascend" / "msprof-analyze" / "rules" / "environment_variable_info.yaml"


def documented_env_names() -> list[str]:
    """Variable names with a page in the Ascend snapshot (TORCH_NPUGRAPH_GC, TORCHINDUCTOR_NPU_BACKEND ...) or a
    row in msprof-analyze's environment-variable rules (ACLNN_CACHE_LIMIT): searched for by name, since not every
    one fits ENV_NAME's prefixes."""
    names: set[str] = set()
    if ASCEND_ENV_PAGES.is_dir():
        names |= {p.stem.split("）")[-1] for p in ASCEND_ENV_PAGES.rglob("*.md")}
    if ASCEND_ENV_INFO.is_file():
        import yaml
        names |= {str(k) for k in (yaml.safe_load(ASCEND_ENV_INFO.read_text(encoding="utf-8")) or {})}
    return sorted(n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]+", n))


# kernels torch_npu registers for sparse NPU tensors: torchgen's wrapper symbols in libtorch_npu.so
# (`wrap_SparseNPU_copy_sparse_to_sparse__ES...`: op `copy_sparse_to_sparse_`, overload "" ), which the
# npu_native_functions*.yaml files do not list
SPARSE_WRAPPER = re.compile(rb"wrap_(Sparse(?:Csr)?NPU)_([A-Za-z0-9_]+?)E(?=[A-Za-z])")


def sparse_kernels(zf: zipfile.ZipFile) -> dict:
    """{"file": the library, "SparseNPU": [op_overload, ...], "SparseCsrNPU": [...]} ({} without the library)."""
    lib = next((n for n in zf.namelist() if n.endswith("lib/libtorch_npu.so")), None)
    if lib is None:
        return {}
    found: dict[str, set[str]] = {}
    for m in SPARSE_WRAPPER.finditer(zf.read(lib)):
        found.setdefault(m.group(1).decode(), set()).add(m.group(2).decode())
    return {"file": lib, **{key: sorted(v) for key, v in sorted(found.items())}}


def hardware_support(metadata: str, name: str) -> dict | None:
    """The product series a torch_npu release names under its README's "## Hardware support" heading (the
    first column of the tables there), with the METADATA line of the heading; None when it has none."""
    lines = metadata.splitlines()
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"#+\s*Hardware support\s*", line.strip())), None)
    if start is None:
        return None
    series: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.strip().startswith("|") else []
        if cells and cells[0] and not set(cells[0]) <= set("-: ") and cells[0] != "Product series":
            series.append(cells[0])
    return {"file": name, "line": start + 1, "series": series}


def extract_npu_strings(wheel: Path, release: str) -> dict:
    """Environment-variable names and collective facts a torch_npu release contains, with the file each
    was first seen in (Python sources first, then libtorch_npu.so)."""
    env: dict[str, str] = {}
    names = documented_env_names()
    exact = re.compile(rb"(?<![A-Za-z0-9_])(" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?![A-Za-z0-9_])") \
        if names else None
    facts: dict[str, dict] = {}
    with zipfile.ZipFile(wheel) as zf:
        members = sorted(n for n in zf.namelist() if n.startswith("torch_npu/") and n.endswith(".py"))
        members += [n for n in zf.namelist() if n.endswith("lib/libtorch_npu.so")]
        for name in members:
            data = zf.read(name)
            for m in ENV_NAME.finditer(data):
                env.setdefault(m.group(1).decode(), name)
            for m in (exact.finditer(data) if exact else ()):
                env.setdefault(m.group(1).decode(), name)
            for fact, pattern in FACT_PATTERNS.items():
                m = re.search(pattern, data)
                if m and fact not in facts:
                    facts[fact] = {"file": name, "text": m.group(0).decode("ascii", "replace")}
        python_apis = custom_api_definitions(zf)
        sparse = sparse_kernels(zf)
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        hardware = hardware_support(zf.read(meta).decode("utf-8", "replace"), meta) if meta else None
    return {"schema": 1, "release": release, "wheel": wheel.name,
            "env": dict(sorted(env.items())), "facts": facts, "python_apis": python_apis, "hardware": hardware,
            "sparse_kernels": sparse}


CUSTOM_OPS = HERE / "custom_ops.json"


def _defined_names(source: bytes) -> set[str] | None:
    """Names a module defines at any depth (def, class, assignment, import alias, __all__ entry); None when
    it cannot be told (a syntax error, or a star import that can bring in any name)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)   # __all__ entries, setattr / getattr names
    return names


def custom_api_definitions(zf: zipfile.ZipFile) -> dict[str, str]:
    """For each documented torch_npu Python API (custom_ops.json rows with no op-plugin range), the wheel file
    whose module defines its name, or "" when the module exists in the wheel and does not define it
    (torch_npu.npu.mstx.annotate before 2.7.1).  APIs whose module is not a Python file of the wheel, or
    whose module cannot be read (star import), are left out: the wheel does not settle them."""
    if not CUSTOM_OPS.is_file():
        return {}
    files = set(zf.namelist())
    out: dict[str, str] = {}
    for key, row in sorted(json.loads(CUSTOM_OPS.read_text())["ops"].items()):
        if row.get("lines") is not None:
            continue
        parts = key.split(".")
        if parts[0] == "torch" and len(parts) > 2 and parts[1] == "npu":
            parts = ["torch_npu"] + parts[1:]
        if parts[0] != "torch_npu":
            continue
        for cut in range(len(parts) - 1, 1, -1):
            base = "/".join(parts[:cut])
            path = next((f for f in (base + ".py", base + "/__init__.py") if f in files), None)
            if path is None:
                continue
            names = _defined_names(zf.read(path))
            if names is not None:
                out[key] = path if parts[cut] in names else ""
            break
    return out


# ---- fetch / extract / check -------------------------------------------------------------------------

def _pip_download(spec: str, dest: Path, extra: list[str]) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", spec, "-d", str(dest), *extra]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"pip download {spec} failed: {result.stderr.strip()[-300:]}")


def find_wheel(wheel_dir: Path, name: str) -> Path | None:
    p = wheel_dir / name
    return p if p.is_file() else None


def fetch(wheel_dir: Path) -> int:
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    status = 0
    for item in pinned["wheels"]:
        path = find_wheel(wheel_dir, item["wheel"])
        if path is None:
            extra = (["--only-binary=:all:", "--platform", item["platform"], "--python-version", "3.11"]
                     if item.get("platform") else [])
            try:
                _pip_download(f"{item['package']}=={item['version']}", wheel_dir, extra)
            except RuntimeError as exc:
                print(f"error: {exc}", file=sys.stderr)
                status = 2
                continue
            path = find_wheel(wheel_dir, item["wheel"])
        if path is None or sha256(path) != item["sha256"]:
            print(f"error: {item['wheel']}: missing or sha256 differs from PINNED.json", file=sys.stderr)
            status = 2
        else:
            print(f"ok {item['wheel']}")
    return status


def extract(wheel_dir: Path, only_npu: bool = False) -> int:
    wheels, derived = [], {}
    for path in sorted(wheel_dir.glob("torch-*.whl")):
        version = path.name.split("-")[1]
        out = INPUTS / f"torch-{version}.json"
        if not only_npu:
            write_json(out, extract_torch(path, version))
        platform = next((p for p in TORCH_PLATFORMS if p in path.name), None)
        wheels.append({"package": "torch", "version": version, "wheel": path.name, "sha256": sha256(path),
                       "platform": platform, "derived": [out.relative_to(HERE).as_posix()]})
    for path in sorted(wheel_dir.glob("torch_npu-*.whl")):
        release = path.name.split("-")[1]
        out = INPUTS / f"torch_npu-{release}.strings.json"
        write_json(out, extract_npu_strings(path, release))
        outs = [out.relative_to(HERE).as_posix()]
        reg = HERE / "wheel_data" / f"torch_npu-{release}.json"
        if reg.is_file():
            outs.append(reg.relative_to(HERE).as_posix())
        wheels.append({"package": "torch-npu", "version": release, "wheel": path.name, "sha256": sha256(path),
                       "platform": None, "derived": outs})
    for item in wheels:
        for rel in item["derived"]:
            derived[rel] = sha256(HERE / rel)
    if (INPUTS / "decompositions.json").is_file():   # written by measure_decompositions.py, kept
        derived["inputs/decompositions.json"] = sha256(INPUTS / "decompositions.json")
    pinned = {"schema": 1, "recipe": "python op_tables/inputs.py fetch --wheel-dir DIR && "
                                     "python op_tables/inputs.py extract --wheel-dir DIR",
              "torch_for_line": TORCH_FOR_LINE, "wheels": wheels, "derived_sha256": derived}
    if PINNED.is_file():   # sources recorded by extract-source (a git clone, not a wheel) are kept
        sources = json.loads(PINNED.read_text()).get("sources", [])
        for source in sources:
            for rel in source["derived"]:
                derived[rel] = sha256(HERE / rel)
        if sources:
            pinned["sources"] = sources
    write_json(PINNED, pinned)
    print(f"extracted {len(wheels)} wheels into {INPUTS.relative_to(HERE.parent)}")
    return 0


def extract_source(repo: Path | None) -> int:
    """Ascend/pytorch branches -> inputs/torch_npu-source.json; records the commits in PINNED.json."""
    sys.path.insert(0, str(HERE))
    import source_facts

    if repo is None or not (repo / "HEAD").exists() and not (repo / ".git").exists():
        print("extract-source needs --repo: a git clone of " + source_facts.REPO_URL, file=sys.stderr)
        return 2
    facts = source_facts.extract(repo)
    out = INPUTS / SOURCE_FACTS
    write_json(out, facts)
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    pinned["derived_sha256"][f"inputs/{SOURCE_FACTS}"] = sha256(out)
    pinned["sources"] = [{"repo": facts["repo"], "file": facts["file"], "derived": [f"inputs/{SOURCE_FACTS}"],
                          "commits": {line: f"{row['branch']}@{row['commit']}" for line, row in facts["by_line"].items()},
                          "recipe": "python op_tables/inputs.py extract-source --repo GITDIR"}]
    write_json(PINNED, pinned)
    print(f"{out.relative_to(HERE)}: {len(facts['by_line'])} lines")
    return 0


def check() -> list[str]:
    """Problems with the committed derived inputs (empty when they match PINNED.json)."""
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    problems = []
    for rel, digest in sorted(pinned["derived_sha256"].items()):
        path = HERE / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif sha256(path) != digest:
            problems.append(f"{rel}: sha256 differs from PINNED.json (re-run extract from the pinned wheels)")
    listed = set(pinned["derived_sha256"])
    for path in sorted(INPUTS.glob("*.json")):
        rel = path.relative_to(HERE).as_posix()
        if path != PINNED and rel not in listed:
            problems.append(f"{rel}: not recorded in PINNED.json")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "extract", "extract-source", "check"))
    parser.add_argument("--repo", type=Path, help="extract-source: a git clone of github.com/Ascend/pytorch")
    parser.add_argument("--wheel-dir", type=Path, default=Path("/tmp/npu-audit-wheels"))
    parser.add_argument("--only-npu", action="store_true", help="extract: keep the torch schemas, redo torch_npu")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        args.wheel_dir.mkdir(parents=True, exist_ok=True)
        return fetch(args.wheel_dir)
    if args.command == "extract":
        return extract(args.wheel_dir, args.only_npu)
    if args.command == "extract-source":
        return extract_source(args.repo)
    problems = check()
    for p in problems:
        print(p, file=sys.stderr)
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
