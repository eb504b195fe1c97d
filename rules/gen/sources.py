"""Inputs the rule generators read: the installed torch, a torch_npu wheel from the package registry (read as
data, never imported: it needs CANN), and the Ascend snapshots in ../shared/ascend/.

The wheel is found with --wheel, in $NPU_AUDIT_TORCH_NPU_WHEEL, or downloaded once with
`pip download --no-deps torch-npu==VERSION` into rules/gen/.cache/ (not committed)."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

GEN_DIR = Path(__file__).resolve().parent
RULES_DIR = GEN_DIR.parent
REPO = RULES_DIR.parent
CACHE = GEN_DIR / ".cache"
TORCH_NPU_VERSION = "2.14.0"       # the newest torch-npu on the registry when the tables were generated
ASCEND_SHARED = REPO.parent / "shared" / "ascend"


class SourceError(RuntimeError):
    """A source the generator needs is missing or unreadable; printed as one line, exit status 2."""


def torch_npu_wheel(path: str | None = None, version: str = TORCH_NPU_VERSION) -> Path:
    path = path or os.environ.get("NPU_AUDIT_TORCH_NPU_WHEEL")
    if path:
        p = Path(path)
        if not p.is_file():
            raise SourceError(f"torch_npu wheel {p} does not exist")
        return p
    found = sorted(CACHE.glob(f"torch_npu-{version}-*.whl"))
    if found:
        return found[-1]
    CACHE.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "-d", str(CACHE),
           f"torch-npu=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(CACHE.glob(f"torch_npu-{version}-*.whl"))
    if proc.returncode != 0 or not found:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])
        raise SourceError(f"cannot download torch-npu=={version}: {tail} (pass --wheel PATH)")
    return found[-1]


class Wheel:
    """Text files of a wheel, read without unpacking it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise SourceError(f"{path}: not a readable wheel ({exc})") from exc
        self.names = set(self._zip.namelist())
        m = re.match(r"torch_npu-([^-]+)-", path.name)
        self.version = m.group(1) if m else "?"

    def text(self, member: str) -> str:
        if member not in self.names:
            raise SourceError(f"{self.path.name} has no {member}")
        return self._zip.read(member).decode("utf-8", errors="replace")

    def has(self, member: str) -> bool:
        return member in self.names

    def texts(self, suffixes: tuple[str, ...]):
        for name in sorted(self.names):
            if name.endswith(suffixes):
                yield name, self._zip.read(name).decode("utf-8", errors="replace")


def module_all(source: str, where: str) -> list[str]:
    """The literal `__all__` list of a module's source (read with ast, never imported)."""
    names: list[str] = []
    for node in ast.parse(source, filename=where).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            if isinstance(node.value, (ast.List, ast.Tuple)):
                names += [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names


def write_yaml(path: Path, header: str, doc: dict) -> None:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)
    path.write_text(header + body, encoding="utf-8")


def run_main(main) -> None:
    try:
        main()
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
