#!/usr/bin/env python3
"""Generate rules/kernel_mmcv_npu_ops.yaml: the ops of mmcv's compiled `_ext` library that mmcv implements for the
NPU (NPU853 on their calls, NPU854 on the `ext_loader.load_ext('_ext', [...])` line that asks for them).

Source (read as data from a git clone of open-mmlab/mmcv, never built or imported), at the newest release tag
(default v2.2.0; a release is what a user installs, `main` may hold NPU ops no release has yet):
- mmcv/ops/csrc/pytorch/npu/*.cpp: every `REGISTER_NPU_IMPL(<impl>, <npu function>)`, the device registry entries
  mmcv's NPU build adds, and the `*_npu` functions defined there (an op may call one directly: `nms_rotated_npu`);
- mmcv/ops/csrc/pytorch/pybind.cpp: every `m.def("<op>", &<function>, ...)`, the functions `_ext` exports;
- mmcv/ops/csrc/pytorch/*.cpp: the function bodies, to follow each exported function to the `*_impl` functions it
  dispatches through (`nms` -> `nms_impl`, `ms_deform_attn_forward` -> `ms_deform_attn_impl_forward`).

An exported op is built for the NPU when its function reaches a registered NPU implementation. The NPU
implementations registered on the clone's HEAD but in no release are recorded too (`main_only`) and named in the
rule's source note: for those ops NPU323 / NPU359 keep their error, unverified against mmcv's main.

    python rules/gen/mmcv_npu_ops.py [--from-sources [--repo PATH] [--ref TAG]]
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from sources import RULES_DIR, Pins, SourceError, generator_args, run_main, write_outputs, yaml_text

OUT = RULES_DIR / "kernel_mmcv_npu_ops.yaml"
DEFAULT_REPO = Path("/work/.mirror/open-mmlab+mmcv/repo")
DEFAULT_REF = "v2.2.0"
CSRC = "mmcv/ops/csrc/pytorch"
_REGISTER = re.compile(r"\bREGISTER_NPU_IMPL\s*\(\s*([A-Za-z_]\w*)")
_EXPORT = re.compile(r"\bm\.def\s*\(\s*\"([A-Za-z_]\w*)\"\s*,\s*&\s*([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# a function definition's head at the file's top level: `<type> name(<params>) {`
_DEF_HEAD = re.compile(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:const\s*)?\{$")


class Clone:
    """Files of a git clone at one ref, read with `git show` (never checked out)."""

    def __init__(self, repo: Path, ref: str) -> None:
        self.repo, self.ref = repo, ref
        self.commit = self._git("rev-parse", f"{ref}^{{commit}}").strip()
        self.head = self._git("rev-parse", "HEAD").strip()

    def _git(self, *args: str) -> str:
        git_dir = self.repo if (self.repo / "HEAD").is_file() else self.repo / ".git"
        proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SourceError(f"git {' '.join(args)} in {self.repo}: {proc.stderr.strip()[:200]}")
        return proc.stdout

    def files(self, folder: str, ref: str | None = None) -> list[str]:
        out = self._git("ls-tree", "--name-only", f"{ref or self.ref}:{folder}")
        return [f"{folder}/{name}" for name in out.split() if name.endswith(".cpp")]

    def text(self, path: str, ref: str | None = None) -> str:
        return self._git("show", f"{ref or self.ref}:{path}")


def _code_only(text: str, keep_strings: bool = False) -> str:
    """The C++ text without comments and (unless keep_strings) string / character literals, which are kept as empty
    quotes; lines kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif two == "/*":
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, n if j < 0 else j))
            i = n if j < 0 else j + 2
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1] if keep_strings else quote * 2)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def function_calls(text: str) -> dict[str, set[str]]:
    """{function defined at the top level of a C++ file: the identifiers its body names}."""
    code = _code_only(text)
    out: dict[str, set[str]] = {}
    depth, start, head = 0, 0, None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                m = _DEF_HEAD.search(code[max(0, i - 4000):i + 1].replace("\n", " "))
                head, start = (m.group(1) if m else None), i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0 and head is not None:
                out.setdefault(head, set()).update(_IDENT.findall(code[start:i]))
                head = None
    return out


def npu_impls(clone: Clone, ref: str | None = None) -> set[str]:
    """The implementations mmcv's NPU sources provide: the `REGISTER_NPU_IMPL` entries, and the functions the npu/
    files define that an op calls directly under `#ifdef MMCV_WITH_NPU` (`nms_rotated` -> `nms_rotated_npu`)."""
    out: set[str] = set()
    for path in clone.files(f"{CSRC}/npu", ref):
        text = clone.text(path, ref)
        out.update(m.group(1) for m in _REGISTER.finditer(_code_only(text)))
        out.update(name for name in function_calls(text) if name.endswith("_npu"))
    return out


def npu_built_ops(clone: Clone, ref: str | None = None) -> list[str]:
    """The `_ext` ops (pybind names) whose function reaches an NPU implementation, at `ref` (default: the release)."""
    registered = npu_impls(clone, ref)
    if not registered:
        raise SourceError(f"no REGISTER_NPU_IMPL under {CSRC}/npu at {ref or clone.ref}: the layout changed")
    calls: dict[str, set[str]] = {}
    for path in clone.files(CSRC, ref):
        for name, names in function_calls(clone.text(path, ref)).items():
            calls.setdefault(name, set()).update(names)
    exported = {m.group(1): m.group(2) for m in _EXPORT.finditer(
        _code_only(clone.text(f"{CSRC}/pybind.cpp", ref), keep_strings=True))}
    if not exported:
        raise SourceError(f"no m.def(...) in {CSRC}/pybind.cpp at {clone.ref}: the layout changed")

    def reaches(function: str) -> bool:
        seen, todo = set(), [function]
        while todo:
            name = todo.pop()
            if name in registered:
                return True
            if name not in seen:
                seen.add(name)
                todo.extend(n for n in calls.get(name, ()) if n in calls or n in registered)
        return False

    return sorted(op for op, function in exported.items() if reaches(function))


def outputs(pins: Pins, repo: Path = DEFAULT_REPO, ref: str = DEFAULT_REF) -> dict[Path, str]:
    clone = Clone(repo, ref) if pins.record else None
    if pins.record:
        pins.original("mmcv", f"open-mmlab/mmcv@{clone.commit}", ref, commit=clone.commit,
                      url="https://github.com/open-mmlab/mmcv", head=clone.head)
    origin = pins.data["originals"]["mmcv"]
    ops = pins.fact("npu_built_ops", lambda: npu_built_ops(clone))
    main_only = pins.fact("main_only", lambda: sorted(set(npu_built_ops(clone, clone.head)) - set(ops)))
    version, commit = origin["version"], origin["commit"]
    qualnames = [f"mmcv._ext.{op}" for op in ops]
    note = (f"generated by rules/gen/mmcv_npu_ops.py from open-mmlab/mmcv {version} (commit {commit}): the `_ext` "
            f"ops whose pybind.cpp function reaches a REGISTER_NPU_IMPL of mmcv/ops/csrc/pytorch/npu/ ({len(ops)} "
            f"ops). Built for the NPU on main ({origin.get('head', '?')}) but in no release: {', '.join(main_only)}; "
            "their NPU323 / NPU359 errors are unverified against main.")
    install = ("install mmcv built for Ascend (MMCV_WITH_OPS=1 FORCE_NPU=1 python setup.py develop, on a host with "
               "CANN and torch_npu)")
    rules = [{
        "code": "NPU853", "name": "mmcv-npu-built-op", "category": "kernel", "severity": "info", "effort": "low",
        "fix": "none",
        "message": ("`{symbol}` is an op of mmcv's compiled library that mmcv implements for the NPU: it runs on "
                    "Ascend only with an mmcv (>= 1.7.0) built with its NPU ops (`MMCV_WITH_OPS=1 FORCE_NPU=1`), not "
                    "with a CUDA build of mmcv"),
        "substitution": f"{install}; the calls stay as they are",
        "source_note": note,
        "match": [{"qualname": qualnames}],
        "doc": {
            "what": ("Calls of mmcv's compiled ops that mmcv implements for the NPU (`ext_module.ms_deform_attn_forward"
                     "(...)` in BEVFormer and its copies: TPVFormer, VoxFormer, SurroundOcc), through the module "
                     "mmcv's loader returns (NPU854 reports the loading line)."),
            "why": ("The op is a kernel of mmcv's compiled `_ext` library; an Ascend host runs it through mmcv's NPU "
                    "implementation, which exists only in an mmcv built for Ascend (mmcv >= 1.7.0 with FORCE_NPU=1, "
                    "Ascend's PyTorch migration guide, \"MMCV\"). Code that pins an older mmcv-full (BEVFormer's "
                    "1.4.0) or installs a CUDA wheel does not load the op there."),
            "use_instead": "An mmcv built with its NPU ops on the Ascend host; no code change.",
        },
        "examples": {
            "flag": ["from mmcv.utils import ext_loader\next_module = ext_loader.load_ext(\n"
                     "    '_ext', ['ms_deform_attn_backward', 'ms_deform_attn_forward'])\n\n"
                     "def forward(value, shapes, level_start_index, sampling_locations, attention_weights, "
                     "im2col_step):\n"
                     "    return ext_module.ms_deform_attn_forward(value, shapes, level_start_index, "
                     "sampling_locations,\n"
                     "                                             attention_weights, im2col_step=im2col_step)\n"],
            "ok": ["from mmcv.utils import ext_loader\n"
                   "ext_module = ext_loader.load_ext('_ext', ['correlation_forward'])    # NPU359's: no NPU "
                   "implementation\n",
                   "from .loader import load_ext\n\n"
                   "ops = load_ext(\"_ext\", [\"ms_deform_attn_forward\"])    # a project's own loader, not mmcv's\n"
                   "ops.ms_deform_attn_forward(value)\n"],
        },
    }, {
        "code": "NPU854", "name": "mmcv-load-npu-built-op", "category": "kernel", "severity": "info",
        "effort": "low", "fix": "none",
        "message": ("`{symbol}` loads ops of mmcv's compiled library that mmcv implements for the NPU: they run on "
                    "Ascend only with an mmcv (>= 1.7.0) built with its NPU ops (`MMCV_WITH_OPS=1 FORCE_NPU=1`), not "
                    "with a CUDA build of mmcv"),
        "substitution": f"{install}; the code stays as it is",
        "source_note": note,
        "match": [{"qualname": ["mmcv.utils.ext_loader.load_ext"]}],
        "when": {"arg": {"pos": 1, "kw": "funcs", "values": list(ops)}},
        "doc": {
            "what": ("mmcv's loader of its compiled ops (`ext_module = ext_loader.load_ext('_ext', "
                     "['ms_deform_attn_backward', 'ms_deform_attn_forward'])`) asked for an op mmcv implements for "
                     "the NPU; the calls are NPU853's."),
            "why": ("The ops need an mmcv built for Ascend (mmcv >= 1.7.0 with FORCE_NPU=1); a CUDA build does not "
                    "load there."),
            "use_instead": "An mmcv built with its NPU ops on the Ascend host; no code change.",
        },
        "examples": {
            "flag": ["from mmcv.utils import ext_loader\next_module = ext_loader.load_ext(\n"
                     "    '_ext', ['ms_deform_attn_backward', 'ms_deform_attn_forward'])\n"],
            "ok": ["from mmcv.utils import ext_loader\n"
                   "ext_module = ext_loader.load_ext('_ext', ['correlation_forward'])    # NPU359's: no NPU "
                   "implementation\n",
                   "from .loader import load_ext\n\n"
                   "ops = load_ext(\"_ext\", [\"ms_deform_attn_forward\"])    # a project's own loader, not mmcv's\n"],
        },
    }]
    header = ("# Generated by rules/gen/mmcv_npu_ops.py: do not edit by hand; rerun the script.\n"
              f"# mmcv's compiled ops that mmcv {version} implements for the NPU (NPU853 calls, NPU854 the loading "
              "line).\n# Codes NPU853 / NPU854 belong to tk38 (hand-written then); generated from mmcv's source by "
              "tk39.\n")
    return {OUT: yaml_text(header, {"family": "kernel", "rules": rules})}


def main() -> None:
    ap = generator_args(__doc__.splitlines()[0], wheel=False)
    ap.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="git clone of open-mmlab/mmcv (--from-sources)")
    ap.add_argument("--ref", default=DEFAULT_REF, help="the release tag to read (--from-sources)")
    args = ap.parse_args()
    pins = Pins("mmcv_npu_ops", record=args.from_sources)
    write_outputs(outputs(pins, args.repo, args.ref), pins)


if __name__ == "__main__":
    run_main(main)
