"""CUDA-only Python packages, decided from PyPI's published data (issue 14, session 35, helper g1).

Writes op_tables/cuda_packages.json, which rules/third_party_cuda_only_packages.yaml (NPU462) reads: for every
candidate import name, the PyPI distribution that provides it and the evidence that it needs CUDA.

    python op_tables/cuda_packages.py collect ROOT... [--mirrors LIST]   # candidates -> op_tables/inputs/
    python op_tables/cuda_packages.py resolve [--workers 16]              # PyPI -> op_tables/cuda_packages.json

`collect` reads the top-level imports of every Python file under each ROOT's code bases (one folder per code base)
and of the bare git snapshots named in LIST (`git grep` of HEAD), minus the standard library and each code base's
own modules (its folders and .py files), plus nothing else: the names real code imports. `resolve` looks each name
up on PyPI's JSON API (https://pypi.org/pypi/NAME/json) under its usual spellings (`a_b`, `a-b`, `pyNAME`,
`NAME-python`, `python-NAME`, `pytorch-NAME`, `NAME-cu12`, `NAME-cu11`) and keeps a distribution only when its artifacts provide the import
name: a wheel's top_level.txt or file list (the zip's central directory, read with HTTP range requests), or an sdist's
package folders. Then it decides, with the evidence recorded per row:

- `cuda-only`: the package cannot be installed or imported without CUDA: PyPI publishes it as per-CUDA-version
  builds only (`cudf-cu12`: no distribution of the import name itself); an unconditional Requires-Dist (no
  environment marker, no extra) on NVIDIA's CUDA distributions (`nvidia-*-cu*`, `cupy-cuda*`, `pycuda`, `tensorrt`,
  `cuda-python`); every binary wheel carries CUDA device code or CUDA runtime libraries (`.cubin` / `.fatbin` /
  `.ptx`, `libcudart`, `libcublas`, ..., or `+cuXXX` tags) and none is for macOS or CPU; an sdist whose setup.py
  builds a CUDAExtension, calls nvcc or requires CUDA_HOME with no C++-only build beside it; or a summary that says
  the package is bindings of an NVIDIA CUDA library (NVRTC, NVML, cuDNN, cuBLAS, TensorRT, NCCL, the driver API).
- `cuda-ops`: an sdist whose build compiles CUDA ops beside a C++-only build (a CppExtension next to the
  CUDAExtension, a `WITH_CUDA` / CMake `option(... CUDA ...)` switch): the package imports without CUDA, its ops
  have no NPU path (they dispatch on CPU or CUDA tensors).
- `cuda-optional`: CUDA with a CPU path beside it (a CPU or macOS wheel next to CUDA-carrying ones, CUDA
  dependencies under an extra or a platform marker, the `Environment :: GPU :: NVIDIA CUDA` classifier): recorded,
  never reported.
- `ascend`: the artifacts name an Ascend path (torch_npu, `npu`, CANN): excluded.
- `not-cuda`: the rest.

The rule that reads the table (rules.py `_with_table_rows`) leaves a package any hand-written rule names to that rule.
Network: pypi.org and files.pythonhosted.org; the table is
committed so that tests and CI never need the network. Re-running `resolve` refreshes every row (the latest release
of each distribution).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path


HERE = Path(__file__).resolve().parent
# one `name count` line per candidate (plain text: op_tables/inputs/*.json are the coverage build's pinned inputs)
CANDIDATES = HERE / "inputs" / "cuda_package_candidates.txt"
TABLE = HERE / "cuda_packages.json"
PYPI = "https://pypi.org/pypi/{}/json"
USER_AGENT = "npu-audit op_tables/cuda_packages.py (https://github.com/npu-audit)"
# names whose tokens say CUDA (looked up whatever --min-bases says)
CUDA_TOKENS = re.compile(r"cuda|cudnn|cublas|nccl|nvrtc|nvml|tensorrt|cutlass|cupy|pycuda", re.I)
# NVIDIA's CUDA distributions: a Requires-Dist on one of these with no marker means no install without CUDA
# (RAPIDS' and NVIDIA's per-CUDA-version builds end in -cuNN)
CUDA_REQUIREMENT = re.compile(r"^([a-z0-9-]+[-_]cu\d+|nvidia-cuda-[a-z0-9-]+|cupy-cuda[0-9a-z]*|pycuda|tensorrt"
                              r"(-libs)?|cuda-python|cuda-bindings|cuda-core|numba-cuda)$", re.I)
# files in a wheel that are CUDA device code or the CUDA runtime libraries
CUDA_FILE = re.compile(r"(\.cubin|\.fatbin|\.ptx)$|(^|/)lib(cudart|cublas|cublasLt|cudnn|nvrtc|nccl|cufft|curand"
                       r"|cusparse|cusolver|nvinfer|nvToolsExt)[^/]*\.(so|dll)", re.I)
CPU_FILE = re.compile(r"(^|/)[^/]*(_cpu|cpu_)[^/]*\.(so|pyd|dll)$", re.I)
ASCEND = re.compile(r"torch_npu|\bascend\b|\bcann\b|npu_", re.I)
CUDA_BINDINGS = re.compile(r"\b(bindings?|wrappers?|interface|python api)\b[^.]*\b(nvrtc|nvml|cudnn|cublas|tensorrt"
                           r"|nccl|nvidia management library|cuda driver|cuda runtime|cuda toolkit|nvidia cuda|cuda)\b"
                           r"|\b(nvrtc|nvml|cudnn|cublas|tensorrt|nccl|cuda)\b[^.]*\b(bindings?|wrappers?)\b", re.I)
# an Ascend build beside the CUDA one: torch_npu's extension in the build files, an `npu` source folder
NPU_BUILD = re.compile(r"torch_npu|NpuExtension|\bWITH_NPU\b|\bMMCV_WITH_NPU\b|ASCEND_HOME")
NPU_FILE = re.compile(r"(^|/)(npu|ascend)/[^/]+\.(py|cpp|h)$", re.I)
GPU_CLASSIFIER = "Environment :: GPU :: NVIDIA CUDA"
SDIST_MAX = 25_000_000


class Offline(RuntimeError):
    """PyPI cannot be reached."""


# downloaded answers, by address and range, so that a re-run after a change of the decisions reads no artifact twice
# (`--refresh` empties it: PyPI's latest releases are read again)
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "npu-audit" / "pypi"


def _get(url: str, headers: dict | None = None, timeout: float = 30, fresh: bool = False) -> bytes | None:
    key = CACHE / hashlib.sha256(f"{url} {headers}".encode()).hexdigest()
    if key.exists() and not fresh:
        data = key.read_bytes()
        return None if data == b"404" else data
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read()
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
        data = b"404"
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise Offline(f"{url}: {exc}") from None
    CACHE.mkdir(parents=True, exist_ok=True)
    key.write_bytes(data)
    return None if data == b"404" else data


class _RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, so zipfile reads a wheel's central directory without the wheel."""

    def __init__(self, url: str, size: int):
        self.url, self.size, self.pos, self.blocks = url, size, 0, {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        out = bytearray()
        while self.pos < end:
            block = self.pos // 65536
            if block not in self.blocks:
                lo = block * 65536
                data = _get(self.url, {"Range": f"bytes={lo}-{min(self.size, lo + 65536) - 1}"}) or b""
                self.blocks[block] = data
            data = self.blocks[block]
            chunk = data[self.pos - block * 65536:end - block * 65536]
            if not chunk:
                break
            out += chunk
            self.pos += len(chunk)
        return bytes(out)


def _wheel_files(url: str, size: int) -> tuple[list[str], str]:
    """(the wheel's file names, its top_level.txt or '')."""
    with zipfile.ZipFile(_RangeFile(url, size)) as zf:
        names = zf.namelist()
        top = next((n for n in names if n.endswith(".dist-info/top_level.txt")), None)
        return names, (zf.read(top).decode("utf-8", "replace") if top else "")


def _sdist_files(url: str, size: int) -> tuple[list[str], dict[str, str]]:
    """(the sdist's file names without the leading folder, {build file: text}) for setup.py / pyproject / CMake."""
    if size > SDIST_MAX:
        return [], {}
    data = _get(url, timeout=120) or b""
    names: list[str] = []
    texts: dict[str, str] = {}
    wanted = ("setup.py", "pyproject.toml", "CMakeLists.txt", "setup.cfg")
    if url.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for n in zf.namelist():
                rel = n.split("/", 1)[1] if "/" in n else n
                names.append(rel)
                if rel in wanted:
                    texts[rel] = zf.read(n).decode("utf-8", "replace")
    else:
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            for m in tf.getmembers():
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                names.append(rel)
                if rel in wanted and m.isfile():
                    fh = tf.extractfile(m)
                    texts[rel] = fh.read().decode("utf-8", "replace") if fh else ""
    return names, texts


def _import_names(files: list[str], top_level: str = "") -> set[str]:
    """The top-level import names a distribution's files provide."""
    if top_level.strip():
        return {line.strip().split("/")[0] for line in top_level.splitlines() if line.strip()}
    out = set()
    for f in files:
        parts = [p for p in f.split("/") if p]
        if parts and parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        if not parts or parts[0].endswith((".dist-info", ".data", ".egg-info")):
            continue
        if len(parts) > 1 and f.endswith((".py", ".so", ".pyd")):
            out.add(parts[0])
        elif len(parts) == 1 and parts[0].endswith((".py", ".so", ".pyd")):
            out.add(parts[0].split(".")[0])
    return {n for n in out if n.isidentifier() and n not in ("setup", "tests", "test", "docs", "examples")}


def _spellings(name: str) -> list[str]:
    dashed = name.replace("_", "-")
    # (NVIDIA's RAPIDS libraries publish per-CUDA builds only: `import cudf` is cudf-cu12)
    out = [name, dashed, f"py{name}", f"{dashed}-python", f"python-{dashed}", f"pytorch-{dashed}", f"{dashed}-cu12",
           f"{dashed}-cu11"]
    return list(dict.fromkeys(out))


def _unconditional_cuda_requirements(requires: list[str] | None) -> list[str]:
    out = []
    for req in requires or ():
        if ";" in req:
            continue          # an extra or a platform marker: CUDA is optional there
        dist = re.split(r"[\s\[<>=!~(;]", req.strip(), maxsplit=1)[0]
        if CUDA_REQUIREMENT.match(dist):
            out.append(dist)
    return out


def _setup_evidence(texts: dict[str, str]) -> tuple[str | None, str]:
    """('cuda-only' | 'cuda-optional' | None, the evidence) from an sdist's build files."""
    build = "\n".join(t for n, t in texts.items() if n in ("setup.py", "CMakeLists.txt", "pyproject.toml"))
    cuda = re.search(r"\bCUDAExtension\b|\bnvcc\b|\bCUDA_HOME\b|enable_language\s*\(\s*CUDA|LANGUAGES[^)]*\bCUDA\b"
                     r"|find_package\s*\(\s*CUDA", build)
    if not cuda:
        return None, ""
    what = cuda.group(0)
    # a C++-only build made beside or instead of the CUDA one (a check that only raises without CUDA is no CPU path)
    # (and a CUDA build made only when CUDA is there: `if torch.cuda.is_available():`, not `if not ...: raise`; a switch
    # `if os.getenv("BUILD_CUDA_EXTENSIONS", "0") == "1":`, a CMake `if(... CUDA / GPU ...)`)
    cpu = re.search(r"\bCppExtension\s*\(|=\s*CppExtension\b|FORCE_CPU|CPU_ONLY|\bWITH_CUDA\b|_BUILD_CUDA\b"
                    r"|BUILD_ALLOW_ERRORS|option\s*\(\s*\w*CUDA|\bif\s*\([^)\n]*(CUDA|GPU)"
                    r"|\bif\b(?!\s+not\b)[^\n:]*(cuda\.is_available\(\)|os\.(getenv|environ)[^\n:]*(CUDA|GPU))", build)
    if cpu:
        line = build[build.rfind("\n", 0, cpu.start()) + 1:build.find("\n", cpu.end()) % (len(build) + 1)].strip()
        return "cuda-ops", f"its build compiles CUDA ops ({what}) beside a CPU build or under a switch (`{line[:90]}`)"
    return "cuda-only", f"its build needs CUDA ({what} in setup.py / CMakeLists.txt, no CPU build beside it)"


_CUDA_EXTENSION_NAME = re.compile(r"\bCUDAExtension\s*\(\s*(?:name\s*=\s*)?[\"']([\w.]+)[\"']")
# mmcv-style helpers: `make_cuda_ext(name='deform_conv_ext', module='basicsr.ops.dcn', ...)`
_CUDA_EXT_HELPER = re.compile(r"\bmake_cuda_ext\s*\(\s*(?:name\s*=\s*)?[\"'](\w+)[\"']\s*,\s*(?:module\s*=\s*)?"
                              r"[\"']([\w.]+)[\"']")


def _cuda_op_modules(texts: dict[str, str]) -> list[str]:
    """The modules that hold a build's CUDA extensions (the folder of `pkg.ops.x_cuda`, `pkg.ops`): they import the
    compiled ops; the rest of the package does not."""
    build = texts.get("setup.py", "")
    names = set(_CUDA_EXTENSION_NAME.findall(build)) | {f"{module}.{name}" for name, module in
                                                        _CUDA_EXT_HELPER.findall(build)}
    # the folder of the extension, unless that is the top-level package itself (`sam2._C`, `fairscale.fused_adam_cuda`:
    # the compiled module alone)
    return sorted({name.rsplit(".", 1)[0] if name.count(".") > 1 else name for name in names if "." in name})


def _resolve_one(name: str) -> dict:
    """The row of one import name: its distribution (or why none), the verdict and the evidence."""
    tried = []
    for dist in _spellings(name):
        raw = _get(PYPI.format(dist))
        tried.append(dist)
        if raw is None:
            continue
        meta = json.loads(raw)
        info, urls = meta["info"], meta.get("urls") or []
        for u in urls:          # a mirror of the JSON API may list artifacts relative to the JSON's address
            u["url"] = urllib.parse.urljoin(PYPI.format(dist), u["url"])
        wheels = [u for u in urls if u["packagetype"] == "bdist_wheel"]
        sdists = [u for u in urls if u["packagetype"] == "sdist"]
        files: list[str] = []
        top = ""
        texts: dict[str, str] = {}
        try:
            pick = next((w for w in wheels if "manylinux" in w["filename"] and "x86_64" in w["filename"]),
                        wheels[0] if wheels else None)
            if pick:
                files, top = _wheel_files(pick["url"], pick["size"])
            if sdists and (not pick or not _import_names(files, top) or name not in _import_names(files, top)):
                sfiles, texts = _sdist_files(sdists[0]["url"], sdists[0]["size"])
                files = files or sfiles
            elif sdists and sdists[0]["size"] <= SDIST_MAX and pick and "none-any" not in pick["filename"]:
                _, texts = _sdist_files(sdists[0]["url"], sdists[0]["size"])
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError) as exc:
            return {"import": name, "dist": info["name"], "verdict": "unresolved", "evidence": f"artifact unreadable: {exc}"}
        names = _import_names(files, top)
        if name not in names:
            continue          # this distribution does not provide the import name: try the next spelling
        return {"import": name, "dist": info["name"], "version": info.get("version"),
                **_verdict(info, wheels, files, texts)}
    return {"import": name, "dist": None, "verdict": "unresolved", "evidence": f"no PyPI distribution of {tried} "
            "provides it"}


def _verdict(info: dict, wheels: list[dict], files: list[str], texts: dict[str, str]) -> dict:
    summary = (info.get("summary") or "").strip()
    classifiers = info.get("classifiers") or []
    project = f"pypi.org/project/{info['name']}"
    ascend = ASCEND.search(summary) or next((m for t in texts.values() if (m := NPU_BUILD.search(t))), None) or \
        next((m for f in files if (m := NPU_FILE.search(f))), None)
    if ascend:
        return {"verdict": "ascend", "evidence": f"its artifacts name an Ascend path ({ascend.group(0)}; {project})"}
    if re.search(r"[-_]cu\d+$", info["name"]):
        return {"verdict": "cuda-only", "evidence": f"PyPI publishes it as per-CUDA-version builds only ({project})"}
    reqs = _unconditional_cuda_requirements(info.get("requires_dist"))
    if reqs:
        return {"verdict": "cuda-only", "evidence": f"it requires {', '.join(sorted(reqs))} with no marker ({project})"}
    binary = [w for w in wheels if not w["filename"].endswith("-none-any.whl")]
    cuda_files = [f for f in files if CUDA_FILE.search(f)]
    if binary and cuda_files and not any("macosx" in w["filename"] for w in binary) \
            and not any(CPU_FILE.search(f) for f in files):
        return {"verdict": "cuda-only", "evidence": f"its wheels carry CUDA code ({cuda_files[0].rsplit('/', 1)[-1]}) "
                f"and none is for macOS or CPU ({project})"}
    if binary and all(re.search(r"\+cu\d+", w["filename"]) for w in binary):
        return {"verdict": "cuda-only", "evidence": f"every wheel is a +cuXXX build ({project})"}
    if not binary and texts:
        verdict, why = _setup_evidence(texts)
        if verdict == "cuda-ops":
            # only the modules that hold the CUDA ops need CUDA (fast_transformers.causal_product, basicsr.ops.dcn)
            return {"verdict": verdict, "evidence": f"{why} ({project})", "modules": _cuda_op_modules(texts)}
        if verdict:
            return {"verdict": verdict, "evidence": f"{why} ({project})"}
    if CUDA_BINDINGS.search(summary):
        return {"verdict": "cuda-only", "evidence": f"PyPI's summary says it is NVIDIA CUDA bindings: \"{summary}\" "
                f"({project})"}
    if cuda_files or GPU_CLASSIFIER in classifiers or any(";" in r and CUDA_REQUIREMENT.match(
            re.split(r"[\s\[<>=!~(;]", r.strip(), maxsplit=1)[0]) for r in info.get("requires_dist") or ()):
        return {"verdict": "cuda-optional", "evidence": f"CUDA code or dependencies beside a CPU path ({project})"}
    return {"verdict": "not-cuda", "evidence": project}


def collect(roots: list[str], mirrors: str | None) -> dict[str, int]:
    """{third-party top-level import name: how many code bases import it}."""
    imp = re.compile(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import\b|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]"
                     r"[\w.]*)*))", re.M)
    std = set(sys.stdlib_module_names) | {"__future__"}

    def tops(text: str) -> set[str]:
        out = set()
        for m in imp.finditer(text):
            out.update([m.group(1)] if m.group(1) else (p.strip().split(".")[0].split()[0]
                                                       for p in m.group(2).split(",")))
        return out

    bases: dict[str, set[str]] = {}

    def add(base: str, own: set[str], imports: set[str]) -> None:
        for name in imports - own - std:
            bases.setdefault(name, set()).add(base)

    for root in roots:
        for entry in sorted(Path(root).iterdir()):
            if not entry.is_dir() or entry.name.startswith((".", "_")):
                continue
            own: set[str] = set()
            imports: set[str] = set()
            for dirpath, dirnames, filenames in os.walk(entry):
                own.update(dirnames)
                for fn in filenames:
                    if fn.endswith(".py") and os.path.isfile(os.path.join(dirpath, fn)):   # not a dangling link
                        own.add(fn[:-3])
                        imports |= tops(Path(dirpath, fn).read_text(encoding="utf-8", errors="replace"))
            add(re.sub(r"-[0-9a-f]{12}$", "", entry.name), own, imports)
    for snapshot in (Path(mirrors).read_text().split() if mirrors else ()):
        git = Path("/work/.mirror", snapshot, "repo") if not Path(snapshot).is_dir() else Path(snapshot)
        listing = subprocess.run(["git", "-C", str(git), "ls-tree", "-r", "--name-only", "HEAD"],
                                 capture_output=True, text=True).stdout.splitlines()
        own = {p for f in listing for p in f.split("/")[:-1]} | {f.rsplit("/", 1)[-1][:-3] for f in listing
                                                                 if f.endswith(".py")}
        text = subprocess.run(["git", "-C", str(git), "grep", "-h", "-E", r"^\s*(from|import) [A-Za-z_]", "HEAD",
                               "--", "*.py"], capture_output=True, text=True).stdout
        add(snapshot, own, tops(text))
    return {name: len(b) for name, b in sorted(bases.items())}


def resolve(candidates: dict[str, int], workers: int, min_bases: int = 1) -> dict:
    """The table: one row per candidate import name."""
    _get(PYPI.format("pip"), fresh=True)          # fail early and clearly when offline
    names = [n for n, count in candidates.items() if count >= min_bases or CUDA_TOKENS.search(n)]
    rows: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for i, row in enumerate(pool.map(_resolve_one_safely, names), 1):
            if i % 100 == 0:
                print(f"{i}/{len(names)}", file=sys.stderr, flush=True)
            rows[row["import"]] = row
    counts: dict[str, int] = {}
    for row in rows.values():
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    return {"source": "PyPI JSON API (https://pypi.org/pypi/NAME/json) and the artifacts it lists; generated by "
                      "`python op_tables/cuda_packages.py resolve`",
            "candidates": len(candidates), "looked_up": len(names), "counts": dict(sorted(counts.items())),
            "packages": dict(sorted(rows.items()))}


def _resolve_one_safely(name: str) -> dict:
    try:
        return _resolve_one(name)
    except Offline:
        raise
    except Exception as exc:          # one odd artifact must not stop the table
        return {"import": name, "dist": None, "verdict": "unresolved", "evidence": f"{type(exc).__name__}: {exc}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    col = sub.add_parser("collect", help="write the candidate import names of code bases")
    col.add_argument("roots", nargs="*", help="folders of code bases (one sub-folder each)")
    col.add_argument("--mirrors", help="a file naming bare git snapshots (owner+name under /work/.mirror, or paths)")
    res = sub.add_parser("resolve", help="look the candidates up on PyPI and write the table")
    res.add_argument("--workers", type=int, default=16)
    res.add_argument("--min-bases", type=int, default=1, help="look up names imported by at least this many code "
                     "bases (names whose tokens say CUDA always)")
    res.add_argument("--refresh", action="store_true", help=f"empty the download cache ({CACHE}) first")
    args = parser.parse_args(argv)
    if args.cmd == "collect":
        CANDIDATES.write_text("".join(f"{name} {count}\n" for name, count in collect(args.roots, args.mirrors).items()))
        print(f"wrote {CANDIDATES}")
        return 0
    if args.refresh:
        shutil.rmtree(CACHE, ignore_errors=True)
    try:
        candidates = {name: int(count) for name, count in (line.split() for line in CANDIDATES.read_text().splitlines())}
        table = resolve(candidates, args.workers, args.min_bases)
    except Offline as exc:
        print(f"error: PyPI is not reachable ({exc}); the committed {TABLE.name} stays as it is", file=sys.stderr)
        return 2
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {TABLE}: {table['counts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
