"""Dependency pins: requirements files, pyproject.toml and conda environment files, read with `packaging`
(PEP 508 specifiers and markers), `tomllib` and PyYAML. Each requirement becomes the symbol of a
`requirement` matcher: its normalised distribution name, `torch+cu121` for a CUDA build of torch (local
version tag), `index:URL` for an index or find-links URL."""
from __future__ import annotations

import re
from dataclasses import replace
import tomllib
from urllib.parse import unquote
from typing import TYPE_CHECKING, Iterator

import yaml
from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from auditor.project.hits import Collector, decode_text, matchers, normalize_dist
from auditor.project.local_builds import record_local_build
from auditor.project.makefile import keep_call
from auditor.backend_words import TORCH_CUDA_CONDA, TORCH_CUDA_WHEEL, backends_in_text
from auditor.findings import FileError, FileResult, Finding, as_info
from auditor.rules import Rule

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

_OPTION_RE = re.compile(r"^(-i|--index-url|--extra-index-url|-f|--find-links)(?:\s+|=)(\S+)")
_INLINE_INDEX_RE = re.compile(r"\s(-i|--index-url|--extra-index-url|-f|--find-links)(?:\s+|=)(\S+)")
# `+cu121`, and the `+cudaNN` local versions of jaxlib (`0.3.25+cuda11.cudnn805`) and k2-fsa (`+cuda12.1.torch2.4.1`);
# t35a: after the torch build it was made for (NATTEN's `0.20.1+torch270cu128`, `+pt21cu121`), as wheel_symbols reads
_CUDA_TAG_RE = re.compile(r"\+(?:[a-z]+[\d.]*)?(cu\d+|cuda\d+)")
# PyTorch's own wheel indexes name the CUDA build in the path: .../whl/cu121
# (and find-links pages named for one: https://data.pyg.org/whl/torch-2.1.0+cu121.html)
# (the CUDA part may be a variable: `.../whl/cu${TORCH_CUDA_VERSION}`, also in a page's name: PyG's
# `.../whl/torch-1.7.0+$CUDA.html` with `CUDA=cu101`, tp51c)
# or a variable named for it: `.../whl/${PYTORCH_CUDA_VERSION}`; find-links pages of CUDA builds: `k2/cuda.html`,
# PyTorch's `torch_stable.html`, pages under a cuXXX folder: `detectron2/wheels/cu110/torch1.7/index.html`)
_CUDA_INDEX_RE = re.compile(r"/whl/(?:nightly/)?(cu(?:\d+|\$\{?\w+\}?)|\$\{?\w*CUDA\w*\}?)(?![\w}])|/(cu1\d\d)/?$"
                            r"|[+_-](cu(?:da)?1\d\d|cu\$\{?\w+\}?|\$\{?\w*(?:CUDA|cuda)\w*\}?)\.html$|/(cuda)[\w.-]*\.html$"
                            r"|/whl/(?:nightly/)?torch_(?:stable|nightly)\.html$|/(cu1\d\d)/")


# PyTorch's find-links pages that list every build of every version (CUDA, ROCm and CPU wheels side by side): what
# they install is the local version the pins ask for (`torch==1.6.0+cpu -f .../torch_stable.html` is the CPU build)
_ALL_BUILDS_PAGE_RE = re.compile(r"/whl/(?:nightly/)?torch_(?:stable|nightly)\.html$")
_TORCH_FAMILY_RE = re.compile(r"^(torch|torchvision|torchaudio)(?=[\s=<>~!\[;@]|$)", re.I)


def cpu_builds_only(requirements: list[str]) -> bool:
    """True when the torch / torchvision / torchaudio requirements among these all pin the CPU build (`+cpu`):
    an all-builds page then serves CPU wheels (the port's own starting point), not CUDA ones."""
    torch_family = [r for r in requirements if _TORCH_FAMILY_RE.match(r.strip().strip("\"'"))]
    return bool(torch_family) and all(re.search(r"(?:\+|%2B)cpu\b", r, re.I) for r in torch_family)


# NVIDIA's own package index: the RAPIDS `*-cu11` wheels, nvidia-* libraries, TensorRT
_NVIDIA_INDEX_RE = re.compile(r"://pypi\.(?:ngc\.)?nvidia\.com(?:[/:]|$)")
_VARIABLE_VERSION_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==|>=|<=|~=|!=|<|>)\s*[$@{]")
# (and a local version under another operator, which PEP 440 rejects but older pips read: MambaVision's
# `torch>=2.6.0+cu124`, still a CUDA build; t15p, tuned on project test13)
_LOOSE_VERSION_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:==|>=|<=|~=|>|<)\s*[\w.+!-]+$")
# builds of torch for other accelerators (ROCm, Intel XPU): an extra for that hardware, not the one a port changes
# the CPU wheel index (`pip install torch --index-url https://download.pytorch.org/whl/cpu`): a CPU-only torch, as an
# sdist or docs job installs it (and as torch_npu pairs with it); not a CUDA build to port (t15n)
_CPU_INDEX_RE = re.compile(r"^(?:https?://)?download\.pytorch\.org/whl/(?:nightly/|test/)?cpu/?$", re.I)
_OTHER_ACCELERATOR_RE = re.compile(r"(?:\+|%2B)(?:rocm|xpu)|/whl/(?:nightly/)?(?:rocm|xpu)|repo\.radeon\.com", re.I)
# an extra named after the package itself selects its own features, not a separate build (`transformers[torch]`)
_NOT_A_BUILD_EXTRA = {"torch", "pytorch"}


def cuda_index(url: str) -> bool:
    """An index or find-links URL that serves CUDA builds (PyTorch's cuXXX indexes, NVIDIA's own index)."""
    return bool(_CUDA_INDEX_RE.search(url) or _NVIDIA_INDEX_RE.search(url))


def requirement_symbols(text: str, req: Requirement | None) -> Iterator[tuple[str, str]]:
    """(symbol, the text that names it) for one requirement string (`req`: its read_requirement), most specific first:
    `torch+cu121` for a CUDA build, then the distribution; nothing for what PEP 508 rejects."""
    if req is None:
        # `torch==$TORCH_VERSION`, `f"torch=={version}"`: the version comes from a variable, the name is still read
        named = _VARIABLE_VERSION_RE.match(text) or _LOOSE_VERSION_RE.match(text)
        if named:
            # `mmcv-full==latest+torch1.6.0+cu101` (OpenMMLab's find-links pages): not PEP 440, still a CUDA build
            tag = _CUDA_TAG_RE.search(text[named.end(1):])
            if tag:
                yield f"{normalize_dist(named.group(1))}+{tag.group(1)}", text
            yield normalize_dist(named.group(1)), named.group(1)
        return
    name = normalize_dist(req.name)
    tag = _CUDA_TAG_RE.search(str(req.specifier)) or (_CUDA_INDEX_RE.search(req.url) if req.url else None)
    if tag:
        yield f"{name}+{next((g for g in tag.groups() if g), 'cu')}", text
    elif req.url and req.url.split("#", 1)[0].endswith(".whl"):
        # `exllama @ https://.../exllama-0.0.18+cu121-cp310-...whl`, `stable_fast @ .../stable_fast-0.0.15.post1+
        # torch211cu121-...whl`: the wheel's local version names the CUDA build (t15v, tuned on project test16)
        built = wheel_symbols(unquote(req.url.split("#", 1)[0]))
        if len(built) > 1:      # [name+cuXXX, name, cuda-build:name]
            yield from ((symbol, req.name) for symbol in built)
            return
    yield name, req.name
    if tag:
        yield f"cuda-build:{name}", req.name
    if req.url and "://" in req.url:
        from auditor.project.shell import url_part_symbol, url_symbol

        # `dropout_layer_norm @ git+https://github.com/Dao-AILab/flash-attention.git#subdirectory=csrc/layer_norm`:
        # a package built from a CUDA project's repository is that project's (its subdirectory's, where a rule
        # names that: t15q)
        part = url_part_symbol(req.url.removeprefix("git+"))
        if part is not None:
            yield part, req.url
        yield url_symbol(req.url.removeprefix("git+")), req.url


# the platforms an Ascend host (Linux, x86_64 or aarch64) or a CUDA one (also Windows) can be: a requirement whose
# environment marker holds on none of them is installed on macOS only (h2ogpt's `bitsandbytes==0.42.0;
# sys_platform == "darwin" and platform_machine == "arm64"`), not on the machines a port is about
# (each with every Python a port may run, so that `; python_version=='3.8'` is not read as another platform)
_PORT_PLATFORMS = [{**host, "python_version": version, "python_full_version": f"{version}.0"}
                   for host in [{"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
                                 "platform_machine": machine} for machine in ("x86_64", "aarch64")] + [
                       {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt",
                        "platform_machine": "AMD64"}]
                   for version in ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")]
_PLATFORM_MARKER_RE = re.compile(r"\b(?:sys_platform|platform_system|os_name)\b")


def parse_requirement(text: str) -> Requirement:
    """PEP 508's reading, also of a URL requirement whose marker follows the `.whl` with no space (`stable_fast @
    https://.../stable_fast-...whl; sys_platform=='linux'`: pip reads it, PEP 508 wants a space before `;`)."""
    return Requirement(_WHEEL_MARKER_RE.sub(r"\1 ;", text, count=1))


_WHEEL_MARKER_RE = re.compile(r"(@\s*\S+?\.whl);")


def read_requirement(text: str) -> Requirement | None:
    """parse_requirement's reading of one requirement string, None for what PEP 508 rejects: read once, handed to
    each reader of the line (pins, symbols, markers, extras)."""
    try:
        return parse_requirement(text)
    except InvalidRequirement:
        return None


def _strict(text: str, req: Requirement | None) -> Requirement | None:
    """PEP 508's own reading (no space added after a `.whl` URL): `req` unless parse_requirement changed the text."""
    if not _WHEEL_MARKER_RE.search(text):
        return req
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def macos_only(req: Requirement | None) -> bool:
    """True for a requirement whose environment marker holds only off Linux and Windows (macOS); a marker that
    names an extra is left alone (it holds when the extra is chosen)."""
    if req is None or req.marker is None or "extra" in str(req.marker) or not _PLATFORM_MARKER_RE.search(str(req.marker)):
        return False
    return not any(req.marker.evaluate(env) for env in _PORT_PLATFORMS)


def windows_only(req: Requirement | None) -> bool:
    """True for a requirement installed on Windows only: its environment marker holds on Windows and on no Linux
    host (tabbyAPI's `"triton-windows ; platform_system == 'Windows'"`), or its URL is a wheel built for Windows only
    (`exllamav3 @ .../exllamav3-1.4.2+cu128.torch2.9.0-cp313-cp313-win_amd64.whl`). An Ascend host runs Linux, so
    such a line never installs there: what it names is worth knowing (info), nothing to change for the port (t36c,
    heldout38). A marker that names an extra is read as macos_only reads it (left alone)."""
    if req is None:
        return False
    if req.url and windows_wheel(req.url):
        return True
    if req.marker is None or "extra" in str(req.marker) or not _PLATFORM_MARKER_RE.search(str(req.marker)):
        return False
    holds = [req.marker.evaluate(env) for env in _PORT_PLATFORMS]
    return any(holds) and not any(h for env, h in zip(_PORT_PLATFORMS, holds) if env["sys_platform"] == "linux")


def windows_wheel(path: str) -> bool:
    """A wheel file whose platform tags are all Windows ones (`-win_amd64.whl`, `-win32.whl`)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    name = unquote(path.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return False
    try:
        tags = parse_wheel_filename(name)[3]
    except InvalidWheelFilename:
        return False
    return bool(tags) and all(tag.platform.startswith("win") for tag in tags)


_WINDOWS_ONLY_NOTE = " (installed on Windows only: an Ascend host runs Linux, so this line never installs there)"


def requirement_hits(m, text: str, own_extras: frozenset[str] = frozenset(),
                     req: Requirement | None = None) -> list[tuple[str, str, Rule, str]]:
    """(symbol, the text that names it, rule, note) for one requirement string: its most specific symbol that a
    rule matches, and each extra that pulls in a CUDA-only package (`trl[vllm]`) or asks for a CUDA variant
    (`jax[cuda12]`). `own_extras`: `<project>:<extra>` for the extras the project's own pyproject lists (their
    requirements are reported on their own lines, so `dev-gpu = ["lighteval[dev,vllm]"]` in lighteval's pyproject
    adds nothing; t11x, tuned on heldout15). `req`: the text's read_requirement when the caller has it (read here
    when None)."""
    if req is None:
        req = read_requirement(text)
    hits: list[tuple[str, str, Rule, str]] = []
    if macos_only(req):
        return hits
    strict = _strict(text, req)
    if strict is not None and any(e.startswith(normalize_dist(strict.name) + ":") for e in own_extras):
        # `dev = ["nvidia-pytriton[test]", ...]` in nvidia-pytriton's own pyproject: the project names itself to pull
        # in its own extras (pip resolves the self-reference), whose requirements are reported on their own lines; the
        # name is no dependency (tp46b)
        own = normalize_dist(strict.name)
        return extra_hits(m, [e for e in sorted(strict.extras) if f"{own}:{normalize_dist(e)}" not in own_extras],
                          strict.name)
    for symbol, spelled in requirement_symbols(text, req):
        rule = m.match_requirement(symbol)
        if rule is not None and rule.extra.get("ported_by") and _OTHER_ACCELERATOR_RE.search(text):
            break           # `torch @ .../torch-2.8.0+rocm7.0-...whl`: an AMD / Intel variant, not the build a port starts from
        if rule is not None:
            hits.append((symbol, spelled, rule, ""))
            break
    if strict is None:
        return hits
    own = normalize_dist(strict.name)
    extras = [e for e in sorted(strict.extras) if f"{own}:{normalize_dist(e)}" not in own_extras]
    return hits + extra_hits(m, extras, strict.name)


def extra_hits(m, extras: list[str], owner: str) -> list[tuple[str, str, Rule, str]]:
    """Extras, dependency groups (`uv sync --group cuda12`) or `.[gpu]` selections that pull in a CUDA-only
    package (`[vllm]`) or name a CUDA variant (`[cuda12]`, `[gpu]`); a `${VAR}` part is dropped (`cuda${V}`)."""
    hits = []
    for extra in extras:
        name = normalize_dist(re.sub(r"\$\{?\w+\}?", "", extra))
        if not name or name in _NOT_A_BUILD_EXTRA:
            continue
        # `[onnxruntime-gpu]` names the package it pulls in; `[cuda12]` / `[gpu]` name a variant
        variant = re.match(r"(cuda|cu\d|gpu)", name)
        for symbol in ("extra:" + name, name) if variant else (name, "extra:" + name):
            rule = m.match_requirement(symbol)
            if rule is not None:
                hits.append((symbol, extra, rule, f" (through the `{extra}` extra or group of {owner})"))
                break
    return hits


# a wheel file name (PEP 427: `{distribution}-{version}-...`) whose version's local tag is `cu` and a variable
_VARIABLE_CUDA_WHEEL_RE = re.compile(r"([A-Za-z0-9_.]+)-[^-+]*\+cu(?:da)?(\$\{?\w+\}?)[^-]*-.*\.whl")


def wheel_symbols(path: str) -> list[str]:
    """A wheel file named on a command line: its distribution, and `name+cuXXX` for a CUDA local version."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    try:
        name, version, _build, tags = parse_wheel_filename(path.rsplit("/", 1)[-1])
    except InvalidWheelFilename:
        # `torch-${{ matrix.torch-version }}%2Bcu${TORCH_CUDA_VERSION}-cp...whl` (mamba's publish workflow): a CUDA
        # local tag whose number is a variable, which no wheel name parses with (tp52a)
        found = _VARIABLE_CUDA_WHEEL_RE.match(path.rsplit("/", 1)[-1])
        if found is None:
            return []
        name = canonicalize_name(found[1])
        return [f"{name}+cu{found[2]}", name, f"cuda-build:{name}"]
    if tags and all(t.platform.startswith("macosx") for t in tags):
        # `xformers-0.0.30+cbc9beb-cp311-cp311-macosx_11_0_universal2.whl` (tts-generation-webui's macOS CI step,
        # r2c): a wheel built only for macOS, which has neither CUDA nor an Ascend device (as for_macos files)
        return []
    symbols = [str(name)]
    # `+cu121`, and k2-fsa's `+cuda12.1.torch2.4.1` (kaldifeat, k2): the CUDA build a wheel was made for
    tag = re.search(r"(?:^|[^a-z])cu(?:da)?(\d+)", (version.local or "").replace(".", ""))
    if tag:
        # most specific first; last, a CUDA build of a package no rule names (`cuda-build:kaldifeat`)
        symbols = [f"{name}+cu{tag.group(1)}", *symbols, f"cuda-build:{name}"]
    return symbols


_CONDA_ARCHIVE_RE = re.compile(r"(?P<name>[A-Za-z0-9_.\-]+)-(?P<version>[^-/]+)-(?P<build>[^-/]+)\.(?:tar\.bz2|conda)")


def conda_archive_symbols(path: str) -> list[str]:
    """A conda package archive installed by path (`conda install pytorch3d-0.7.8-py312_cu121_pyt241.tar.bz2`, t19c:
    mvdust3r): conda names the file `name-version-build`, and a build string with `cuNNN` / `cudaNN` is the package's
    CUDA build (https://docs.conda.io/projects/conda-build/en/latest/concepts/package-naming-conv.html). The same
    symbols as wheel_symbols; none for a build without a CUDA tag (`py312_cpu_pyt241`)."""
    found = _CONDA_ARCHIVE_RE.fullmatch(path.rsplit("/", 1)[-1])
    if found is None:
        return []
    tag = re.search(r"(?:^|[^a-z])cu(?:da)?(\d+)", found.group("build").lower())
    if tag is None:
        return []
    name = found.group("name").lower()
    return [f"{name}+cu{tag.group(1)}", name, f"cuda-build:{name}"]


# Distributions whose version specifiers a tree pass reads (auditor/static/liger_ascend.py: which Liger-Kernel
# releases the tree allows), kept in the summary of each file that requires them, {dist: [specifier, ...]} ('' for
# an unpinned requirement): read once here, with `packaging`, and from the cache on a warm run
PINS_KEY = "pins"
# distributions whose version specifiers the tree passes read (liger_ascend.py; mmcv_npu_pins.py, tk39)
KEPT_PINS = frozenset({"liger-kernel", "mmcv", "mmcv-full", "transformers"})


def pins_by_file(results: list, names: tuple[str, ...], files: re.Pattern[str]) -> dict[str, list[tuple[str, str]]]:
    """Per metadata file (path `files` matches) that requires any of `names` (KEPT_PINS): (distribution, specifier) of
    each such requirement, as kept in its summary under PINS_KEY ('' for an unpinned requirement). The one reader of
    kept pins (liger_ascend.py, mmcv_npu_pins.py through tree_pins; transformers_npu_release.py)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for r in results:
        pins = (getattr(r, "summary", None) or {}).get(PINS_KEY) or {}
        if files.search(r.path):
            for name in names:
                if name in pins:
                    out.setdefault(r.path, []).extend((name, spec) for spec in pins[name])
    return out


def tree_pins(results: list, names: tuple[str, ...], files: re.Pattern[str]) -> list[tuple[str, str]] | None:
    """(distribution, specifier) of each requirement of `names` (KEPT_PINS) that the tree's metadata files (paths
    `files` matches) make ('' for an unpinned requirement); None when no such file requires any of them."""
    found = [pin for pins in pins_by_file(results, names, files).values() for pin in pins]
    return found or None


def _keep_pin(col: Collector, req: Requirement | None) -> None:
    """A requirement (read_requirement) of a distribution in KEPT_PINS, its specifier kept in the file's summary
    (PINS_KEY); what PEP 508 rejects (`liger-kernel==$VERSION`) names no pin."""
    if req is None:
        return
    name = normalize_dist(req.name)
    if name in KEPT_PINS:
        summary = col.result.summary if col.result.summary is not None else {}
        summary.setdefault(PINS_KEY, {}).setdefault(name, []).append(str(req.specifier))
        col.result.summary = summary


def _report(col: Collector, line: int, line_text: str, requirement: str, at: int = 0,
            own_extras: frozenset[str] = frozenset()) -> None:
    req = read_requirement(requirement)
    _keep_pin(col, req)
    windows = windows_only(req)
    for symbol, spelled, rule, note in requirement_hits(matchers(col.engine), requirement, own_extras, req):
        start = line_text.find(spelled, at)
        column = start + 1 if start >= 0 else at + 1
        if windows:
            col.add(rule, symbol, line, column, column + len(spelled), note=note + _WINDOWS_ONLY_NOTE,
                    severity="info")
        else:
            added = col.add(rule, symbol, line, column, column + len(spelled), note=note)
            if req is not None and req.url:         # `gaussian_rasterizer @ git+https://...`: the name is the module's
                _note_source_install(col, added, req.name, line)


def _wheel(col: Collector, line: int, line_text: str, path: str) -> None:
    m = matchers(col.engine)
    symbol = next((s for s in wheel_symbols(unquote(path)) if m.match_requirement(s) is not None), "")
    rule = m.match_requirement(symbol) if symbol else None
    if rule is not None and not (rule.extra.get("ported_by") and _OTHER_ACCELERATOR_RE.search(path)):
        start = max(line_text.find(path), 0)
        if windows_wheel(path):
            col.add(rule, symbol, line, start + 1, start + 1 + len(path), note=_WINDOWS_ONLY_NOTE, severity="info")
        else:
            col.add(rule, symbol, line, start + 1, start + 1 + len(path))


def _index(col: Collector, line: int, line_text: str, url: str) -> None:
    """An index or find-links URL: the rules say which serve CUDA builds (`.../whl/cu121`) or a CUDA-only
    package (PyTorch's Triton page `.../whl/nightly/triton`), as the shell reader asks them for `pip -f URL`."""
    rule = matchers(col.engine).match_requirement("index:" + url)
    if rule is not None and not (_ALL_BUILDS_PAGE_RE.search(url) and col.cpu_builds_only):
        start = line_text.find(url)
        col.add(rule, "index:" + url, line, start + 1, start + 1 + len(url))


_FREEZE_EDITABLE_RE = re.compile(r"^\s*#\s*Editable install with no version control \(([A-Za-z0-9][\w.-]*)==")
# with its extras: `#egg=streamdiffusion[tensorrt]` asks for the TensorRT extra (t15v)
_EGG_RE = re.compile(r"[#&]egg=([A-Za-z0-9][\w.-]*(?:\[[\w.,-]*\])?)")
# a fork kept by another accelerator's vendor (github.com/ROCm/flash-attention, github.com/intel/...): its build
# targets that device, not CUDA
_OTHER_VENDOR_FORK_RE = re.compile(r"^url:(?:github|gitlab)\.com/(?:rocm|rocmsoftwareplatform|amd|amd-aig-aima|intel|"
                                   r"intel-analytics|ascend|huawei)/")


def vcs_project(m, url: str) -> tuple[str, Rule] | None:
    """The CUDA project a bare VCS or source-archive URL installs (no `#egg=`): its repository when a pattern names
    it (`url:github.com/nvidia/apex`), else a project the requirement patterns name by the repository's last part
    (`git+https://github.com/vllm-project/vllm.git` is vLLM, `.../stanford-futuredata/megablocks.git` MegaBlocks),
    as a clone of it would be named. None for any other repository, and for another accelerator vendor's fork."""
    from auditor.project.shell import match_url

    symbol, rule = match_url(m, url)
    if rule is not None:
        return symbol, rule
    if symbol.startswith(("url:github.com/", "url:gitlab.com/", "url:gitee.com/")) and symbol.count("/") == 2 \
            and not _OTHER_VENDOR_FORK_RE.match(symbol):
        return m.match_source_tree(symbol.rsplit("/", 1)[-1])
    return None


# summary key: the modules a file's bare VCS requirements install as CUDA builds (NPU954; crossfile, tk45)
SOURCE_INSTALLS = "source_installs"


def _vcs_line(col: Collector, line: int, line_text: str, url: str) -> None:
    """A bare VCS requirement (`git+https://github.com/facebookresearch/xformers.git@04de99b`): the project its
    `#egg=` names, else the repository (`url:github.com/nvidia/apex`), else a CUDA project named by its last part."""
    egg = _EGG_RE.search(url)
    if egg:
        _report(col, line, line_text, egg.group(1))
        return
    found = vcs_project(matchers(col.engine), url)
    if found is not None:
        start = max(line_text.find(url), 0)
        added = col.add(found[1], found[0], line, start + 1, start + 1 + len(url))
        # the module the repository installs, by its name (`gaussian_rasterizer`): crossfile reports its imports
        _note_source_install(col, added, found[0].rsplit("/", 1)[-1], line)


def _note_source_install(col: Collector, added, name: str, line: int) -> None:
    """Keep the module a VCS requirement installs as a CUDA build (NPU954's kernel finding on its `url:` symbol) in
    the file's summary, for crossfile's tree pass (tk45)."""
    module = name.lower().replace("-", "_").replace(".", "_")
    if added is not None and added.category == "kernel" and (added.symbol or "").startswith("url:") \
            and module.isidentifier():
        keep_call(col.result, SOURCE_INSTALLS, {"module": module, "line": line, "code": added.code,
                                                "symbol": added.symbol})


def analyze_requirements_txt(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    listed = conda_dependency_list(text)
    if listed is not None:
        return _analyze_conda_list(engine, text, rel, listed)
    col = Collector(engine, rel, text)
    # `-f .../torch_stable.html` beside `torch==1.8.1+cpu`: the file asks that page for CPU builds
    col.cpu_builds_only = cpu_builds_only([re.sub(r"(^|\s)#.*$", "", raw) for raw in text.splitlines()])
    for first, logical in _logical_lines(text):
        analyze_requirement_item(col, first, logical)
    result = col.done()
    if result.findings and docs_build_requirements(rel, text):
        result.findings = [f for f in result.findings if f.name != "torch-pin-needs-torch-npu"]
    if any(f.code == "NPU440" and f.severity != "info" for f in result.findings) and conda_export_text(text):
        # (tq55b: `conda list --export` pins every package of the environment the same way, pip's as `=pypi_0`;
        # small-doge's litecot requirements.txt, heldout72)
        result.findings = [as_info(f, "runtime-wheel", _FREEZE_WHEEL_NOTE)
                           if f.code == "NPU440" and f.severity != "info" and TORCH_CUDA_WHEEL.match((f.symbol or "").lower())
                           else f for f in result.findings]
    elif pip_freeze_text(text):
        # a pip freeze / pip-compile lock: torch's runtime wheels (and its triton, with a torch pin) go with that pin
        result.findings = _freeze_runtime_info(result.findings, any(
            _FREEZE_TORCH.match(item) for item in _requirement_items(text)))
    return result


def _freeze_runtime_info(findings: list[Finding], torch_pinned: bool) -> list[Finding]:
    """Torch's CUDA runtime wheels in a freeze of a CUDA torch environment, and the triton its CUDA build pulls in
    when the freeze pins torch, as info (decisions (l) / (r)): they are dropped with the torch pin, the line to change."""
    return [as_info(f, "runtime-wheel", _FREEZE_WHEEL_NOTE if f.code == "NPU440" else _FREEZE_TRITON_NOTE)
            if f.severity != "info" and (f.code == "NPU440" and TORCH_CUDA_WHEEL.match((f.symbol or "").lower())
                                         or torch_pinned and f.code == "NPU360" and f.symbol == "triton") else f
            for f in findings]


# a pip freeze (`pip freeze` / `uv pip compile` output): one `name==version` line per installed distribution, an
# environment marker at most (`nvidia-cudnn-cu12==9.10.2.21 ; platform_machine == 'x86_64'`)
_FREEZE_LINE_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*(?:\[[\w,.\- ]*\])?==[^\s;=]+\s*(?:;.*)?$")
_FREEZE_MIN = 20
_FREEZE_WHEEL_NOTE = (
    "torch's CUDA runtime wheel in a pip freeze (or `conda list --export`) of a CUDA torch environment: it needs no GPU to install and sits unused "
    "on an Ascend host (PyPI publishes these wheels for x86_64 Linux, recent releases for aarch64 too); the line to "
    "change is the CUDA torch pin: drop these with it (policy (l))")


def pip_freeze_text(text: str) -> bool:
    """True for a requirements file written by `pip freeze` / `uv pip compile` / `pip-compile`: at least _FREEZE_MIN
    requirement lines, nine in ten of them `name==version` (comments, options and `-e` lines aside)."""
    items = [item for item in _requirement_items(text) if not item.startswith("-")]
    pinned = sum(1 for item in items if _FREEZE_LINE_RE.match(item))
    return pinned >= _FREEZE_MIN and pinned * 10 >= len(items) * 9


def _requirement_items(text: str) -> list[str]:
    """The requirements file's logical lines without per-requirement options: pip-compile's `--generate-hashes` lock
    continues `torch==2.5.1` with one `--hash=sha256:...` line after another (its `# via torch` lines are comments)."""
    return [logical if logical.startswith("-") else re.split(r"\s+--?[a-z]", logical, maxsplit=1)[0]
            for _, logical in _logical_lines(text)]


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line, logical line) of a requirements file: comments dropped, continued lines joined."""
    logical = ""
    first = 0
    for number, raw in enumerate(text.splitlines(), 1):
        # pip's format: '#' starts a comment at line start or after whitespace; '\' continues a line
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not logical:
            first = number
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical = (logical + line).strip()
        if logical:
            yield first, logical
        logical = ""


_DOCS_TOOLS = re.compile(r"(?im)^[ \t]*(?:sphinx|mkdocs|furo|myst-parser|pydata-sphinx-theme)\b")
_DOCS_PATH = re.compile(r"(?i)(?:^|/)docs?/|(?:^|[/_.-])docs?(?:[_.-][^/]*)?\.txt$")


def docs_build_requirements(rel: str, text: str) -> bool:
    """A requirements file for building the documentation (`docs/requirements-docs.txt`, `requirements-docs.txt`
    that installs Sphinx / MkDocs): torch there is for autodoc, never run on an NPU, so the torch-npu pairing note
    (NPU011) does not apply (t11f, heldout5's Mooncake row). Other findings stay."""
    return bool(_DOCS_PATH.search(rel)) and _DOCS_TOOLS.search(text) is not None


# a relative folder of the tree as a requirement item (`./libs/pointops`, `./third_party/ext/`), no wheel or archive
# (pd14, tuned on project test24: Scaffold-GS's environment.yml `- submodules/diff-gaussian-rasterization`): pip reads
# any item with a path separator as a path, `./` or not (pip's `_looks_like_path` in
# https://github.com/pypa/pip/blob/main/src/pip/_internal/req/constructors.py); a requirement name has no `/`
_LOCAL_FOLDER_RE = re.compile(r"^(?:\.{1,2}/)?[\w.-]+(?:/[\w.-]+)+/?$")


def analyze_requirement_item(col: Collector, line: int, logical: str) -> None:
    """One logical line of requirements.txt (or an item of a config's pip list, on its line `line`): an index
    option, a wheel, a VCS URL, a requirement with its options, an editable install."""
    line_text = col.lines[line - 1]
    opt = _OPTION_RE.match(logical)
    if opt:
        _index(col, line, line_text, opt.group(2))
        if opt.group(1) in ("-f", "--find-links") and _CUDA_INDEX_RE.search(opt.group(2)):
            col.cuda_find_links = True
    elif re.match(r"(https?://|\.{0,2}/)\S+\.whl\b", logical):
        # a wheel by URL or path; its environment marker may follow the `.whl` with no space (`...whl; sys_platform...`)
        _wheel(col, line, line_text, logical.split()[0].rstrip(";"))
    elif re.match(r"(git|hg|svn|bzr)\+[a-z]+://", logical):
        _vcs_line(col, line, line_text, logical.split()[0])
    elif _LOCAL_FOLDER_RE.match(logical) or logical.startswith(("-e ./", "--editable ./")):
        # `./libs/pointops` (a conda environment's pip list), `-e ./ext`: a folder of the tree, built by its setup.py
        # (the tree pass reads it: auditor/project/local_builds.py, t15u)
        target = logical.split()[-1]
        start = max(line_text.find(target), 0)
        record_local_build(col.result, target, "", line, start + 1, start + 1 + len(target))
    elif _CONDA_EXPORT_RE.match(logical):
        _conda_export_item(col, line, line_text, logical)
    elif not logical.startswith("-"):
        # per-requirement options (`--hash=...`, `--config-settings ...`) follow the specifier
        requirement = re.split(r"\s+--?[a-z]", logical, maxsplit=1)[0]
        _report(col, line, line_text, requirement)
        if col.cuda_find_links:
            _find_links_build(col, line, line_text, requirement)
        # an index option after the requirement (a Cog `python_packages` item `torch==1.11.0
        # --extra-index-url=https://download.pytorch.org/whl/cu113`, t15r): the build comes from that index
        for opt in _INLINE_INDEX_RE.finditer(logical):
            _index(col, line, line_text, opt.group(2))
    elif logical.startswith(("-e ", "--editable ")):
        # a local checkout is audited where it lives; a VCS one names its project (`#egg=mamba_ssm`)
        egg = _EGG_RE.search(logical)
        before = len(col.result.findings)
        if egg:
            _report(col, line, line_text, egg.group(1))
        target = logical.split(None, 1)[1].strip() if len(logical.split(None, 1)) > 1 else ""
        if len(col.result.findings) == before and re.match(r"(git|hg|svn|bzr)\+[a-z]+://", target):
            # `-e git+https://github.com/sustcsonglin/flash-linear-attention@36743f3#egg=fla` (a pip freeze): the
            # egg is the import name no rule knows; the repository names the CUDA project (t15n)
            found = vcs_project(matchers(col.engine), re.sub(r"[#].*$", "", target))
            if found is not None:
                start = max(line_text.find(target), 0)
                col.add(found[1], found[0], line, start + 1, start + 1 + len(target.split()[0]))
        elif len(col.result.findings) == before and line >= 2:
            # pip freeze writes an editable install without VCS as `# Editable install with no version control
            # (mamba-ssm==1.0.1)` then `-e /path/to/site-packages`: the comment names what is installed (t15n)
            named = _FREEZE_EDITABLE_RE.match(col.lines[line - 2])
            if named:
                _report(col, line, line_text, named.group(1), max(line_text.find(target), 0))


# PyG's compiled extensions: PyG's find-links pages (`https://data.pyg.org/whl/torch-1.10.0+cu113.html`) serve their
# wheels built for one torch and CUDA pair (PyG's installation docs: `pip install torch-scatter -f
# https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html`)
_PYG_EXTENSIONS = frozenset({"torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib"})


def _find_links_build(col: Collector, line: int, line_text: str, requirement: str) -> None:
    """A PyG extension listed after a find-links page of CUDA builds (`-f .../torch-1.10.0+cu113.html` then
    `torch-scatter`, FS-Mol's conda pip list): pip takes its wheel from that page, the CUDA build (tp60a). A
    requirement that names its build itself (`+cpu`, `+cu113`) is read by its own tag."""
    req = read_requirement(requirement)
    if req is None or req.url or "+" in str(req.specifier) or normalize_dist(req.name) not in _PYG_EXTENSIONS:
        return
    symbol = f"cuda-build:{normalize_dist(req.name)}"
    start = max(line_text.find(req.name), 0)
    col.add(matchers(col.engine).match_requirement(symbol), symbol, line, start + 1, start + 1 + len(req.name),
            note=" (from the find-links page of CUDA builds above)")


# a line of `conda list --export` (`conda create --file`): name=version=build; a `pypi_N` build is a package pip
# installed, its version pip's (`torch=2.0.0+cu118=pypi_0`, t34a: Apollo's look2hear.yml, VAD's requirements.txt)
_CONDA_EXPORT_RE = re.compile(r"^(?P<name>[A-Za-z0-9_][\w.\-]*)=(?P<version>[^=\s]+)=(?P<build>[^=\s]+)$")
_CONDA_EXPORT_HEADER = "# This file may be used to create an environment using:"


def conda_export_text(text: str) -> bool:
    """True for the text of `conda list --export`: its header, or only name=version=build lines and comments."""
    specs = [raw.strip() for raw in text.splitlines() if raw.strip() and not raw.lstrip().startswith("#")]
    return text.lstrip().startswith(_CONDA_EXPORT_HEADER) or (
        bool(specs) and all(_CONDA_EXPORT_RE.match(spec) for spec in specs))


def _conda_export_item(col: Collector, line: int, line_text: str, spec: str) -> None:
    """One name=version=build line: a pip package read as `name==version` (its `+cu118` local version is the CUDA
    build), a conda package by its name and CUDA build string as environment.yml's dependencies are."""
    found = _CONDA_EXPORT_RE.match(spec)
    assert found is not None
    if re.fullmatch(r"pypi_\d+", found["build"]):
        _report(col, line, line_text, f"{found['name']}=={found['version']}")
        return
    symbol = conda_spec_symbol(matchers(col.engine), spec, found["name"])
    start = max(line_text.find(found["name"]), 0)
    col.add(matchers(col.engine).match_requirement(symbol), symbol, line, start + 1, start + 1 + len(found["name"]))


def _locate(lines: list[str], needle: str, start: int = 0) -> int:
    """1-based number of the first line at or after start that holds needle outside a `#` comment."""
    for i in range(start, len(lines)):
        if needle in lines[i].split("#", 1)[0] if "#" not in needle else needle in lines[i]:
            return i + 1
    return 0


def _locate_string(lines: list[str], text: str, start: int) -> tuple[int, str]:
    """(1-based line, spelling) of the first TOML string `text` at or after start, in either quotes; (0, '')."""
    found = [(n, q) for q in (f'"{text}"', f"'{text}'") if (n := _locate(lines, q, start))]
    return min(found) if found else (0, "")


def _str_list(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


# uv's resolver settings: each entry changes how a package some requirement pulls in is resolved and adds nothing to
# the environment by itself (uv's documentation, "Resolution": dependency overrides and constraints; policy (q))
_UV_RESOLUTION_ONLY = ("override-dependencies", "constraint-dependencies", "build-constraint-dependencies")
_RESOLUTION_NOTE = "an entry of [tool.uv] `{table}`: it only changes how a package some requirement pulls in is " \
                   "resolved and installs nothing by itself; the requirement that pulls it in is the line to change " \
                   "(policy (q))"


def _pyproject_requirements(doc: dict) -> Iterator[tuple[str | None, str]]:
    """(group, requirement) for every requirement list in the file; group names a PEP 735 group, '' for other
    lists, `tool.uv.<table>` for uv's resolution-only lists (_UV_RESOLUTION_ONLY), None for Poetry's dependency
    tables (the requirement is a key there; its constraints are `_poetry_constraints`')."""
    project = doc.get("project") or {}
    tool = doc.get("tool") or {}
    uv = tool.get("uv") or {}
    lists = [project.get("dependencies"), (doc.get("build-system") or {}).get("requires"),
             uv.get("dev-dependencies")]
    lists += list((project.get("optional-dependencies") or {}).values())
    pdm = (tool.get("pdm") or {}).get("dev-dependencies") or {}
    lists += list(pdm.values()) if isinstance(pdm, dict) else []
    for env in ((tool.get("hatch") or {}).get("envs") or {}).values():       # hatch environments
        if isinstance(env, dict):
            lists += [env.get("dependencies"), env.get("extra-dependencies")]
    for value in lists:
        yield from (("", r) for r in _str_list(value))
    for table in _UV_RESOLUTION_ONLY:      # after the lists that install (a string in both: theirs first)
        yield from ((f"tool.uv.{table}", r) for r in _str_list(uv.get(table)))
    for name, group in (doc.get("dependency-groups") or {}).items():      # PEP 735
        yield from ((name, r) for r in _str_list(group))
    for section in _poetry_sections(tool.get("poetry") or {}):
        for name in section:
            if name != "python":
                yield None, name            # a table key (`pytorch = "2.0.1"`), not a string


def _poetry_sections(poetry: dict) -> list[dict]:
    """Poetry's dependency tables: main, the legacy dev-dependencies, then each group's."""
    return [poetry.get("dependencies") or {}, poetry.get("dev-dependencies") or {}] + \
        [g.get("dependencies") or {} for g in (poetry.get("group") or {}).values() if isinstance(g, dict)]


def _poetry_spec(doc: dict, name: str):
    """The value of Poetry dependency `name` (the first table that holds it)."""
    for section in _poetry_sections((doc.get("tool") or {}).get("poetry") or {}):
        if isinstance(section, dict) and name in section:
            return section[name]
    return None


def _poetry_constraints(name: str, spec) -> list[tuple[str, str]]:
    """(PEP 508 requirement, the TOML string that spells its version or URL, '' for none) for each constraint of a
    Poetry dependency written as a table or a list of tables (Poetry docs, "Dependency specification": version, `url`
    and `git` dependencies, "Multiple constraints dependencies": `torch = [{version = "1.12.1+cu116", source = "torch",
    markers = "sys_platform == 'linux'"}, {url = ".../whl/cpu/torch-1.12.1-...-macosx_11_0_arm64.whl", markers =
    ...}]`), with the entry's extras and markers, so the CUDA build a version or wheel names is read as the same
    requirement string is; [] for a plain version string (the key is the requirement)."""
    entries = [spec] if isinstance(spec, dict) else [e for e in spec if isinstance(e, dict)] \
        if isinstance(spec, list) else []
    out: list[tuple[str, str]] = []
    for entry in entries:
        extras = [str(e) for e in entry.get("extras") or () if isinstance(e, str)]
        named = f"{name}[{','.join(extras)}]" if extras else name
        url, git, version = entry.get("url"), entry.get("git"), entry.get("version")
        if isinstance(url, str) or isinstance(git, str):
            value = url if isinstance(url, str) else str(git)
            requirement = f"{named} @ {url}" if isinstance(url, str) else f"{named} @ git+{git}"
        elif isinstance(version, str) and re.match(r"\s*\d", version):      # a bare version is an exact one
            requirement, value = f"{named}=={version.strip()}", version
        elif isinstance(version, str) and re.match(r"\s*[<>=!]", version):  # PEP 440 operators (not ^ / ~)
            requirement, value = f"{named}{version.strip()}", version
        else:
            requirement, value = named, ""
        markers = entry.get("markers")
        out.append((f"{requirement} ; {markers}" if isinstance(markers, str) and markers.strip() else requirement,
                    value))
    return out


_OPT_IN_NOTE = " (in the opt-in extra `{extra}` of [project.optional-dependencies]: a plain install does not pull " \
               "it; warning at most, clause `guarded`, t11s)"


def _own_extras(doc: dict) -> frozenset[str]:
    """`<project>:<extra>` for each extra of the file's own `[project.optional-dependencies]` (requirement_hits)."""
    project = doc.get("project") or {}
    name, extras = project.get("name"), project.get("optional-dependencies")
    if not isinstance(name, str) or not isinstance(extras, dict):
        return frozenset()
    return frozenset(f"{normalize_dist(name)}:{normalize_dist(str(e))}" for e in extras)


def _opt_in_lines(doc: dict, lines: list[str]) -> dict[int, str]:
    """1-based line -> extra name, for the lines inside `[project.optional-dependencies]` (or an inline
    `optional-dependencies = {...}`) that hold a requirement of an extra no other list of the file repeats: a
    plain `pip install` does not pull them (t11s, tuned on heldout11's optimum-neuron `vllm` extra)."""
    project = doc.get("project") or {}
    extras = project.get("optional-dependencies")
    if not isinstance(extras, dict):
        return {}
    # (a plain requirement repeats an extra's only with the same extras: `jax` does not pull `jax[cuda12]`'s CUDA
    # plugin, bioemu's `cuda` extra; tq51a)
    plain = {_with_extras(r) for r in _str_list(project.get("dependencies"))}
    start = _table_line(lines, "project.optional-dependencies")
    if not start:
        return {}
    out: dict[int, str] = {}
    extra = ""
    for i in range(start, len(lines)):
        text = lines[i].strip()
        if text.startswith("["):
            if not text.startswith("[\"") and not text.startswith("['") and "=" not in text.split("]", 1)[0]:
                break               # the next table header
        m = re.match(r"[\"']?([A-Za-z0-9_.-]+)[\"']?\s*=", text)
        if m and m.group(1) in extras:
            extra = m.group(1)
        if not extra:
            continue
        for req in _str_list(extras.get(extra)):
            if (f'"{req}"' in text or f"'{req}'" in text) and _with_extras(req) not in plain:
                out[i + 1] = extra
    return out


def _with_extras(requirement: str) -> tuple[str, frozenset[str]]:
    """A requirement's normalized distribution and the extras it asks for (`jax[cuda12]>=0.4` -> jax, {cuda12})."""
    m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?", requirement)
    if m is None:
        return requirement_dist(requirement), frozenset()
    return normalize_dist(m.group(1)), frozenset(normalize_dist(e) for e in (m.group(2) or "").split(",") if e.strip())


def _cuda_member_extras(doc: dict) -> dict[str, str]:
    """Extras named only for CUDA (`cuda`, `gpu`, `cuda12`) -> a sibling extra named for another backend (`npu`,
    `rocm`, `xpu`): the CUDA member of a per-backend set of extras, which an Ascend install does not pick
    (tuned_pd28, mini-vllm's `cuda = ["flash-attn", "triton"]` beside `npu = ["torch-npu"]`), as the CUDA member of
    a per-backend set of files is (docs/precision.md, "Per-backend sets of files"). An extra named for the CPU
    (GiGL's `torch25-cpu` beside `torch25-cuda-121`) is the portable member an Ascend install builds on (tq58b)."""
    extras = (doc.get("project") or {}).get("optional-dependencies")
    if not isinstance(extras, dict):
        return {}
    named = {str(e): backends_in_text(str(e)) for e in extras}
    others = [e for e, names in named.items() if names and "cuda" not in names
              or not names and "cpu" in re.split(r"[-_.]", e.lower())]
    return {e: others[0] for e, names in named.items() if names == {"cuda"}} if others else {}


def _lower_opt_in(col: Collector, before: int, extra: str, note: str = _OPT_IN_NOTE) -> None:
    """The errors `_report` just added for a requirement of an opt-in extra, as warnings with why."""
    from dataclasses import replace

    for i in range(before, len(col.result.findings)):
        f = col.result.findings[i]
        if f.severity == "error":
            col.result.findings[i] = replace(f, severity="warning", message=f.message + note.format(extra=extra))


def requirement_dist(requirement: str) -> str:
    """The normalized distribution name a requirement string starts with (`flash-attn>=2; ...` -> flash-attn)."""
    return normalize_dist(re.split(r"[<>=!~;\[ @]", requirement.strip(), maxsplit=1)[0])


def _table_line(lines: list[str], header: str) -> int:
    """0-based index of the line after `[header]`, or 0."""
    for i, ln in enumerate(lines):
        if ln.strip().replace(" ", "") == f"[{header}]":
            return i + 1
    return 0


def _key_line(lines: list[str], key: str, start: int) -> int:
    """1-based line of `key = ...` (bare or quoted key) at or after start, or 0."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for i in range(start, len(lines)):
        if pattern.match(lines[i]):
            return i + 1
    return 0


_WORD_LIST = re.compile(r"^\s*[\"']?(?:keywords|classifiers)[\"']?\s*=\s*\[")


def _word_list_lines(lines: list[str]) -> set[int]:
    """1-based lines of `keywords = [...]` / `classifiers = [...]` arrays: words that describe the package
    (`"bitsandbytes"`, `"onnx runtime"` in optimum-benchmark's keywords), never a requirement, so a requirement
    string is located on a later line (t11v, tuned on heldout14)."""
    out: set[int] = set()
    i = 0
    while i < len(lines):
        if _WORD_LIST.match(lines[i]):
            depth = 0
            for j in range(i, len(lines)):
                out.add(j + 1)
                depth += lines[j].count("[") - lines[j].count("]")
                if depth <= 0:
                    break
            i = j
        i += 1
    return out


def analyze_pyproject(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return FileResult(rel, error=FileError(rel, "syntax", f"invalid TOML: {exc}"))
    col = Collector(engine, rel, text)
    lines = col.lines
    m = matchers(engine)
    cuda_groups: set[str] = set()          # dependency groups with a CUDA-only requirement (an error finding)
    after: dict[str, int] = {}             # the same string twice (two extras pin flash-attn): the next one
    opt_in = _opt_in_lines(doc, lines)
    listed = _word_list_lines(lines)
    own_extras = _own_extras(doc)
    cuda_extras = _cuda_member_extras(doc)
    cpu_sourced = _cpu_sourced(doc)
    for group, req in _pyproject_requirements(doc):
        if group is None:                                                   # Poetry: `pynvml = "*"`
            number, quoted = _key_line(lines, req, after.get(req, 0)), req
        else:
            number, quoted = _locate_string(lines, req, after.get(req, 0))
            while number and number in listed:      # `keywords = ["bitsandbytes", ...]`: a word, not this requirement
                number, quoted = _locate_string(lines, req, number)
        if not number:
            continue
        after[req] = number
        line_text = lines[number - 1]
        before = len(col.result.findings)
        constraints = _poetry_constraints(req, _poetry_spec(doc, req)) if group is None else []
        if constraints:
            _report_poetry_constraints(col, number, req, constraints)
            continue
        _report(col, number, line_text, req, max(line_text.find(quoted), 0), own_extras)
        if group and (group, normalize_dist(conda_spec_name(req))) in cpu_sourced:
            # `torch` in a group uv takes from the CPU index (agent-lightning's type-check group `verl-cpu`): the CPU
            # build torch_npu pairs with, as `pip install torch --index-url .../whl/cpu` is (pd37)
            col.result.findings[before:] = [f for f in col.result.findings[before:]
                                            if not _ported(m, f.symbol)]
        if group and group.startswith("tool.uv."):
            note = _RESOLUTION_NOTE.format(table=group.removeprefix("tool.uv."))
            col.result.findings[before:] = [as_info(f, "resolution-only", note) for f in col.result.findings[before:]]
            continue
        if group and any(f.severity == "error" for f in col.result.findings[before:]):
            cuda_groups.add(group)
        if number in opt_in and opt_in[number] in cuda_extras:
            note = f"in the extra `{opt_in[number]}`, the CUDA member of per-backend extras beside " \
                   f"`{cuda_extras[opt_in[number]]}`: an Ascend install picks the other; left as is"
            col.result.findings[before:] = [as_info(f, "per-backend-extra", note) for f in col.result.findings[before:]]
        elif number in opt_in:
            _lower_opt_in(col, before, opt_in[number])
    tool = doc.get("tool") or {}
    uv = tool.get("uv") or {}
    indexes: dict[str, str] = {}
    named = _named_sources(tool)
    for table in (uv.get("index"), (tool.get("poetry") or {}).get("source"), (tool.get("pdm") or {}).get("source")):
        for entry in table if isinstance(table, list) else []:
            url = entry.get("url") if isinstance(entry, dict) else None
            if isinstance(url, str):
                indexes[str(entry.get("name", ""))] = url
                if _explicit_source(entry) and str(entry.get("name", "")) not in named:
                    continue    # an explicit source no dependency names: nothing is installed from it (tp40)
                number = _locate(lines, url)
                if number:
                    _index(col, number, lines[number - 1], url)
    for url in _str_list(uv.get("extra-index-url")) + _str_list(uv.get("find-links")) + \
            ([uv["index-url"]] if isinstance(uv.get("index-url"), str) else []):
        number = _locate(lines, url)
        if number:
            _index(col, number, lines[number - 1], url)
    index_at = len(col.result.findings)
    cuda_groups |= _uv_sources(col, m, uv, indexes)
    poetry = tool.get("poetry") or {}
    for table, section in _poetry_dependency_tables(poetry):
        # `torch = [{ markers = "extra == 'cuda' ...", source = "pytorch-cuda" }]` (whisper-asr-webservice, tp38):
        # Poetry's per-package source choice, read as uv's `[tool.uv.sources]` entries are
        _uv_sources(col, m, {"sources": _poetry_source_entries(section, _declared_extras(doc))}, indexes, table)
    _lower_uv_cuda_members(col, uv, indexes, index_at)
    # `[tool.uv.extra-build-dependencies]` / `extra-build-variables`: tables keyed by the package they build
    held = uv.get("extra-build-variables")
    build_variables: dict = held if isinstance(held, dict) else {}
    for table in ("extra-build-dependencies", "extra-build-variables"):
        start = _table_line(lines, f"tool.uv.{table}")
        for name in (uv.get(table) or {}) if start else ():
            if _skips_cuda_build(build_variables.get(name)):
                continue     # `flash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }`: no CUDA build configured
            rule = m.match_requirement(normalize_dist(name))
            number = _key_line(lines, name, start)
            if rule is not None and number and not rule.extra.get("ported_by"):
                at = lines[number - 1].find(name)
                col.add(rule, normalize_dist(name), number, at + 1, at + 1 + len(name),
                        note=f" (its CUDA build configured in [tool.uv.{table}])")
    _script_commands(col, tool)
    _bentoml_build_settings(col, m, lines, tool)
    _conda_channels(col, m, tool)
    pixi = doc if rel.replace("\\", "/").rsplit("/", 1)[-1].lower() == "pixi.toml" else tool.get("pixi")
    if isinstance(pixi, dict):
        _pixi(col, m, pixi, "" if pixi is doc else "tool.pixi")
    defaults = uv.get("default-groups")
    number = _key_line(lines, "default-groups", 0) if isinstance(defaults, list) else 0
    for group in _str_list(defaults) if number else []:
        if group in cuda_groups:
            at = lines[number - 1].find(f'"{group}"')
            col.add(m.match_requirement("group:" + group), "group:" + group, number, at + 2, at + 2 + len(group),
                    note=" (installed by default: `uv sync` / `uv run` without --no-default-groups)")
    return col.done()


def _report_poetry_constraints(col: Collector, number: int, name: str, constraints: list[tuple[str, str]]) -> None:
    """Each constraint of Poetry dependency `name` (key on line `number`) on the line that spells its version or URL
    (the list's own element line), the key line where it spells none; one report per line and requirement."""
    lines, seen, start = col.lines, set(), number - 1
    for requirement, value in constraints:
        found = _locate_string(lines, value, start)[0] if value else 0
        line = found or number
        start = max(start, found - 1)
        if (line, requirement) not in seen:
            seen.add((line, requirement))
            text = lines[line - 1]
            _report(col, line, text, requirement, max(text.find(value if found else name), 0))


def _skips_cuda_build(variables) -> bool:
    """A package's uv build variables that turn its CUDA compile off (`FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE"`, as
    causal-conv1d's and mamba's `*_SKIP_CUDA_BUILD`: their setup.py then compiles nothing; OlmoEarth's pyproject,
    tp44b): the entries for that package configure no CUDA build; its requirement line stays the finding."""
    return isinstance(variables, dict) and any(
        str(key).upper().endswith("SKIP_CUDA_BUILD") and str(value).strip().upper() in ("TRUE", "1", "YES", "ON")
        for key, value in variables.items())


def _bentoml_build_settings(col: Collector, m, lines: list[str], tool: dict) -> None:
    """`[tool.bentoml.build]` and its tables (BentoML's build options in pyproject.toml; BentoVLLM's `[tool.bentoml.
    build.args] gpu_type = "nvidia-h100-80gb"`, the BentoCloud GPU its service asks for): each scalar read as the
    setting `tool.bentoml.build.<key>`, as the same keys in a BentoCloud deployment YAML are (tp37)."""
    def scalars(table: dict, header: str):
        for key, value in table.items():
            if isinstance(value, dict):
                yield from scalars(value, f"{header}.{key}")
            elif isinstance(value, (str, int, float, bool)):
                yield header, key, value

    build = (tool.get("bentoml") or {}).get("build")
    if not isinstance(build, dict):
        return
    for header, key, value in scalars(build, "tool.bentoml.build"):
        text = str(value).lower() if isinstance(value, bool) else str(value)
        rule = m.match_setting(f"{header}.{key}", text)
        start = _table_line(lines, header)
        number = _key_line(lines, key, start) if rule is not None and start else 0
        if number:
            at = lines[number - 1].find(key)
            col.add(rule, f"{key} = {text}", number, at + 1, at + 1 + len(key), value=text)


def _conda_channels(col: Collector, m, tool: dict, scopes: list[tuple[str, dict]] | None = None) -> None:
    """The conda channels a pyproject names for conda-lock or pixi (`[tool.conda-lock] channels = ["pytorch",
    "nvidia"]`, `[tool.pixi.workspace] channels`, or the given (header, table) scopes: a pixi feature's `channels =
    ["nvidia"]`): read by the same `channel:NAME` rules as environment.yml's."""
    lines = col.lines
    pixi = tool.get("pixi") or {}
    for header, table in scopes if scopes is not None else (
            ("tool.conda-lock", tool.get("conda-lock")), ("tool.pixi.project", pixi.get("project")),
            ("tool.pixi.workspace", pixi.get("workspace"))):
        channels = table.get("channels") if isinstance(table, dict) else None
        if not isinstance(channels, list):
            continue
        start = _table_line(lines, header)
        number = _key_line(lines, "channels", start) if start else 0
        after = number - 1
        for channel in channels if number else []:
            name = channel.get("channel") if isinstance(channel, dict) else channel
            if not isinstance(name, str):
                continue
            # `nvidia/label/cuda-12.1.0` is the nvidia channel's label; a URL names the channel last
            low = name.lower().rstrip("/")
            symbol = "channel:" + (low.rsplit("/", 1)[-1] if "://" in low else low.split("/", 1)[0])
            found, quoted = _locate_string(lines, name, after)
            if found:
                after = found - 1
                at = lines[found - 1].find(quoted)
                col.add(m.match_requirement(symbol), symbol, found, at + 2, at + 2 + len(name))


def _pixi_scopes(pixi: dict, prefix: str) -> Iterator[tuple[str, dict]]:
    """(table header, table) of a pixi manifest's scopes that hold dependencies: the manifest itself, each
    `feature.NAME`, and the `target.PLATFORM` tables under either (`[tool.pixi.feature.cuda.target.linux-64]`)."""
    def join(*parts: str) -> str:
        return ".".join(p for p in parts if p)

    scopes = [(prefix, pixi)] + [(join(prefix, "feature", str(name)), feature)
                                 for name, feature in (pixi.get("feature") or {}).items() if isinstance(feature, dict)]
    for header, table in scopes:
        yield header, table
        for platform, target in (table.get("target") or {}).items():
            if isinstance(target, dict):
                yield join(header, "target", str(platform)), target


def _scope_table_start(lines: list[str], header: str, key: str) -> int:
    """0-based index of the first line of `key`'s entries in a pixi scope: its own `[header.key]` table, or the
    scope's table where the key is written inline (`system-requirements = {cuda = "12"}`); 0 when neither."""
    own = _table_line(lines, f"{header}.{key}" if header else key)
    if own:
        return own
    start = _table_line(lines, header) if header else 0
    number = _key_line(lines, key, start) if start or not header else 0
    return number - 1 if number else 0


def _pixi(col: Collector, m, pixi: dict, prefix: str) -> None:
    """A pixi manifest (`[tool.pixi]` of a pyproject, or pixi.toml): each scope's conda channels, conda
    `dependencies` (`cuda-version = "==12.8"`), `pypi-dependencies` (a package and the index it comes from: `torch =
    { version = ">=2.7", index = ".../whl/cu128" }`) and `system-requirements` (`cuda = "12"`: the environment
    needs a CUDA driver, pixi's `__cuda` virtual package), read by the rules environment.yml's and requirements'
    lines use; a package taken from the PyTorch CPU index is the CPU build torch_npu pairs with (as uv's
    `_cpu_sourced`). One-line task commands go through the shell reader."""
    lines = col.lines
    scopes = list(_pixi_scopes(pixi, prefix))
    # a feature's channels (`[tool.pixi.feature.cuda] channels = ["nvidia"]`); pixi.toml's own project / workspace
    # tables (a pyproject's are read with conda-lock's)
    channel_scopes = [(h, t) for h, t in scopes if h.rsplit(".", 2)[-2:-1] == ["feature"]]
    if not prefix:
        channel_scopes += [(name, pixi[name]) for name in ("project", "workspace") if isinstance(pixi.get(name), dict)]
    _conda_channels(col, m, {}, channel_scopes)
    for header, table in scopes:
        requirements = table.get("system-requirements")
        if isinstance(requirements, dict) and "cuda" in requirements and \
                (start := _scope_table_start(lines, header, "system-requirements")):
            number = _key_line(lines, "cuda", start)
            if number:
                col.add(m.match_requirement("cuda"), "cuda", number, lines[number - 1].find("cuda") + 1,
                        lines[number - 1].find("cuda") + 5, note=" (a pixi system requirement: a CUDA driver on the host)")
        dependencies = table.get("dependencies")
        start = _scope_table_start(lines, header, "dependencies") if isinstance(dependencies, dict) else 0
        for name, spec in (dependencies or {}).items() if start else ():
            number = _key_line(lines, str(name), start)
            if not number:
                continue
            build = spec.get("build") if isinstance(spec, dict) else None
            symbol = conda_spec_symbol(m, f"{name}={build}" if isinstance(build, str) else str(name), str(name))
            at = lines[number - 1].find(str(name))
            col.add(m.match_requirement(symbol), symbol, number, at + 1, at + 1 + len(str(name)))
        packages = table.get("pypi-dependencies")
        start = _scope_table_start(lines, header, "pypi-dependencies") if isinstance(packages, dict) else 0
        for name, spec in (packages or {}).items() if start else ():
            number = _key_line(lines, str(name), start)
            if not number:
                continue
            line_text = lines[number - 1]
            entry = spec if isinstance(spec, dict) else {"version": spec}
            source = entry.get("url") or (f"git+{entry['git']}" if isinstance(entry.get("git"), str) else None)
            version = entry.get("version")
            # the entry's extras (`jax = { version = "==0.10.1", extras = ["cuda12"] }`, localcolabfold; pixi's
            # manifest reference, "pypi-dependencies": `extras`) are the requirement's, as `jax[cuda12]==0.10.1`
            extras = [str(e) for e in entry.get("extras") or () if isinstance(e, str)]
            named = f"{name}[{','.join(extras)}]" if extras else str(name)
            requirement = f"{named} @ {source}" if isinstance(source, str) else \
                f"{named}{version}" if isinstance(version, str) and version.strip() not in ("", "*") else named
            before = len(col.result.findings)
            _report(col, number, line_text, requirement, max(line_text.find(str(name)), 0))
            index = entry.get("index")
            if isinstance(index, str):
                if _CPU_INDEX_RE.search(index):
                    col.result.findings[before:] = [f for f in col.result.findings[before:] if not _ported(m, f.symbol)]
                _index(col, number, line_text, index)
    # tasks: `installnatcuda = "pip install natten==0.20.1+torch270cu128 -f https://whl.natten.org"`, or a table
    # with its `cmd`
    tasks = [task.get("cmd") if isinstance(task, dict) else task
             for _header, table in scopes for task in (table.get("tasks") or {}).values()]
    _scan_commands(col, [task for task in tasks if isinstance(task, str)])


def _script_commands(col: Collector, tool: dict) -> None:
    """Commands a pyproject runs (hatch environment scripts and install commands, task runners' scripts): each one-line
    command string goes through the shell reader at its place in the file (`pip install torch==2.0.1+cu118`)."""
    commands: list[str] = []
    for env in ((tool.get("hatch") or {}).get("envs") or {}).values():
        if isinstance(env, dict):
            for script in (env.get("scripts") or {}).values():
                commands += [script] if isinstance(script, str) else _str_list(script)
            commands += _str_list(env.get("pre-install-commands")) + _str_list(env.get("post-install-commands"))
    # task runners' tables: PDM and Rye scripts, poethepoet and taskipy tasks (a string, a table with its `cmd` /
    # `shell`, or a poe sequence of command strings)
    runners = (((tool.get("pdm") or {}).get("scripts")), ((tool.get("rye") or {}).get("scripts")),
               ((tool.get("poe") or {}).get("tasks")), ((tool.get("taskipy") or {}).get("tasks")))
    for table in runners:
        for script in (table.values() if isinstance(table, dict) else ()):
            script = script.get("shell") or script.get("cmd") if isinstance(script, dict) else script
            commands += [script] if isinstance(script, str) else _str_list(script)
    _scan_commands(col, commands)


def _scan_commands(col: Collector, commands: list[str]) -> None:
    """Each one-line command string through the shell reader, at its place in the file."""
    from auditor.project.shell import scan_shell

    shell_lines = [""] * len(col.lines)
    after: dict[str, int] = {}
    for command in commands:
        if "\n" in command:
            continue
        number, quoted = _locate_string(col.lines, command, after.get(command, 0))
        if number:
            after[command] = number
            shell_lines[number - 1] = " " * (col.lines[number - 1].find(quoted) + 1) + command
    if any(shell_lines):
        scan_shell(col, "\n".join(shell_lines))


def _ported(m, symbol: str | None) -> bool:
    """Is `symbol`'s rule one an Ascend build ports (`torch`: torch_npu pairs with it)?"""
    rule = m.match_requirement(symbol or "")
    return rule is not None and bool(rule.extra.get("ported_by"))


def _cpu_sourced(doc: dict) -> set[tuple[str, str]]:
    """(group, package) of each `[tool.uv.sources]` entry that takes a package from the PyTorch CPU index for one
    dependency group (`torch = [{ index = "pytorch-cpu", group = "verl-cpu" }]`)."""
    uv = (doc.get("tool") or {}).get("uv") or {}
    cpu = {str(e.get("name", "")) for e in uv.get("index") or [] if isinstance(e, dict)
           and isinstance(e.get("url"), str) and _CPU_INDEX_RE.search(e["url"])}
    sources = uv.get("sources") or {}
    return {(e["group"], normalize_dist(package)) for package, entries in
            (sources.items() if isinstance(sources, dict) else ())
            for e in (entries if isinstance(entries, list) else [entries])
            if isinstance(e, dict) and e.get("index") in cpu and isinstance(e.get("group"), str)}


_MARKER_EXTRA_NOTE = " (for the extra `{extra}` only, by its marker: a plain install does not take it; warning at most)"


def _declared_extras(doc: dict) -> list[str]:
    """The extras a pyproject declares: `[project.optional-dependencies]` and Poetry's `[tool.poetry.extras]`."""
    project, poetry = doc.get("project") or {}, (doc.get("tool") or {}).get("poetry") or {}
    tables = [project.get("optional-dependencies") if isinstance(project, dict) else None,
              poetry.get("extras") if isinstance(poetry, dict) else None]
    return [str(name) for table in tables if isinstance(table, dict) for name in table]


def _extra_of_marker(markers: object, extras: list[str]) -> str:
    """The declared extra an environment marker limits an entry to (`extra == 'cuda' and extra != 'cpu'` ->
    "cuda"), by packaging's own evaluation on the Linux platforms a port runs on (not this machine's): the marker
    fails on each with no extra asked for and holds on one with that extra; "" for a marker that holds without an
    extra, names none of them, or does not parse."""
    if not isinstance(markers, str):
        return ""
    try:
        marker = Marker(markers)
        linux = [env for env in _PORT_PLATFORMS if env["sys_platform"] == "linux"]
        if any(marker.evaluate({**env, "extra": ""}) for env in linux):
            return ""
        return next((e for e in extras if any(marker.evaluate({**env, "extra": e}) for env in linux)), "")
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return ""


def _poetry_dependency_tables(poetry: dict) -> list[tuple[str, dict]]:
    """(TOML header, table) of Poetry's `[tool.poetry.dependencies]` and each group's dependencies."""
    tables = [("tool.poetry.dependencies", poetry.get("dependencies"))]
    groups = poetry.get("group")
    tables += [(f"tool.poetry.group.{name}.dependencies", g.get("dependencies"))
               for name, g in (groups.items() if isinstance(groups, dict) else ()) if isinstance(g, dict)]
    return [(header, table) for header, table in tables if isinstance(table, dict)]


def _explicit_source(entry: dict) -> bool:
    """A package source searched only for the packages that name it: Poetry's `priority = "explicit"` (Poetry docs,
    "Repositories: Package source priority: explicit") and uv's `explicit = true` index (uv docs, "Package indexes:
    Pinning a package to an index")."""
    return entry.get("priority") == "explicit" or entry.get("explicit") is True


def _named_sources(tool: dict) -> set[str]:
    """The package sources some dependency names: `source = "..."` in Poetry's dependency tables (a list of them with
    markers), `index = "..."` in `[tool.uv.sources]`."""
    named = {str(e["index"]) for entries in _poetry_source_entries_all(tool.get("poetry") or {}).values()
             for e in entries}
    sources = (tool.get("uv") or {}).get("sources") or {}
    for spec in sources.values() if isinstance(sources, dict) else ():
        for e in spec if isinstance(spec, list) else [spec]:
            if isinstance(e, dict) and isinstance(e.get("index"), str):
                named.add(e["index"])
    return named


def _poetry_source_entries_all(poetry: dict) -> dict[str, list[dict]]:
    """`_poetry_source_entries` over every Poetry dependency table (main, groups)."""
    out: dict[str, list[dict]] = {}
    for _, section in _poetry_dependency_tables(poetry):
        for package, entries in _poetry_source_entries(section, []).items():
            out.setdefault(package, []).extend(entries)
    return out


def _poetry_source_entries(section: dict, extras: list[str]) -> dict[str, list[dict]]:
    """A Poetry dependency table's entries that name a package source (`{ version = "...", source = "pytorch" }`,
    a list of them with markers), as uv source entries (`{"index": source}`); an entry whose `markers` limit it to
    one of the declared `extras` carries that extra as `for_extra` (`_uv_sources` lowers it)."""
    out: dict[str, list[dict]] = {}
    for package, spec in section.items():
        entries = spec if isinstance(spec, list) else [spec]
        chosen = [{"index": e["source"], "for_extra": _extra_of_marker(e.get("markers"), extras)}
                  for e in entries if isinstance(e, dict) and isinstance(e.get("source"), str)]
        if chosen:
            out[str(package)] = chosen
    return out


def _uv_sources(col: Collector, m, uv: dict, indexes: dict[str, str], table: str = "tool.uv.sources") -> set[str]:
    """`[tool.uv.sources]`: a package taken from a CUDA index (`torch = [{ index = "pytorch-cu128" }]`), a CUDA
    wheel URL or a CUDA project's git repository, reported at the source entry's line. Returns the groups those
    entries serve (`group = "cuda12"`). `table`: the TOML header the entries are under (Poetry's dependency tables
    give their `source` choices in the same shape)."""
    from auditor.project.shell import url_symbol

    lines = col.lines
    sources = uv.get("sources") or {}
    start = _table_line(lines, table) if isinstance(sources, dict) else 0
    groups: set[str] = set()
    for package, entries in sources.items() if start else ():
        at_line = _key_line(lines, package, start)
        if not at_line:
            continue
        own = m.match_requirement(normalize_dist(package))
        own = None if own is not None and own.extra.get("ported_by") else own
        search = at_line - 1
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                continue
            value: str = next((entry[k] for k in ("index", "url", "git", "path") if isinstance(entry.get(k), str)), "")
            number = _locate(lines, f'"{value}"', search) if value else 0
            if not number:
                continue
            search = number
            rule, symbol = None, ""
            if isinstance(entry.get("index"), str) and cuda_index(indexes.get(value, "")):
                rule, symbol = (own, normalize_dist(package)) if own else (
                    m.match_requirement("index:" + indexes[value]), "index:" + indexes[value])
            elif isinstance(entry.get("url"), str):
                for symbol in wheel_symbols(unquote(value)) if value.endswith(".whl") else [url_symbol(value)]:
                    if (rule := m.match_requirement(symbol)) is not None:
                        break
                rule, symbol = (rule, symbol) if rule is not None else (own, normalize_dist(package))
            elif isinstance(entry.get("git"), str):
                symbol = url_symbol(value)
                rule = m.match_requirement(symbol) or own
            if rule is None or rule.extra.get("ported_by"):
                continue
            at = lines[number - 1].find(value)
            found = col.add(rule, symbol, number, at + 1, at + 1 + len(value))
            if found is not None and found.severity == "error" and entry.get("for_extra"):
                # a Poetry entry for one extra (`markers = "extra == 'cuda'"`): only an install that asks for it
                # takes the CUDA index, as a requirement of an opt-in extra (warning at most)
                found = replace(found, severity="warning",
                                message=found.message + _MARKER_EXTRA_NOTE.format(extra=entry["for_extra"]))
                col.result.findings[-1] = found
            if found is not None and found.severity == "error" and isinstance(entry.get("group"), str):
                groups.add(entry["group"])
    return groups


def _uv_cuda_members(uv: dict, indexes: dict[str, str]) -> dict[str, str]:
    """Extras or groups that take a package from a CUDA index and that `[tool.uv].conflicts` declares as an
    alternative to one taking it from a CPU index or named for another backend (WhisperLiveKit's `cu129` beside
    `cpu`) -> that sibling: the CUDA member of a user-chosen set, which an Ascend install does not pick."""
    sources = uv.get("sources") or {}
    picks: dict[str, set[str]] = {}                     # extra / group -> "cuda" / "cpu" by the indexes it names
    for entries in sources.values() if isinstance(sources, dict) else ():
        for e in entries if isinstance(entries, list) else [entries]:
            if not isinstance(e, dict) or not isinstance(e.get("index"), str):
                continue
            url = indexes.get(e["index"], "")
            kind = "cuda" if cuda_index(url) else "cpu" if _CPU_INDEX_RE.search(url) else ""
            for key in ("extra", "group"):
                if kind and isinstance(e.get(key), str):
                    picks.setdefault(e[key], set()).add(kind)
    out: dict[str, str] = {}
    for clash in uv.get("conflicts") or []:
        names = [str(e.get("extra") or e.get("group") or "") for e in clash if isinstance(e, dict)] \
            if isinstance(clash, list) else []
        for name in names:
            if picks.get(name) != {"cuda"}:
                continue
            others = [o for o in names if o != name and (picks.get(o) == {"cpu"} or o == "cpu" or
                                                         (backends_in_text(o) - {"cuda"}))]
            other = min(others, key=lambda o: o != "cpu", default=None)
            if other:
                out[name] = other
    return out


def _lower_uv_cuda_members(col: Collector, uv: dict, indexes: dict[str, str], index_at: int) -> None:
    """The `[tool.uv.sources]` entries of a CUDA member extra (`{ index = "pytorch-cu129", extra = "cu129" }`), and
    the explicit CUDA index only they name, as info (`per-backend-extra`), as a CUDA member of
    `[project.optional-dependencies]` is."""
    from dataclasses import replace

    members = _uv_cuda_members(uv, indexes)
    if not members:
        return
    lines = col.lines
    used: dict[str, set[str]] = {}                      # index name -> the extras / groups whose entries name it
    entry_lines: dict[int, str] = {}                    # 1-based line of a member's entry -> its extra / group
    sources = uv.get("sources") or {}
    for entries in sources.values() if isinstance(sources, dict) else ():
        for e in entries if isinstance(entries, list) else [entries]:
            if isinstance(e, dict) and isinstance(e.get("index"), str):
                owner = str(e.get("extra") or e.get("group") or "")
                used.setdefault(e["index"], set()).add(owner)
    for i, text in enumerate(lines):
        if "index" in text and ("extra" in text or "group" in text):
            found = re.search(r"""\b(?:extra|group)\s*=\s*["']([^"']+)["']""", text)
            if found and found.group(1) in members:
                entry_lines[i + 1] = found.group(1)
    explicit = {str(e.get("name", "")): e.get("url") for e in uv.get("index") or []
                if isinstance(e, dict) and e.get("explicit") is True and used.get(str(e.get("name", "")))
                and used[str(e.get("name", ""))] <= set(members)}
    index_urls = {"index:" + u: n for n, u in explicit.items() if isinstance(u, str)}
    for i, f in enumerate(col.result.findings):
        member = entry_lines.get(f.line) if i >= index_at else None
        if member is None and i < index_at and f.symbol in index_urls:
            member = next(iter(used[index_urls[f.symbol]]))
        if member is None or f.severity == "info":
            continue
        col.result.findings[i] = replace(
            f, severity="info", fix="none", data={**f.data, "context": "per-backend-extra"},
            message=f"{f.message} (for the `{member}` choice, declared in [tool.uv].conflicts as an alternative to "
                    f"`{members[member]}`: an Ascend install picks the other; left as is)")


def yaml_entries(node) -> dict:
    """A YAML mapping node's entries by key text ({} for anything else): the one reading of the project readers
    (requirements' conda files, configs, conda recipes)."""
    return {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)} \
        if isinstance(node, yaml.MappingNode) else {}


def _conda_lock(engine: "StaticEngine", text: str, rel: str, keys: dict) -> FileResult:
    """conda-lock.yml: the locked packages (`- name: pytorch-cuda`) and the channels (`- url: nvidia`); the
    dependency maps inside each package are the solver's, not lines a port edits."""
    col = Collector(engine, rel, text)
    m = matchers(engine)
    for channel in getattr(yaml_entries(keys["metadata"]).get("channels"), "value", []):
        url = yaml_entries(channel).get("url")
        if isinstance(url, yaml.ScalarNode) and url.value.lower().split("/", 1)[0] == "nvidia":
            col.add(m.match_requirement("channel:nvidia"), "channel:nvidia", url.start_mark.line + 1,
                    url.start_mark.column + 1, url.start_mark.column + 1 + len(url.value))
    for package in getattr(keys["package"], "value", []):
        name = yaml_entries(package).get("name")
        if isinstance(name, yaml.ScalarNode) and name.value:
            symbol = normalize_dist(name.value)
            col.add(m.match_requirement(symbol), symbol, name.start_mark.line + 1, name.start_mark.column + 1,
                    name.start_mark.column + 1 + len(name.value))
    return col.done()


# a conda build string that names CUDA: `=py310_cu118`, `=py3.10_cuda11.8_cudnn8.7.0_0`, `=cuda`
# (tp43: also a build-string glob, conda-forge's `torchvision>=0.22.0=cuda12*`, `tensorflow=*=cuda*`: conda's match
# spec takes globs in the build field, and conda-forge names its CUDA variants `cuda<major>...` / `cuda<nnn>_...`;
# conda docs, "Package match specifications"; pangeo-docker-images' ml-notebook)
# (tp50a: also Anaconda's defaults-channel GPU variants, `tensorflow=2.0.0=gpu_py36h6b29c10_0`, `_tflow_select=2.1.0=gpu`)
_CONDA_CUDA_BUILD_RE = re.compile(r"=[^=\s]*?(?:^|[=_*])(cu(?:da)?\d*[\d.]*|gpu)(?:[_\s*]|$)")


def conda_spec_name(spec: str) -> str:
    """A conda match spec's package name: name[=version[=build]], `name>=1`, or channel::name."""
    return re.split(r"[\s=<>!~\[]", spec.split("::")[-1], maxsplit=1)[0]


def conda_spec_symbol(m, spec: str, name: str) -> str:
    """The symbol a conda spec is matched by: its normalized name, with the CUDA of its build string when a rule
    knows that build (`torchvision=0.15.0=py310_cu118` is `torchvision+cu118`)."""
    symbol = normalize_dist(name)
    build = _CONDA_CUDA_BUILD_RE.search(spec.split("::")[-1][len(name):])
    if build and m.match_requirement(f"{symbol}+{build.group(1)}") is not None:
        return f"{symbol}+{build.group(1)}"
    if build and m.match_requirement(symbol) is None and m.match_requirement(f"build:{symbol}+{build.group(1)}"):
        # the CUDA variant of a package no rule knows by name (`tensorflow>=2.17.0=cuda12*`): the build chosen
        return f"build:{symbol}+{build.group(1)}"
    return symbol


def analyze_conda(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    """environment.yml: conda specs (`pytorch-cuda=12.1`, `cudatoolkit`) and the `pip:` sub-list."""
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    if conda_export_text(text):
        # `conda list --export` saved as .yml (Apollo's look2hear.yml): the lines are specs, read as requirements
        return analyze_requirements_txt(engine, data, rel)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        return FileResult(rel, error=FileError(rel, "syntax", f"invalid YAML: {exc}".splitlines()[0]))
    keys = {k.value: v for k, v in root.value if isinstance(k, yaml.ScalarNode)} \
        if isinstance(root, yaml.MappingNode) else {}
    if "package" in keys and "metadata" in keys:
        return _conda_lock(engine, text, rel, keys)
    if not isinstance(root, yaml.MappingNode) or not any(
            isinstance(k, yaml.ScalarNode) and k.value in ("dependencies", "channels") for k, _ in root.value):
        # named like an environment (`conda-ci.yml`, `conda_build.yaml`) but not one: a config or CI workflow
        from auditor.project.configs import analyze_config

        return analyze_config(engine, data, rel)
    col = Collector(engine, rel, text)
    conda_names: set[str] = set()
    pip_items: list[str] = []
    channel_hits: list[tuple[Rule | None, str, int, int, int]] = []    # added last: they depend on the dependencies
    for key, value in root.value:
        if key.value == "channels" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                if not isinstance(item, yaml.ScalarNode):
                    continue
                # `nvidia`, or one of its labels: `nvidia/label/cuda-11.8.0`
                channel = item.value.lower().split("/", 1)[0]
                symbol, rule = "channel:" + channel, matchers(engine).match_requirement("channel:" + channel)
                if rule is None:
                    # a channel named after a CUDA-only package (`xformers`) serves that package's CUDA builds; the
                    # `pytorch` channel serves CPU builds too
                    symbol, rule = normalize_dist(channel), matchers(engine).match_requirement(normalize_dist(channel))
                    rule = None if rule is not None and rule.extra.get("ported_by") else rule
                if rule is None and "/label/cuda" in item.value.lower():
                    # `rapidsai/label/cuda10.0`: a channel's label of the builds for one CUDA release (tp37)
                    symbol = "channel:" + item.value.lower()
                    rule = matchers(engine).match_requirement(symbol)
                channel_hits.append((rule, symbol, item.start_mark.line + 1, item.start_mark.column + 1,
                                     item.start_mark.column + 1 + len(item.value)))
        if key.value == "dependencies" and isinstance(value, yaml.SequenceNode):
            _conda_dependencies(col, value, conda_names, pip_items)
    # a CUDA channel serves nothing when no dependency has a finding of its own and none is a torch build
    unused = not col.result.findings and not conda_names & _TORCH_CONDA
    for rule, symbol, line, col_start, col_end in channel_hits:
        col.add(rule, symbol, line, col_start, col_end, severity="info" if unused else None,
                note=_UNUSED_CHANNEL_NOTE if unused else "")
    return _conda_done(col, yaml_entries(root).get("dependencies"), pip_items)


def _conda_dependencies(col: Collector, deps: yaml.SequenceNode, conda_names: set[str], pip_items: list[str]) -> None:
    """An environment's dependency list: each conda spec by its name and build, each item of its `pip:` sub-list as a
    line of requirements.txt (conda_names / pip_items: what it names, for the caller's readings)."""
    m = matchers(col.engine)
    for item in deps.value:
        if isinstance(item, yaml.ScalarNode):
            name = conda_spec_name(item.value)
            if name:
                line = item.start_mark.line + 1
                conda_names.add(normalize_dist(name))
                symbol = conda_spec_symbol(m, item.value, name)
                col.add(m.match_requirement(symbol), symbol, line, item.start_mark.column + 1,
                        item.start_mark.column + 1 + len(name))
        elif isinstance(item, yaml.MappingNode):
            for k, v in item.value:
                if k.value == "pip" and isinstance(v, yaml.SequenceNode):
                    for p in v.value:
                        if isinstance(p, yaml.ScalarNode) and isinstance(p.value, str) and p.value.strip():
                            # as a line of requirements.txt: index options, wheels, VCS URLs (t15f: torch-ngp's
                            # `- git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch`)
                            analyze_requirement_item(col, p.start_mark.line + 1, p.value.strip())
                            pip_items.append(p.value.strip())


def _conda_done(col: Collector, deps, pip_items: list[str]) -> FileResult:
    """The environment's findings, with the CUDA runtime packages of a `conda env export` (and of its pip section's
    freeze) beside the CUDA torch build as info."""
    result = col.done()
    if _conda_env_export(deps) and any(_CUDA_TORCH_CONDA.match(f.symbol or "") for f in result.findings):
        result.findings = [as_info(f, "runtime-wheel", _EXPORT_RUNTIME_NOTE)
                           if f.severity != "info" and TORCH_CUDA_CONDA.match(f.symbol or "") else f
                           for f in result.findings]
    if pip_freeze_text("\n".join(pip_items)) and any(_FREEZE_TORCH.match(item) for item in pip_items):
        # a `conda env export`'s pip section is pip's freeze of the environment (AnyDoor's environment.yaml, 18 conda
        # pins and 140 pip pins): torch's CUDA runtime wheels and the triton its CUDA build pulls in go with the
        # torch pin (decisions (l) / (r); tq51c)
        result.findings = _freeze_runtime_info(result.findings, True)
    return result


# a YAML list item (`  - cudatoolkit=10.0.130=0`): its value is tested as a `conda env export` spec (_CONDA_EXPORT_RE)
_LIST_ITEM_RE = re.compile(r"^[ \t]*-[ \t]+(\S+)[ \t]*$")
_CONDA_LIST_MIN = 3


def conda_dependency_list(text: str) -> yaml.SequenceNode | None:
    """The dependency list of a conda environment saved without its `dependencies:` key, in a requirements file
    (`  - pytorch=1.4.0=py3.7_cuda10.0.130_cudnn7.6.3_0` ... `  - pip:` / `    - spacy==2.2.4`, under a note line):
    pip rejects such lines (`- x` is no requirement specifier), so the file is the conda spec list its lines say it
    is, read as environment.yml's `dependencies:`. At least _CONDA_LIST_MIN items are name=version=build specs and
    they are at least half of the file's lines (comments and blank lines aside); the other lines that are no list
    item (a note) are left out, each line keeping its number. None for anything else."""
    lines = text.splitlines()
    content = [raw for raw in lines if raw.strip() and not raw.lstrip().startswith("#")]
    specs = sum(1 for raw in content if (m := _LIST_ITEM_RE.match(raw)) and _CONDA_EXPORT_RE.match(m.group(1)))
    if specs < _CONDA_LIST_MIN or specs * 2 < len(content):
        return None
    kept = "\n".join(raw if raw.lstrip().startswith(("-", "#")) else "" for raw in lines)
    try:
        root = yaml.compose(kept, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    return root if isinstance(root, yaml.SequenceNode) else None


def _analyze_conda_list(engine: "StaticEngine", text: str, rel: str, deps: yaml.SequenceNode) -> FileResult:
    """A requirements file that holds a conda environment's dependency list (conda_dependency_list)."""
    col = Collector(engine, rel, text)
    pip_items: list[str] = []
    _conda_dependencies(col, deps, set(), pip_items)
    return _conda_done(col, deps, pip_items)


_FREEZE_TORCH = re.compile(r"^torch==")
_FREEZE_TRITON_NOTE = (
    "the triton that torch's CUDA build pulls in, in a freeze of a CUDA torch environment: it is dropped with that torch "
    "pin, the line to change (decision (r))")


# the CUDA torch build (or toolkit) whose runtimes the export lists: `pytorch-cuda`, `pytorch+cuda12.4` (its build string)
_CUDA_TORCH_CONDA = re.compile(r"^(?:pytorch-cuda|pytorch\+cu|torch\+cu|cudatoolkit)")
_EXPORT_RUNTIME_NOTE = (
    "a CUDA runtime package of a `conda env export` listing: the CUDA pytorch build beside it pulls it in and it is "
    "dropped with it; the line to change is that pytorch / pytorch-cuda pin (policy (r))")
_EXPORT_MIN = 20


def _conda_env_export(deps) -> bool:
    """True for the dependency list (a YAML node) `conda env export` writes: at least _EXPORT_MIN conda dependencies,
    nine in ten pinned with a build string (`libcufft=11.2.0.44=0`)."""
    specs = [item.value for item in getattr(deps, "value", []) if isinstance(item, yaml.ScalarNode)]
    pinned = sum(1 for spec in specs if isinstance(spec, str) and _CONDA_EXPORT_RE.match(spec.strip()))
    return pinned >= _EXPORT_MIN and pinned * 10 >= len(specs) * 9


# the pytorch channel's torch packages take their CUDA runtime (pytorch-cuda) from the nvidia channel
_TORCH_CONDA = frozenset({"pytorch", "torch", "torchvision", "torchaudio"})
# Fooocus-MRE's environment.yaml: channels pytorch, nvidia; dependencies python, pip, packaging (torch comes from its
# launcher): the channel installs nothing, info (t17d)
_UNUSED_CHANNEL_NOTE = (" (no dependency of this file is a CUDA package or a torch build, so nothing is installed "
                        "from the channel; the environment is created on an Ascend host as written)")
