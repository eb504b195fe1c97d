"""A Makefile's own CUDA build settings (t15f, tuned on project split tuned_t15f: ThunderKittens' kernel Makefiles,
`GPU := B200`, `SRC := x.cu`, `NVCCFLAGS := -lcublas -lcublasLt`). auditor/project/makefile.py resolves the `make`
calls of other files against a Makefile; this reader reports the Makefile's own lines.

Read with the same GNU make syntax rules as makefile.py: comments (`#`, not `\\#`), backslash continuation lines
(each word keeps its own physical line), variable assignments of every flavour (`=`, `:=`, `::=`, `?=`, `+=`, with
`override` / `export`), target-specific assignments (`train: NVCCFLAGS += -O3`), tab-indented recipe lines and
`define` blocks (skipped). Nothing is expanded or run. Each fact is a `make.<what>` setting matched against the
catalogue (rules/project_build.yaml), on its own line:

- `make.var`: the name of an assigned variable (`NVCC`, `NVCCFLAGS`, `CUDA_HOME`, `GPU_COMPUTE_CAPABILITY`);
- `make.word`: each word of an assigned value or of a recipe line (`kernel.cu`, `-lcublas`, `-arch=sm_90a`,
  `/usr/local/cuda/include`);
- `make.gpu`: the value of a variable that names the GPU the build targets (`GPU := H100`), when the value is an
  NVIDIA GPU model;
- `make.recipe`: `nvcc` when a recipe line runs nvcc (`$(NVCC)`, `nvcc`).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from auditor.findings import FileResult
from auditor.project.hits import Collector, cuda_member_siblings, decode_text, lower_cuda_member, matchers
from auditor.project.makefile import _ASSIGN_RE, _strip_comment

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

_WORD_RE = re.compile(r"[^\s'\"`;()|&<>]+")
_GPU_VAR_RE = re.compile(r"^(?:\w+_)?(?:GPU|GPU_TYPE|GPU_ARCH|TARGET_GPU|ARCH)$", re.I)
# NVIDIA data-centre and consumer GPU model names as a build names its target (`GPU := H100`, `ARCH ?= 4090`)
_NVIDIA_MODEL_RE = re.compile(r"^(?:[AHBLV]\d{2,3}[A-Z]?|GB\d{3}|GH\d{3}|RTX\d{4}|[34]0[6-9]0|50[6-9]0|L40S?|T4|V100|"
                              r"A100|H100|H200|B100|B200)$", re.I)
_NVCC_RE = re.compile(r"(?<![\w.-])(?:nvcc(?:\.exe)?|\$[({]NVCC[)}])(?![\w.-])", re.I)


def _physical(text: str) -> list[tuple[int, str, bool, bool]]:
    """(line number, text without its comment, is it a recipe line, does the next line continue it) for every
    physical line; a continuation line belongs to the kind of the line it continues."""
    out = []
    recipe = False
    continued = False
    for n, line in enumerate(text.splitlines(), 1):
        if not continued:
            recipe = line.startswith("\t")
        # `#` in a recipe goes to the shell: a comment where it starts a word (`rm -f *.o  # nvcc leaves objects`)
        body = re.split(r"(?:^|(?<=\s))#", line, maxsplit=1)[0] if recipe else _strip_comment(line)
        continued = line.endswith("\\") and not line.endswith("\\\\")
        out.append((n, body[:-1] if continued else body, recipe, continued))
    return out


def analyze_makefile(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, err = decode_text(data, rel)
    if err is not None:
        return FileResult(rel, error=err)
    assert text is not None
    col = Collector(engine, rel, text)
    m = matchers(engine)

    def hit(key: str, value: str, line: int, column: int) -> bool:
        rule = m.match_setting(f"make.{key}", value.lower())
        if rule is not None:
            col.add(rule, value, line, column)
        return rule is not None

    def words(line: int, body: str, start: int) -> None:
        for w in _WORD_RE.finditer(body, start):
            word = w.group(0).rstrip(",")
            if word and not hit("word", word, line, w.start() + 1) and "=" in word[1:]:
                # `-DCMAKE_CUDA_ARCHITECTURES=90`, `GPU_COMPUTE_CAPABILITY=80` on a recipe line
                name, _, value = word.partition("=")
                if value:
                    hit("word", value, line, w.start() + len(name) + 2)

    in_define = False
    value_line = False
    for n, body, recipe, continued in _physical(text):
        stripped = body.strip()
        if in_define:
            in_define = not stripped.startswith("endef")
            continue
        if recipe:
            nvcc = _NVCC_RE.search(body)
            if nvcc:
                hit("recipe", "nvcc", n, nvcc.start() + 1)
            words(n, body, 0)
            continue
        if value_line:                                     # a continuation of an assignment's value
            words(n, body, 0)
            value_line = continued
            continue
        if stripped.startswith("define ") or stripped == "define":
            in_define = True
            continue
        target_specific = re.match(r"^[^=:#]+:(?![:=])\s*(.*)$", stripped)
        assign = _ASSIGN_RE.match(stripped) or (target_specific and _ASSIGN_RE.match(target_specific.group(1)))
        if not assign or ":" in assign.group(1):
            continue
        name, value = assign.group(1), assign.group(3)
        at = body.find(name)
        hit("var", name, n, at + 1)
        offset = body.find(value.strip(), at + len(name)) if value.strip() else len(body)
        if _GPU_VAR_RE.match(name) and _NVIDIA_MODEL_RE.match(value.strip()):
            hit("gpu", value.strip(), n, offset + 1)
        words(n, body, offset)
        value_line = continued
    _recipe_commands(col, text)
    result = col.done()
    spans = _cuda_member_spans(_physical(text))
    if spans:
        result.findings = lower_cuda_member(result.findings, spans, "build setting")
    return result


# a conditional's opening line and the variables its test reads (`ifeq ($(strip $(USE_CUDA)),1)`, `ifdef USE_HIP`)
_IF_RE = re.compile(r"^(ifeq|ifneq|ifdef|ifndef)\b(.*)$")
_TESTED_RE = re.compile(r"\$[({]\s*(?:strip\s+\$[({]\s*)?([A-Za-z_][\w.-]*)|^\s*([A-Za-z_][\w.-]*)\s*$")
# the two GPU compilers as a member word of a variable's name (`NVCC_FLAGS` beside `HIPCC_FLAGS`)
_COMPILER_WORDS = (("nvcc", "cuda"), ("hipcc", "hip"))


def _member_key(name: str) -> str:
    key = name.lower()
    for compiler, backend in _COMPILER_WORDS:
        key = re.sub(rf"(?<![a-z0-9]){compiler}(?![a-z0-9])", backend, key)
    return key


def _cuda_member_spans(lines: list[tuple[int, str, bool, bool]]) -> list[tuple[int, int, str, list[str]]]:
    """The CUDA members of a Makefile that builds per backend (tq54b, heldout70: FlexFlow.mk's `ifeq ($(strip
    $(USE_CUDA)),1)` arm beside its `ifeq ($(strip $(USE_HIP)),1)` arm, `FF_CUDA_SRC` beside `FF_HIP_SRC`,
    `NVCC_FLAGS` beside `HIPCC_FLAGS`): the user picks the backend by a switch the file tests, so its CUDA arm and the
    CUDA variables beside another backend's are one member of a per-backend build, which a port keeps and adds an
    Ascend member beside (policy (k)). Only where the file tests a switch of another backend: CUDA and CPU source
    lists built together are no such set. (first line, last line, name, siblings) for `lower_cuda_member`."""
    tested: list[str] = []               # the variables the conditionals test
    arms: list[tuple[int, int, str]] = []  # (first line, last line, tested variable) of each positive arm
    stack: list[tuple[int, str | None]] = []
    assigned: list[tuple[int, int, str]] = []  # (first line, last line, variable) of each assignment
    value = None                          # the assignment a continuation line belongs to
    for n, body, recipe, continued in lines:
        if value is not None:
            assigned[value] = (assigned[value][0], n, assigned[value][2])
            value = value if continued else None
            continue
        stripped = body.strip()
        opening = None if recipe else _IF_RE.match(stripped)
        if opening is not None:
            names = [a or b for a, b in _TESTED_RE.findall(opening.group(2)) if a or b]
            tested.extend(names)
            stack.append((n, names[0] if names and opening.group(1) in ("ifeq", "ifdef") else None))
        elif not recipe and stripped.startswith(("else", "endif")) and stack:
            first, name = stack.pop()
            if name is not None:
                arms.append((first, n, name))
            if stripped.startswith("else"):
                stack.append((n, None))
        elif not recipe:
            assign = _ASSIGN_RE.match(stripped)
            if assign is not None and ":" not in assign.group(1):
                assigned.append((n, n, assign.group(1)))
                value = len(assigned) - 1 if continued else None
    switches = {_member_key(name): name for name in tested}
    if not any(cuda_member_siblings(key, switches) for key in switches):
        return []
    keys = {_member_key(name): name for _, _, name in assigned}
    spans = []
    for first, last, name in arms + assigned:
        siblings = cuda_member_siblings(_member_key(name), switches if (first, last, name) in arms else keys)
        if siblings:
            spans.append((first, last, name, sorted({switches.get(s) or keys[s] for s in siblings})))
    return spans


# a make reference to a variable (`$(PYTHON)`, `$(CUDA_HOME)`), which make expands before the shell runs the line
_MAKE_VAR_REF_RE = re.compile(r"\$\(([A-Za-z_][\w.-]*)\)")
# a make assignment on a tab-indented line (inside a conditional): make's operators, or `=` after a space, which a
# shell assignment (`CUDA_VISIBLE_DEVICES=0 python ...`) never has
_MAKE_ASSIGNMENT_RE = re.compile(r"(?:(?:override|export)\s+)?[A-Za-z_][\w.-]*(?:\s*(?::::?=|::?=|\?=|\+=|!=)|\s+=)")


def _recipe_commands(col: Collector, text: str) -> None:
    """A recipe's lines are shell commands make runs (`CUDA_VISIBLE_DEVICES=0 python train.py`, `pip install torch
    --index-url .../cu121`): read by the shell reader in place, the rest of the file blanked, make's own syntax
    turned into the shell's at the same width (the `@` / `-` / `+` line prefixes, `$$` for the shell's `$`,
    `$(VAR)` as a plain word of the same width: make expands it, so `$(CUDA_TARGETS)` is no environment variable the
    CUDA stack reads; a tab-indented make assignment is skipped). A line the Makefile pass above already reports on
    keeps its findings only (`nvcc` there is NPU338's compile, not also the shell's NVIDIA tool)."""
    from auditor.project.shell import scan_shell

    shell_lines = []
    recipe = continued = False
    for line in text.splitlines():
        if not continued:
            recipe = line.startswith("\t")
        continued = line.endswith("\\") and not line.endswith("\\\\")
        if not recipe:
            shell_lines.append("")
            continue
        prefix = re.match(r"\t[ \t@+-]*", line) if not shell_lines or not shell_lines[-1].endswith("\\") else None
        body = line if prefix is None else " " * prefix.end() + line[prefix.end():]
        if _MAKE_ASSIGNMENT_RE.match(body.strip()):
            shell_lines.append("")      # `\tNVCCFLAGS += -arch=...` inside an `ifdef`: make's assignment, no command
            continue
        shell_lines.append(_MAKE_VAR_REF_RE.sub(lambda ref: "_" + ref.group(1) + "__", body.replace("$$", " $")))
    if not any(shell_lines):
        return
    reported = {f.line for f in col.result.findings}
    first = len(col.result.findings)
    scan_shell(col, "\n".join(shell_lines))
    col.result.findings[first:] = [f for f in col.result.findings[first:] if f.line not in reported]
