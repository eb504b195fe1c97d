"""Inputs the rule generators read, and the pins that make them reproducible offline.

Originals (read only with --from-sources): the installed torch, a torch_npu wheel from the package registry
(read as data, never imported: it needs CANN), the Ascend snapshots in ../shared/ascend/, source archives and
git clones.  What a generator takes from them is a handful of facts (export lists, signatures, names); those
facts are pinned in rules/gen/inputs/<generator>.json with each original's name, version and sha256.  A plain
run reads only the pins, so deleting a generated rule file and rerunning its generator reproduces it byte for
byte offline (tests/test_rules_generators.py does exactly that for every generator).

    python rules/gen/<generator>.py                  # offline: from rules/gen/inputs/<generator>.json
    python rules/gen/<generator>.py --from-sources   # re-read the originals, re-pin, then write

The wheel is found with --wheel, in $NPU_AUDIT_TORCH_NPU_WHEEL, or downloaded once with
`pip download --no-deps torch-npu==VERSION` into rules/gen/.cache/ (not committed)."""
from __future__ import annotations

import ast
import hashlib
import json
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
INPUTS = GEN_DIR / "inputs"


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


def sha256_of(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _encode(value):
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted(_encode(v) for v in value)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise SourceError(f"a pinned fact has a non-string key: {sorted(map(repr, value))[:3]}")
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value):
    if isinstance(value, dict):
        if set(value) == {"__set__"}:
            return set(_decode(v) for v in value["__set__"])
        if set(value) == {"__tuple__"}:
            return tuple(_decode(v) for v in value["__tuple__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


class Pins:
    """The facts one generator reads from its originals: computed and recorded with record=True
    (--from-sources), else read back from rules/gen/inputs/<generator>.json without touching any original."""

    def __init__(self, generator: str, record: bool = False) -> None:
        self.generator, self.record = generator, record
        self.path = INPUTS / f"{generator}.json"
        if record:
            self.data: dict = {"generator": f"rules/gen/{generator}.py", "originals": {}, "facts": {},
                               "recipe": f"python rules/gen/{generator}.py --from-sources"}
        elif not self.path.is_file():
            raise SourceError(f"{self.path.relative_to(REPO)} is missing: run python rules/gen/{generator}.py "
                              "--from-sources once with the originals at hand")
        else:
            self.data = json.loads(self.path.read_text(encoding="utf-8"))

    def original(self, key: str, name: str, version: str, path: Path | None = None, **extra: str) -> dict:
        """Record (or read back) one original: its name, version and, for a file, its sha256."""
        if self.record:
            row = {"name": name, "version": version, **extra}
            if path is not None and path.is_file():
                row["sha256"] = sha256_of(path)
            self.data["originals"][key] = row
        return self.data["originals"][key]

    def fact(self, key: str, compute):
        if self.record:
            value = compute()
            self.data["facts"][key] = _encode(value)
            return value
        if key not in self.data["facts"]:
            raise SourceError(f"{self.path.relative_to(REPO)} has no fact {key!r}: rerun with --from-sources")
        return _decode(self.data["facts"][key])

    def save(self) -> None:
        if self.record:
            INPUTS.mkdir(exist_ok=True)
            self.path.write_text(json.dumps(self.data, ensure_ascii=False, indent=1) + "\n",
                                 encoding="utf-8")


def torch_version(pins: Pins) -> str:
    """The installed torch's version when recording, else the pinned one."""
    if pins.record:
        import torch

        pins.original("torch", "torch", torch.__version__)
    return pins.data["originals"]["torch"]["version"]


def npu_wheel(pins: Pins, path: str | None) -> "Wheel | None":
    """The torch_npu wheel when recording (recorded as an original), else None; its name and version are
    pinned (`pins.data['originals']['torch_npu']`)."""
    if not pins.record:
        return None
    wheel = Wheel(torch_npu_wheel(path))
    pins.original("torch_npu", wheel.path.name, wheel.version, wheel.path)
    return wheel


def yaml_text(header: str, doc: dict) -> str:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return header + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)


def write_yaml(path: Path, header: str, doc: dict) -> None:
    path.write_text(yaml_text(header, doc), encoding="utf-8")


def generator_args(description: str, wheel: bool = True):
    """The common command line: --from-sources (re-read the originals and re-pin) and --wheel."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--from-sources", action="store_true",
                    help="re-read the originals (torch, wheel, archives, snapshots) and rewrite rules/gen/inputs/")
    if wheel:
        ap.add_argument("--wheel", help="torch_npu wheel for --from-sources (default: $NPU_AUDIT_TORCH_NPU_WHEEL "
                                        "or download torch-npu into rules/gen/.cache)")
    return ap


def write_outputs(texts: dict, pins: "Pins | None" = None) -> None:
    """Write each generated rule file, say so, and save the pins the generator read (None: it has none)."""
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    if pins is not None:
        pins.save()


def run_main(main) -> None:
    try:
        main()
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
