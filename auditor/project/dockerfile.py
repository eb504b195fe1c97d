"""Dockerfiles read with dockerfile-parse: the base image (`FROM nvidia/cuda:...`), `ENV` / `ARG`
variables, and RUN lines handed to the shell reader with their own line numbers."""
from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection
from typing import TYPE_CHECKING

from auditor.findings import FileResult, as_info
from auditor.project.hits import (NCCL_VERSION_NAME_RE, Collector, cuda_member_siblings, decode_text,
                                  lower_cuda_member, matchers, normalize_dist)
from auditor.project.shell import (COMMAND_VARIABLE_RE, SCHEDULER_REQUESTS, forces_cuda_text, gate_findings, index_env,
                                   nvidia_archive, scan_fragment, scan_shell)
from auditor.project.local_builds import absolute_folder
from auditor.project.requirements import wheel_symbols
from auditor.backend_words import OTHER_BACKENDS, backends_in_text, member_backend

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine


_ARG_REF_RE = re.compile(r"\$\{?(\w+)\}?")



def _exec_form(value: str) -> list[str] | None:
    """The argv of an exec-form instruction (`RUN ["pip", "install", "x"]`): a JSON list of strings. Anything else,
    also a line that opens with `[` (`RUN [ -n "$X" ] && ...`), is the shell form, as Docker reads it."""
    if not value.lstrip().startswith("["):
        return None
    try:
        argv = json.loads(value)
    except ValueError:
        return None
    return argv if isinstance(argv, list) and all(isinstance(a, str) for a in argv) else None

def _image(value: str) -> str:
    """`--platform=$P nvidia/cuda:12.1-devel AS build` -> nvidia/cuda:12.1-devel"""
    words = [w for w in value.split() if not w.startswith("--")]
    return words[0] if words else ""


def analyze_dockerfile(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    instructions = _parse(text)
    col = Collector(engine, rel, text)
    m = matchers(engine)
    shell_lines = [""] * len(col.lines)
    args: dict[str, tuple[str, int, int]] = {}          # ARG name -> (default, line, column)
    images: list[str] = []                              # the base image of each stage, ARG defaults resolved
    stage_images: dict[str, str] = {}                   # a named stage's base image (`FROM ... AS pytorch_image`)
    heredoc_end = -1
    # names a RUN line expands (`RUN wget ${NSYS_URL}${NSYS_PKG}`), and the download URLs such names hold
    run_refs = {a.group(1) for ins in instructions if ins["instruction"] == "RUN"
                for a in _ARG_REF_RE.finditer(ins["value"])}
    url_vars: dict[str, str] = {}
    global_args: set[str] = set()     # ARGs given a value before the first FROM
    workdir: str | None = "/"         # the stage's working directory (None: held in a variable)
    for ins in instructions:
        kind = ins["instruction"]
        first, last = ins["startline"], ins["endline"]
        if first <= heredoc_end:
            continue            # a line of a `RUN <<EOF` body: dockerfile-parse reads it as an instruction
        if kind == "RUN" and (here := _HEREDOC_RE.search(ins["value"])) is not None:
            heredoc_end = _heredoc(col.lines, shell_lines, first, last, here)
            continue
        line_text = col.lines[first] if first < len(col.lines) else ""
        if kind == "FROM":
            ref = _image(ins["value"])
            images.append(_ARG_REF_RE.sub(lambda a: args.get(a.group(1), ("",))[0], ref))
            named = ins["value"].split()
            if len(named) >= 3 and named[-2].lower() == "as":
                stage_images[named[-1]] = images[-1]
            used = _ARG_REF_RE.fullmatch(ref)
            if used and used.group(1) in args:
                # `ARG BASE_IMAGE=nvidia/cuda:...` then `FROM ${BASE_IMAGE}`: the image is chosen at the ARG
                default, line, column = args[used.group(1)]
                col.add(m.match_image(default), default, line, column)
                # ... and the FROM that builds on it is the line a port changes with it (t15t, sam2's backend
                # Dockerfile): one finding each
                start = line_text.find(ref)
                col.add(m.match_image(default), default, first + 1, start + 1 if start >= 0 else 1,
                        note=f" (the default of `ARG {used.group(1)}`, line {line})")
            else:
                start = line_text.find(ref)
                col.add(m.match_image(ref), ref, first + 1, start + 1 if start >= 0 else 1)
                _tag_args(col, m.match_image(ref), ref, args, first + 1)
                if m.match_image(ref) is None and used is None:
                    _image_through_args(col, m, ref, args, first + 1, start + 1 if start >= 0 else 1)
                    # `FROM ${BASE_IMAGE}:${BASE_IMAGE_TAG}` with `ARG BASE_IMAGE_TAG="12.8.1-devel-..."`: the tag's
                    # ARG picks the CUDA release of the image its defaults make (llm-d, tp39)
                    _tag_args(col, m.match_image(images[-1]), ref, args, first + 1)   # (resolved above)
                registry = _ARG_REF_RE.match(ref)
                if registry and registry.group(1) in args and ref[registry.end():registry.end() + 1] == "/" \
                        and args[registry.group(1)][0].lower().startswith("nvcr.io"):
                    # `ARG REGISTRY="nvcr.io"` then `FROM ${REGISTRY}/nvidia/cuda:...`: NVIDIA's NGC registry is
                    # chosen at the ARG, a line to change too
                    default, line, column = args[registry.group(1)]
                    resolved = _ARG_REF_RE.sub(lambda a: args.get(a.group(1), ("*",))[0], ref)
                    col.add(m.match_image(resolved), resolved, line, column)
        if kind in ("ENV", "ARG"):
            if kind == "ARG" and "=" in ins["value"]:
                name, _, default = ins["value"].partition("=")
                default = default.strip().strip("\"'")
                at = line_text.find(default)
                args[name.strip()] = (default, first + 1, at + 1 if at >= 0 else 1)
                col.build_args[name.strip()] = default
                if not images:
                    global_args.add(name.strip())
            try:
                words = shlex.split(ins["value"])
            except ValueError:
                words = ins["value"].split()
            names = [w.split("=", 1)[0] for w in words] if all("=" in w for w in words) or kind == "ARG" \
                else words[:1]                                    # `ENV NAME value` (the old form)
            # `ENV NV_CUDNN_VERSION 9.1.0.70-1` (the old form): one name, the rest its value (t15s)
            old_form = kind == "ENV" and len(words) > 1 and "=" not in words[0]
            _build_settings(col, m, [words[0] + "=" + " ".join(words[1:])] if old_form else words,
                            col.lines[first:last + 1], first + 1, global_args if images and kind == "ARG" else set())
            for word in words:           # `ENV UV_INDEX=https://download.pytorch.org/whl/cu128` (t15t)
                key, eq, value = word.partition("=")
                if eq:
                    at = next((n for n in range(first, last + 1) if n < len(col.lines) and key in col.lines[n]), first)
                    index_env(col, m, key, value, at + 1, 1)
            if kind == "ENV":       # `ENV FORCE_CUDA="1"`: read by the RUN lines' builds (shell reader, t15n)
                col.script_vars.update(w.split("=", 1) for w in words if "=" in w)  # type: ignore[misc]
                if old_form:        # `ENV NV_LIBNPP_PACKAGE libnpp-12-1-${NV_LIBNPP_VERSION}` (tp45)
                    col.script_vars[words[0]] = " ".join(words[1:])
                _held_commands(col, words, first, last)
            for name in names:
                if kind == "ARG" and name.startswith("NVIDIA_"):
                    # a build argument is not kept in the image's environment (Docker's reference, ARG: "not persisted
                    # into the built image as ENV variables are"), and the NVIDIA container toolkit reads NVIDIA_*
                    # from the container's environment only: `ARG NVIDIA_30XX=false`, a stage-name switch (tp55b)
                    continue
                for n in range(first, last + 1):
                    start = col.lines[n].find(name) if n < len(col.lines) else -1
                    if start >= 0:
                        col.env(name, n + 1, start + 1)
                        break
            held = _download_url_vars(words, run_refs)
            url_vars.update(held)
            if len(held) < len(words):
                for n in range(first, min(last + 1, len(col.lines))):
                    scan_fragment(col, col.lines[n], n + 1, 1)     # git URLs of CUDA projects, build options, paths
        elif kind in ("RUN", "CMD", "ENTRYPOINT") and (argv := _exec_form(ins["value"])) is not None:
            # the exec form is a JSON list: the same command, quoted for the shell reader, on its first line
            if first < len(shell_lines):
                shell_lines[first] = " " * len(kind) + " " + shlex.join(argv)
        elif kind == "RUN":
            # the shell form (also a line that opens with a test, `RUN [ ${#PYTORCH} -gt 0 ] && ...`: not JSON, so
            # Docker runs it through the shell; tuned-lens, t33b): blank the keyword so columns stay where they are
            for n in range(first, min(last + 1, len(col.lines))):
                shell_lines[n] = _run_line(col.lines[n], n > first)
            head = shell_lines[first]
            at = head.upper().find("RUN")
            shell_lines[first] = head[:at] + "   " + head[at + 3:]
            _blank_buildkit_flags(shell_lines, first, min(last, len(col.lines) - 1))
            for n in range(first, min(last + 1, len(col.lines))):
                for expansion in _ARG_REF_RE.finditer(col.lines[n]):
                    if expansion.group(1) in url_vars:   # the download of a URL an ARG / ENV holds happens here
                        scan_fragment(col, url_vars[expansion.group(1)], n + 1, expansion.start() + 1, options=False)
        elif kind == "ADD" and first < len(col.lines):
            # `ADD https://developer.download.nvidia.com/.../cuda-keyring_1.1-1_all.deb /tmp/`: a download, read as
            # the URL of a `wget` line is (t15t)
            # the wheel's own file name first: it says which distribution (`onnxruntime_gpu-...whl`), where the URL
            # only says that NVIDIA's Jetson share serves a wheel (tp50a's box.com reading)
            if not _added_wheel(col, m, col.lines[first], first + 1):
                scan_fragment(col, col.lines[first], first + 1, 1, options=False)
        elif kind == "COPY" and first < len(col.lines):
            # `COPY nccl.conf /etc/nccl.conf`: a file only NCCL reads, put where it looks (t16d); `COPY --from=trt-deps
            # /usr/local/cuda-deps /usr/local/cuda`: CUDA libraries put where the CUDA stack looks (tp44b)
            scan_fragment(col, col.lines[first], first + 1, 1, options=False)
            _copied_packages(col, m, ins["value"], col.lines[first], first + 1, stage_images)
            copied = _context_copy(ins["value"], workdir)
            if copied:
                col.context_copies.add(copied)
        if kind == "WORKDIR":
            workdir = absolute_folder(workdir, ins["value"].strip().strip("\"'"))
        elif kind == "FROM":
            workdir = "/"
        if kind == "WORKDIR" and first < len(shell_lines):
            # the directory the next RUN lines start in: a `cd` for the shell reader (`WORKDIR /src/DeepEP`
            # then `RUN pip wheel .` builds DeepEP); the keyword is blanked to the same width
            at = line_text.upper().find("WORKDIR")
            shell_lines[first] = " " * at + "cd     " + line_text[at + 7:]
        elif kind == "FROM" and first < len(shell_lines):
            shell_lines[first] = "cd /"                  # a new stage starts elsewhere
    if any(shell_lines):
        # each RUN is its own script: a line of `true;` between them would shift nothing, blank lines suffice
        scan_shell(col, "\n".join(shell_lines))
    result = col.done()
    _cpu_source_builds(result, col, m)
    _drop_unpacked_copies(result, {ins["startline"] + 1 for ins in instructions if ins["instruction"] in ("COPY", "ADD")})
    if any(shell_lines):
        gate_findings(result, "\n".join(shell_lines))   # `RUN if [ "$(python -c '...torch.version.cuda...')" = "12" ]`
    backends = set().union(*(backends_in_text(i.split("@", 1)[0]) for i in images)) if images else set()
    if backends and backends <= OTHER_BACKENDS:
        # `FROM rocm/pytorch:...`, `ARG BASE_IMAGE=rocm/primus:v26.5` then `FROM ${BASE_IMAGE}`: an image built on
        # another backend's stack (a ROCm build of TransformerEngine, `PYTORCH_ROCM_ARCH`) sets up that backend
        note = f"in a Dockerfile built on {', '.join(sorted(backends))}'s image, which does not run on Ascend: " \
               "left as is"
        result.findings = [f if f.severity == "info" or f.data.get("context") else as_info(f, "other-backend", note)
                           for f in result.findings]
    unread = _unread_stage_args(instructions, col.lines)
    if unread:
        result.findings = [f for f in result.findings if not (f.line in unread and f.code == "NPU018")]
    stages = _cuda_stages(instructions)
    if stages:
        result.findings = lower_cuda_member(result.findings, stages, "stage")
    return result


def _cpu_source_builds(result: FileResult, col: Collector, m) -> None:
    """Lower to information the findings of a source build that compiles CUDA only with a GPU visible at build time
    (the requirement rules' `gpu_at_build`: pytorch3d's `torch.cuda.is_available() and CUDA_HOME` test): BuildKit's
    `docker build` runs RUN lines without a GPU, so without FORCE_CUDA the install builds the CPU ops (test48's and
    test141's labels); the legacy builder with the NVIDIA runtime as `default-runtime` sees one and compiles the
    CUDA ops, so the fact stays (review50 item 13)."""
    gated = {symbol: rule.code for _, rule in m.requirement for symbol in rule.extra.get("gpu_at_build", ())}
    if not gated:
        return
    # FORCE_CUDA set on the line or by an earlier ENV / RUN line
    result.findings = [as_info(f, "cpu-source-build", _CPU_BUILD_NOTE)
                       if gated.get(f.symbol or "") == f.code and f.severity != "info"
                       and not forces_cuda_text("\n".join(col.lines[:f.line])) else f
                       for f in result.findings]


_CPU_BUILD_NOTE = ("a `docker build` without FORCE_CUDA and without a visible GPU builds the CPU ops; a legacy "
                   "builder whose default runtime is nvidia compiles the CUDA ones, so on Ascend check the renderer's "
                   "speed on the CPU build")


def _context_copy(value: str, workdir: str | None) -> str | None:
    """The container folder `COPY . /workspace/app/` (or `COPY ./ app/` under a WORKDIR) puts the whole build context
    in, normalised; None for a COPY from a stage or of other sources. The shell reader maps a build there to the
    tree's own setup.py (local_builds, tp46a)."""
    words = value.split()
    if any(w.startswith("--from") for w in words):
        return None
    words = [w for w in words if not w.startswith("--")]
    if len(words) != 2 or words[0] not in (".", "./"):
        return None
    return absolute_folder(workdir, words[1])


def _drop_unpacked_copies(result: FileResult, fetch_lines: set[int]) -> None:
    """`COPY TensorRT-8.4.2.4.Linux.x86_64-gnu.cuda-11.6.cudnn8.4.tar.gz /home/feiyull/` then `RUN tar -zxvf
    TensorRT-...tar.gz && rm TensorRT-...tar.gz`: the COPY / ADD that puts NVIDIA's archive in the image is the
    finding; the RUN lines that unpack and remove the same file add nothing (tp51d, test146's label)."""
    fetched = {(f.symbol, f.line) for f in result.findings if f.line in fetch_lines and nvidia_archive(f.symbol)}
    if fetched:
        result.findings = [f for f in result.findings
                           if not any(f.symbol == s and f.line > ln for s, ln in fetched) or f.line in fetch_lines]


def _added_wheel(col: Collector, m, text: str, line: int) -> bool:
    """`ADD https://nvidia.box.com/shared/static/<id>.whl /trt-wheels/onnxruntime_gpu-1.19.0-cp311-...whl` (NVIDIA's
    Jetson wheel, frigate's TensorRT image): a download whose URL names nothing, saved under the wheel's own file name,
    which says the distribution the image installs (tp44b). Whether it reported one."""
    dest = text.split()[-1] if text.split() else ""
    if not dest.endswith(".whl") or any(f.line == line for f in col.result.findings):
        return False
    for symbol in wheel_symbols(dest):
        rule = m.match_requirement(symbol)
        if rule is not None:
            at = text.rfind(dest) + 1
            col.add(rule, symbol, line, at, at + len(dest))
            return True
    return False


# an installed Python package's folder (`/usr/local/lib/python3.12/dist-packages/torch`), not its .dist-info / .so
_SITE_PACKAGE_RE = re.compile(r"/(?:dist|site)-packages/([A-Za-z_]\w*)/?")


def _copied_packages(col: Collector, m, value: str, text: str, line: int, stage_images: dict[str, str]) -> None:
    """`COPY --from=pytorch_image /usr/local/lib/python3.12/dist-packages/torch /opt/venv/.../site-packages/torch`
    with `FROM nvcr.io/nvidia/pytorch:25.12-py3 AS pytorch_image` (tensorrtllm_backend's Triton image; tp45, project
    test122): a package copied out of a CUDA image's Python is that image's build of it, installed here as a
    requirement would be: torch's CUDA build, flash_attn, nvfuser. Only packages a requirement rule names (`name+cu`
    first, for torch's own builds); a package no rule names (pycocotools) and any other stage's files stay quiet."""
    words = value.split()
    source = next((w.partition("=")[2] for w in words if w.startswith("--from=")), "")
    paths = [w for w in words if not w.startswith("--")][:-1]
    if not source or not paths or m.match_image(stage_images.get(source, source)) is None:
        return
    for path in paths:
        found = _SITE_PACKAGE_RE.search(path)
        if found is None or found.end() < len(path):
            continue
        name = normalize_dist(found.group(1))
        rule = next((r for r in (m.match_requirement(f"{name}+cu"), m.match_requirement(name)) if r is not None), None)
        at = text.find(path) + 1
        col.add(rule, name, line, at, at + len(path), note=f" (copied from the CUDA image of `--from={source}`)")


def _download_url_vars(words: list[str], run_refs: set[str]) -> dict[str, str]:
    """`ARG NSYS_URL=https://developer.nvidia.com/.../nsight-systems/2025_1/` then `RUN wget ${NSYS_URL}${NSYS_PKG}`
    (llm-d, tp39): a variable whose value is a folder URL only names where the download is; the RUN line that expands it is
    where the download happens, so the URL's finding goes there. A URL variable no RUN line expands stays where it
    is (read as before), and so does a URL of a whole file (`ARG PYTORCH_URL=https://nvidia.box.com/.../x.whl` then
    `RUN wget ${PYTORCH_URL} -O ${PYTORCH_WHL}`): the ARG names what is downloaded, the pair of decision 62 (tp50a;
    the earlier project labels put 4 such ARG lines in a category, test86's folder URL `none`)."""
    held = {}
    for word in words:
        name, eq, value = word.partition("=")
        if eq and name in run_refs and re.fullmatch(r"https?://\S+/", value):
            held[name] = value
    return held


def _tag_args(col: Collector, rule, ref: str, args: dict, line: int) -> None:
    """`ARG DLFW_VERSION=25.12` then `FROM nvcr.io/nvidia/pytorch:${DLFW_VERSION}-py3` (t24b, project test35's makani):
    the ARG picks the release of a CUDA base image, a build parameter of it (information, as `ARG CUDA_VERSION`); an
    ARG line with a finding of its own (NPU018's CUDA version) keeps that one."""
    _, sep, tag = ref.rpartition(":")
    if rule is None or not sep or "/" in tag:
        return
    # only the ARG that opens the tag: the image's release (NGC `25.12-py3`, CUDA `12.8.1-devel-...`); a later part
    # (`-ubuntu${UBUNTU_VERSION}`) picks the OS, the same on Ascend
    opening = _ARG_REF_RE.match(tag)
    image = _ARG_REF_RE.sub(lambda a: args.get(a.group(1), ("",))[0], ref)
    for name in [opening.group(1)] if opening else []:
        if name in args and args[name][0] and not any(f.line == args[name][1] for f in col.result.findings):
            col.add(rule, image, args[name][1], args[name][2], severity="info",
                    note=f" (`ARG {name}` picks the tag of the base image on line {line}: a build parameter of it)")


def _image_through_args(col: Collector, m, ref: str, args: dict, line: int, column: int) -> None:
    """`ARG BASE_IMAGE=openmpi4.1.0-cuda11.3-cudnn8-ubuntu20.04` then `FROM mcr.microsoft.com/azureml/${BASE_IMAGE}`
    (t22f, project test31's ClimaX): only the defaults say it is a CUDA image. The FROM and each ARG whose default
    makes it one are the lines a port changes."""
    def resolved(blank: str = "") -> str:
        return _ARG_REF_RE.sub(lambda a: "" if a.group(1) == blank else args.get(a.group(1), ("",))[0], ref)
    image = resolved()
    rule = m.match_image(image)
    if rule is None:
        return
    chosen = [name for name in dict.fromkeys(a.group(1) for a in _ARG_REF_RE.finditer(ref))
              if name in args and m.match_image(resolved(name)) is None]
    if not chosen:
        return
    col.add(rule, image, line, column, note=f" (the default{'s' if len(chosen) > 1 else ''} of "
            f"{', '.join(f'`ARG {n}`' for n in chosen)})")
    for name in chosen:
        default, arg_line, arg_column = args[name]
        col.add(rule, image, arg_line, arg_column, note=f" (`ARG {name}`, read by the FROM on line {line})")


def _cuda_stages(instructions: list[dict]) -> list[tuple[int, int, str, list[str]]]:
    """(first line, last line, name, siblings) of each Dockerfile stage (`FROM ... AS builder-cuda`) that is the CUDA
    member of per-backend stages (1-based lines; a stage runs to the line before the next FROM)."""
    stages: list[tuple[int, str]] = []
    for ins in instructions:
        if ins["instruction"] == "FROM":
            words = ins["value"].split()
            stages.append((ins["startline"] + 1, words[-1] if len(words) >= 3 and words[-2].lower() == "as" else ""))
    names = [name for _, name in stages if name]
    out = []
    for n, (first, name) in enumerate(stages):
        siblings = cuda_member_siblings(name, names) if name else []
        if name and not siblings:
            # `anomalib-studio-cuda-base` / `-cuda-cleanup`: stages that build the CUDA member `anomalib-studio-cuda`
            # beside `anomalib-studio-cpu` / `-xpu` (tq41): the name up to its CUDA word is that member's
            words = re.split(r"[-_.]", name)
            cut = next((i for i, w in enumerate(words) if member_backend(w.lower()) == "cuda"), None)
            if cut is not None and cut + 1 < len(words):
                siblings = cuda_member_siblings("-".join(words[:cut + 1]), ["-".join(re.split(r"[-_.]", o)[:cut + 1])
                                                                             for o in names if o != name])
        if siblings:
            last = stages[n + 1][0] - 1 if n + 1 < len(stages) else 1 << 30
            out.append((first, last, name, siblings))
    return out


def _unread_stage_args(instructions: list[dict], lines: list[str]) -> set[int]:
    """1-based lines of `ARG CUDA_VERSION` declarations (with a default or none) inside a stage that nothing later in that stage
    reads (`$CUDA_VERSION`, `${CUDA_VERSION...}`): TorchServe's Dockerfile.dev declares it in its compile stage and
    reads it only in the dev stage, which declares it again. A build argument only reaches a stage that declares it,
    so the unread declaration passes nothing on (lead decision 7, a value nothing reads; tp37). ARGs before the
    first FROM are the FROM lines' own."""
    out: set[int] = set()
    in_stage = False
    for i, ins in enumerate(instructions):
        kind = ins["instruction"]
        if kind == "FROM":
            in_stage = True
            continue
        if kind != "ARG" or not in_stage:
            continue
        name = ins["value"].strip().partition("=")[0].strip()
        if not re.fullmatch(r"\w+", name) or len(ins["value"].split()) > 1:
            continue
        end = next((later["startline"] for later in instructions[i + 1:] if later["instruction"] == "FROM"),
                   len(lines))
        later_lines = lines[ins["endline"] + 1:end]
        # the stage's other instructions (not its ARGs, which may compose one value from parts)
        used_lines = [ln for later in instructions[i + 1:] if later["instruction"] not in ("ARG", "FROM")
                      and later["startline"] < end for ln in lines[later["startline"]:later["endline"] + 1]]
        if not _reads_arg(name, later_lines) and ("=" not in ins["value"] or any(
                _reads_arg(other, used_lines) for other in _stage_arg_names(instructions, i, end) if other != name)):
            # with a default, only beside build arguments the stage's instructions do read by name (`ARG
            # CUDNN_MAJOR_VERSION=8` beside `ARG CUDNN=8.1.0.77-1`, which the install line reads: handson-ml3's
            # Dockerfile.gpu; tp42, project test100): a stage whose instructions read none of its ARGs may hand them
            # to a script it runs
            out.add(ins["startline"] + 1)
    return out


def _reads_arg(name: str, lines: list[str]) -> bool:
    """Whether a line reads build argument `name`: `$NAME`, `${NAME...}`; a RUN line sees build arguments as
    environment variables, so PowerShell's `$ENV:NAME` and cmd's `%NAME%` too (Windows images' `SHELL
    ["powershell.exe"]`, RAPIDS' windows.Dockerfile; tp41)."""
    read = re.compile(rf"\$\{{?(?:env:)?{name}(?!\w)|%{name}%", re.I)
    return any(read.search(ln) for ln in lines)


def _stage_arg_names(instructions: list[dict], at: int, end: int) -> list[str]:
    """The names the ARGs of the stage holding instruction `at` declare (the stage ends at 0-based line `end`)."""
    start = max((j for j in range(at + 1) if instructions[j]["instruction"] == "FROM"), default=0)
    return [ins["value"].strip().partition("=")[0].strip() for ins in instructions[start:]
            if ins["instruction"] == "ARG" and ins["startline"] < end]


# a value made only of other variables' expansions (`${CUDA_MAJOR}.${CUDA_MINOR}`, `${CUDA_VERSION:-${CUDA}}`)
_PASSED_ON_RE = re.compile(r"(?:\$\{?\w+(?::?[-=+][^}]*\}?)?\}?[.\-_]?)+")


def _build_settings(col: Collector, m, words: list[str], lines: list[str], first: int,
                    inherited: Collection[str] = ()) -> None:
    """`ARG CUDA_VERSION=12.4.1`, `ENV PYTORCH_CUDA_VERSION=cu126`, `ARG K2_VERSION=1.24.4+cuda12.1.torch2.4.1`,
    `ARG TRANSFORMER_ENGINE_CUDA_ARCHS=100a`: build parameters read as settings. The CUDA version ones pick the
    base image and packages, whose lines have their own findings: information here. A name the environment rules
    report already (TORCH_CUDA_ARCH_LIST) is theirs. `inherited`: the ARGs given a value before the first FROM, which
    a stage's bare `ARG NAME` only brings into scope with that value (Dockerfile reference, "Understand how ARG and
    FROM interact"): the value's line is the setting, the re-declaration none (NeMo-Curator's `ARG CUDA_VER=12.5.1`
    then `ARG CUDA_VER` after `FROM`; lead, session 41, project test104)."""
    for word in words:
        name, sep, value = word.partition("=")
        # `ENV CUDA_VERSION=${CUDA_VERSION}`: the build argument passed on to the image's environment (t15g)
        # ... or put together from its parts (`ARG CUDA_VERSION=${CUDA_MAJOR_VERSION}.${CUDA_MINOR_VERSION}`, t22f)
        # (tp41: quoted, with a default that is another argument, `ENV CUDA_VERSION="${CUDA_VERSION:-${CUDA}}"`,
        # RAPIDS' devcontainers; and the shortened `CUDA_VER`, as configs read it since tp40)
        passed = "CUDA" in name.upper() and name.upper().endswith(("_VERSION", "_VER")) \
            and _PASSED_ON_RE.fullmatch(value.strip("\"'"))
        # the parts of a CUDA version (`ARG CUDA_MAJOR_VERSION=12`, `ARG CUDA_PKG_VERSION=${...}-${...}`, t22f):
        # read as CUDA_VERSION here only, where they are set (a shell test of them is a gate, not a setting)
        key = "cuda_version" if re.fullmatch(r"CUDA_[A-Z]+_VERSION", name.upper()) else name.lower()
        if NCCL_VERSION_NAME_RE.fullmatch(name.upper()):
            # `ARG NCCL_VERSION=2.28.3-1`, `ENV NCCL_VERSION=2.8.3-1+cuda10.1`: the NCCL release a build clones or
            # installs (tp38); its `+cuda10.1` local part names the CUDA it was built for, the name says NCCL
            key, value = name.lower(), value.split("+", 1)[0]
        setting = m.match_setting(key, value) if sep and value and ("$" not in value or passed) else None
        bare_version = not sep and name not in inherited and re.fullmatch(r"CUDA|(?:\w+_)?CUDA_VER(?:SION)?(?:_\w+)?",
                                                                          name.upper()) is not None
        if bare_version:
            # `ARG CUDA` / `ARG CUDA_VERSION` without a default (alphafold, raster-vision; t35a): the CUDA version
            # the build command passes, which the FROM line or the installs use (not a switch: `ARG USE_CUDA`);
            # also one named for what it feeds (`ARG CUDA_VERSION_FOR_COMFY`, worker-comfyui; tp48a)
            setting = m.match_setting("cuda_version", "")
        if setting is None and sep and value and name.upper().startswith("NV_"):
            # NVIDIA's CUDA image package variables (`NV_CUDNN_PACKAGE=libcudnn9-cuda-12=${NV_CUDNN_VERSION}`):
            # the name says what it is whatever the value reads (rules/project_nvidia_tools_images.yaml, NPU072)
            setting = m.match_setting(name.lower(), value)
        if setting is None or not (name.endswith(("_VERSION", "_VER")) or bare_version
                                   or col.engine.compiled.match_env(name) is None):
            continue
        if setting.code in SCHEDULER_REQUESTS:
            # `ENV USE_GPU=true`, `ARG GPUS=1`: an image's own variable asks no scheduler for GPUs (a launcher's
            # `use_gpu: true` key does); the app's code that reads it is where the device is chosen (lead decision
            # 47; project test114's Orpheus-FastAPI images, labelled `none`; tp44a), as configs' environment entries
            continue
        number = next((i for i, ln in enumerate(lines) if name in ln), 0)
        version = setting.code == "NPU018"
        nccl = setting.name == "nccl-source-build"
        col.add(setting, f"{name}={value}" if sep else name, first + number, lines[number].find(name) + 1,
                severity="info" if version or nccl else None,
                note=" (a build argument: the CUDA version this image is built for)" if version else
                " (a build argument: the NCCL release this image builds or installs)" if nccl else "")


_TRAILING_ESCAPE_RE = re.compile(r"\\[ \t]+$")


def _run_line(text: str, continued: bool) -> str:
    """A line of a shell-form RUN as Docker hands it to the shell: a comment line inside the continuation
    (`uv pip install \\` / `    # torch (1.0GiB)` / `    torch==2.7.0+cu128 \\`) is dropped by Docker before the
    shell sees it (kept, the shell would read it as the end of the command; a lone `\\` stands in for it), and blanks after the closing `\\`
    still continue the line in Docker (the shell would read `\\ ` as an escaped blank that ends the command)."""
    if continued and text.lstrip().startswith("#"):
        return "\\"            # the line dropped, the continuation kept (line numbers stay where they are)
    return _TRAILING_ESCAPE_RE.sub("\\\\", text)


# BuildKit heredocs (Dockerfile 1.4): `RUN <<EOF` runs the lines up to `EOF` as a script; `RUN python3 <<EOF`
# (a command before it) feeds them to that command, as the shell's own heredoc does
_HEREDOC_RE = re.compile(r"<<(-?)\s*([\"']?)(\w+)\2")


def _heredoc(lines: list[str], shell_lines: list[str], first: int, last: int, here: re.Match) -> int:
    """Copy a heredoc RUN into shell_lines with its lines where they are; returns its terminator's line (0-based)."""
    word = here.group(3)
    end = next((n for n in range(last + 1, len(lines)) if lines[n].strip() == word), len(lines) - 1)
    head = lines[first]
    at = head.upper().find("RUN")
    command = head[at + 3:]
    if command.strip().startswith("<<"):
        # the body is the script: blank `RUN <<EOF` and the terminator, read the body as shell lines
        shell_lines[first] = ""
        for n in range(first + 1, end):
            shell_lines[n] = lines[n]
    else:
        shell_lines[first] = head[:at] + "   " + command
        for n in range(first + 1, end + 1):
            shell_lines[n] = lines[n]
        _blank_buildkit_flags(shell_lines, first, first)
    return end


_BUILDKIT_FLAG_RE = re.compile(r"\s*--(?:mount|network|security)=\S*")


def _blank_buildkit_flags(shell_lines: list[str], first: int, last: int) -> None:
    """`RUN --mount=type=secret,... \\` (also over continuation lines) then the command: the leading flags are
    Docker's, not the shell's; blank them, and the `\\` of lines that held only flags, so the command reads as
    written."""
    for n in range(first, last + 1):
        text, at = shell_lines[n], 0
        while (flag := _BUILDKIT_FLAG_RE.match(text, at)) is not None:
            at = flag.end()
        rest = text[at:].strip()
        if rest and rest != "\\":
            shell_lines[n] = " " * at + text[at:]
            return
        shell_lines[n] = " " * len(text)      # only flags (and the continuation) on this line


def _parse(text: str) -> list[dict]:
    import io

    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
    return parser.structure


def _held_commands(col: Collector, words: list[str], first: int, last: int) -> None:
    """`ENV TORCH_COMMAND="pip install torch==2.0.1+cu118 torchaudio --extra-index-url .../whl/cu118"`, run by a later
    `RUN python -m $TORCH_COMMAND` (audiocraft_plus; stable-diffusion-webui's launcher reads the same variable): the
    value is a command line, read by the shell reader in its place (as configs.py reads a compose / CI environment
    entry named `*_COMMAND`; tp43, project test110)."""
    for word in words:
        name, eq, value = word.partition("=")
        if not eq or not value.strip() or not COMMAND_VARIABLE_RE.fullmatch(name):
            continue
        for n in range(first, min(last + 1, len(col.lines))):
            at = col.lines[n].find(value)
            if at >= 0:
                scan_shell(col, "\n" * n + " " * at + value)
                break
