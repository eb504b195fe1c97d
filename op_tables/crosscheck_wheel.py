"""Cross-check the shipped aten table against torch_npu wheels (needs the network; not a unit test).

    python op_tables/crosscheck_wheel.py 2.5.1 2.7.1 [--wheel-dir /tmp/wheels] [--no-write]

For each release it downloads the wheel (`pip download --no-deps torch-npu==X`), reads
torch_npu/csrc/aten/npu_native_functions.yaml (the kernels torch_npu itself implements: views,
empty, copy_ ...) and npu_native_functions_by_codegen.yaml (every aten overload registered for the
NPU in that release), and:
  * writes op_tables/wheel_data/torch_npu-X.json: the extracted op names, the wheel's file name and
    sha256 (data only; the wheel itself is never committed). The builder reads these files to add
    torch_npu's own kernels, which op_plugin_functions.yaml does not list;
  * compares the release's registered overloads with what op_tables/aten.json says for its line,
    and prints both differences.
Exit status: 0 after a comparison (differences are reported, not fatal), 2 when a wheel cannot be
downloaded or read.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NATIVE = "torch_npu/csrc/aten/npu_native_functions.yaml"
CODEGEN = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"


def entry_name(item) -> str:
    """'- view' or '- func: copy_(...)' -> the overload key used by op_tables ('copy_', 'view')."""
    text = item["func"] if isinstance(item, dict) else str(item)
    return text.split("(", 1)[0].strip()


def ops_in(doc: dict, sections: tuple[str, ...]) -> list[str]:
    return sorted({entry_name(i) for s in sections for i in (doc.get(s) or [])})


def fetch_wheel(version: str, wheel_dir: Path) -> Path:
    pattern = f"torch_npu-{version}-*.whl"
    found = sorted(wheel_dir.glob(pattern))
    if not found:
        wheel_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", f"torch-npu=={version}", "-d", str(wheel_dir),
               "--quiet"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"pip download torch-npu=={version} failed: {result.stderr.strip()[-400:]}")
        found = sorted(wheel_dir.glob(pattern))
    if not found:
        raise RuntimeError(f"no wheel matching {pattern} in {wheel_dir}")
    return found[0]


def extract(version: str, wheel: Path) -> dict:
    import yaml

    with zipfile.ZipFile(wheel) as zf:
        native = yaml.safe_load(zf.read(NATIVE))
        codegen = yaml.safe_load(zf.read(CODEGEN))
    m = re.match(r"(\d+)\.(\d+)", version)
    return {
        "schema": 1,
        "release": version,
        "line": f"v{m.group(1)}.{m.group(2)}",
        "wheel": wheel.name,
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "core_ops": ops_in(native, ("supported", "symint", "autograd")),
        "registered_ops": ops_in(codegen, ("supported", "symint", "autograd", "quant")),
        "custom_ops": ops_in(codegen, ("custom",)),
        "source": f"{wheel.name}: {NATIVE} (core_ops), {CODEGEN} (registered_ops, custom_ops)",
    }


def compare(data: dict) -> tuple[list[str], list[str]]:
    """(aten overloads registered in the wheel but not listed by op-plugin for the line, overloads
    op-plugin lists for the line but the wheel does not register).  Kernels the table took from the
    wheels themselves ('npu kernel (torch_npu)') are left out, so the check stays one-sided."""
    sys.path.insert(0, str(HERE.parent))
    from auditor.coverage import Coverage
    from auditor.target import Target

    cov = Coverage.load(Target(data["line"], "a2"))
    ops = json.loads((HERE / "aten.json").read_text(encoding="utf-8"))["ops"]
    ours = {op for op in ops if cov.aten(op).via.startswith("npu kernel") and cov.aten(op).via != "npu kernel (torch_npu)"}
    theirs = {op for op in data["registered_ops"] if op in ops}  # npu_* entries are torch_npu custom ops
    return sorted(theirs - ours), sorted(ours - theirs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("versions", nargs="+", help="torch_npu releases, e.g. 2.5.1 2.7.1")
    parser.add_argument("--wheel-dir", default="/tmp/wheels", help="where wheels are downloaded (default /tmp/wheels)")
    parser.add_argument("--no-write", action="store_true", help="compare only; do not update op_tables/wheel_data/")
    args = parser.parse_args(argv)
    status = 0
    for version in args.versions:
        try:
            wheel = fetch_wheel(version, Path(args.wheel_dir))
            data = extract(version, wheel)
        except (RuntimeError, OSError, KeyError, zipfile.BadZipFile) as exc:
            print(f"torch_npu {version}: error: {exc}", file=sys.stderr)
            status = 2
            continue
        if not args.no_write:
            out = HERE / "wheel_data" / f"torch_npu-{version}.json"
            out.parent.mkdir(exist_ok=True)
            out.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
        only_wheel, only_table = compare(data)
        print(f"torch_npu {version} (line {data['line']}, {data['wheel']}): wheel registers "
              f"{len(data['registered_ops'])} aten overloads, {len(data['core_ops'])} in torch_npu core")
        print(f"  registered in the wheel, not listed by op-plugin for {data['line']}: {len(only_wheel)}")
        for op in only_wheel:
            print(f"    {op}")
        print(f"  listed by op-plugin for {data['line']}, not registered in the wheel: {len(only_table)}")
        for op in only_table:
            print(f"    {op}")
    return status


if __name__ == "__main__":
    sys.exit(main())
