"""One import summary per file, one project pass over them (shared by shim_graph.py and crossfile.py).

Two project-level features follow imports across a tree: the transfer_to_npu import graph (shim_graph.py: which
modules and launch scripts run under the shim) and the cross-file pass (crossfile.py: uses, in other files, of the
project's own CUDA-specific code). Both used to read files again on every run. Now:

1. Per file, in the worker (`file_summary`, kept in the file's cache entry, cache FORMAT 4; 5 adds `triton`), one dict:
   - crossfile's part (`defs`, `imports`, `tech`: crossfile.summarize, from the `ast` tree the engine built);
   - `facts`, the import graph's part, read from the raw bytes exactly as the graph always read them (a line
     scan, no parse, so a file `ast` rejects still has its imports): for a `.py` file that mentions `import`,
     `load` (module as written, imported names, at load time), `main` (an `if __name__ == "__main__":` block) and
     `mark` (the text names transfer_to_npu or a megatron_adaptor); for a shell script, `launch` (the .py paths
     its launcher lines start, in order) and `ascend` (it sets up Ascend itself: CANN's set_env.sh, an env_npu
     script, NPUS_PER_NODE, ASCEND_RT_VISIBLE_DEVICES, exported ASCEND_* / HCCL_* settings), and for
     unreached_defs, which used to read every script again, `modules` (what its `-m` lines run), `trains` (a
     deepspeed / torchrun / accelerate launch line) and `scripts` (the shell script names it mentions). A file
     without the word `import` has `facts` = {} (no edges).
   - `tree`, for a `.py` file (tree_facts, FORMAT 6): the operators it defines with torch.library (`ops`), the
     namespaces `getattr(torch.ops, "ns")` names by line (`getattr`) and the config folders it reads as a Hydra
     entry of an Ascend adaptor (`hydra`), whether it imports transfer_to_npu (`shim`), read by
     opnamespaces.python_defined_ops / literal_namespaces, npu_native.apply_hydra_configs and
     backends.transfer_scopes, which used to read the tree's Python files again; and for a file of any kind
     with findings, `framework` (what its imports say: frameworks.framework_fact, read by apply_other_frameworks);
   - `triton`, for a `.py` file (backends.triton_facts): does it import Triton, does it hold a Triton-Ascend
     marker, and for a file with Triton findings what it imports; read by backends.triton_ascend_files and
     crossfile's Triton modules through `ProjectImports.triton`, so neither reads the tree's files again.
2. Per run (`ProjectImports`, built once from the results after every per-file result is in, cached or not):
   the file list, each file's summary, and the two module namings the features use (they differ on purpose: the
   graph names a file by its path, `src/` dropped, so that an entry script in a folder without `__init__.py`
   still reaches `pkg.mod`; crossfile names by packages, as the importing script's `sys.path` sees them).

Neither feature reads a file whose summary it has. The exceptions: a result without `facts` (a file the worker did
not read: over --max-file-size, a FIFO; or a caller that passes no summaries) is read as before; and crossfile reads
an importer of the project's CUDA-specific code to place its uses, once per change of what that importer imports
(the uses it found are kept in the importer's summary, `uses`, keyed by what it imports, so a warm run with nothing
changed reads nothing, and a changed module makes exactly its importers be read again). guarded_modules.py keeps
its answer the same way (`guarded`: is each import of a module guarded by `except ImportError`).

A pass that needs a file's text and tree (crossfile's uses, guarded_modules, imported_gates) asks
`ProjectImports.source(rel)`: one read, one PEP 263 decode and one parse per file and run, shared by the passes.
"""
from __future__ import annotations

import ast
import io
import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from auditor.project import ASCEND_SCRIPT
from auditor.source import MAX_FILE_BYTES, SourceError, read_source
from auditor.static.module_paths import module_names

FACTS = "facts"
TRITON = "triton"          # a Python file's Triton facts (backends.triton_facts)
TREE = "tree"              # a Python file's facts for other tree passes (tree_facts)
CALLS = "calls"            # a Python file's device / dtype defaults and call shapes (call_defaults.default_facts)

# `from x import (` with the names on the next lines (MindSpeed's features_manager/__init__.py) loads x too (t11e)
_IMPORT_LINE = re.compile(r"^([ \t]*)(?:import[ \t]+([\w., \t]+)|from[ \t]+(\.*[\w.]*)[ \t]+import(?:[ \t]*\([ \t]*|[ \t]+)"
                          r"([\w., \t*]*))",
                          re.M)
_BLOCK = re.compile(r"^([ \t]*)(def|async[ \t]+def|class|if|elif|else|try|except|finally|with|for|while)\b")
_MAIN = re.compile(r"^if[ \t]+__name__[ \t]*==[ \t]*['\"]__main__['\"]", re.M)
_LAUNCHED = re.compile(r"(?:^|[\s=\"'])((?:[\w.${}-]*/)*)([\w.-]+\.py)\b")
_LAUNCHER = re.compile(r"\b(?:python[\d.]*|torchrun|torch\.distributed\.(?:run|launch)|deepspeed|msrun)\b")
_DEFS = ("def", "async", "class")


def _indent(line: str, stripped: str) -> int:
    lead = line[:len(line) - len(stripped)]
    return len(lead) if "\t" not in lead else len(lead.expandtabs())


_NAMES_LINES = 256          # a parenthesised name list read on at most this many lines


def _import_entries(lines: list[str], number: int, load_time: bool, out: list) -> None:
    line = lines[number]
    m = _IMPORT_LINE.match(line)
    if m is None:
        return
    if m.group(2):
        for name in m.group(2).split(","):
            name = name.strip().split()[0] if name.strip() else ""
            if name:
                out.append((name, [], load_time))
    else:
        listed = m.group(4)
        if "(" in line[m.end(3):m.start(4)]:
            # `from . import (` with the names on the next lines, up to `)` (threestudio's `systems/__init__.py`:
            # `from . import (\n    GaussianDreamer,\n)` loads the submodule; tq59b)
            tail = line[m.end(4):].split("#", 1)[0]
            for more in lines[number + 1:number + 1 + _NAMES_LINES]:
                if ")" in tail:
                    break
                tail = more.split("#", 1)[0]
                listed += "," + tail.split(")", 1)[0]
        names = [n.strip().split()[0] for n in listed.split(",") if n.strip()]
        out.append((m.group(3), names, load_time))


def load_time_imports(text: str) -> list[tuple[str, list[str], bool]]:
    """(module, imported names, at load time) for each import statement: `at load time` unless a `def` / `class`
    body holds it (a lazy import runs only when the function is called).

    The graph's reference reading is one pass over every line keeping the stack of open blocks by indentation
    (`_load_time_imports_stack`, kept for the equivalence test). A block line B is on that stack at line L exactly
    when B's indent is below L's and below every counted line between them (a line with indent <= B's pops it); so
    only the lines that name `import` are looked at, and an indented one walks back to the first line of indent 0.
    Same answers on 11,835 files of the bench trees (tests/test_project_imports.py checks tricky spellings), about a
    third of the time (0.80 vs 2.33 CPU s; one regular expression over the text to find the candidate lines was
    slower still, 2.00 s: `^` under re.M is tried at every position)."""
    out: list[tuple[str, list[str], bool]] = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if "import" in line:
            _one_import(lines, number, out)
    return out


def _one_import(lines: list[str], number: int, out: list) -> None:
    line = lines[number]
    stripped = line.lstrip()
    if not stripped.startswith(("import", "from")):
        return
    indent = _indent(line, stripped)
    load_time = True
    if indent:
        low = indent
        for back in range(number - 1, -1, -1):
            prev = lines[back]
            s = prev.lstrip()
            if not s or s[0] == "#":
                continue
            i = _indent(prev, s)
            if i >= low:
                continue
            if not s.startswith(("import", "from")):
                b = _BLOCK.match(prev)
                if b is not None and b.group(2).split()[0] in _DEFS:
                    load_time = False
                    break
            low = i
            if low == 0:
                break
    _import_entries(lines, number, load_time, out)


def _load_time_imports_stack(text: str) -> list[tuple[str, list[str], bool]]:
    """The reference reading (one pass, a stack of open blocks): what `load_time_imports` must equal."""
    out: list[tuple[str, list[str], bool]] = []
    stack: list[tuple[int, bool]] = []         # (indent, is a def/class body)
    lines = text.splitlines()
    for number, line in enumerate(lines):
        stripped = line.lstrip()
        if not stripped or stripped[0] == "#":
            continue
        indent = _indent(line, stripped)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stripped.startswith(("import", "from")):
            _import_entries(lines, number, not any(is_def for _, is_def in stack), out)
            continue
        b = _BLOCK.match(line)
        if b is not None:
            stack.append((indent, b.group(2).split()[0] in _DEFS))
    return out


def _logical_lines(text: str) -> list[str]:
    """A script's commands with their backslash continuations joined (`python -m torch.distributed.run --nnodes=1 \\`
    with the script `graphgpt/train/train_mem.py \\` on the next line: one launch). A comment line is not continued
    (bash reads no continuation in a comment), and inside a continued command it ends the command: the next line is a
    command of its own (`torchrun ... \\` / `# tools/old.py \\` / `tools/train.py` runs torchrun alone, then train.py)."""
    out: list[str] = []
    held = ""
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            if held:
                out.append(held)
                held = ""
            out.append(line)
        elif line.endswith("\\"):
            held += line[:-1] + " "
        else:
            out.append(held + line)
            held = ""
    if held:
        out.append(held)
    return out


def launched_paths(text: str) -> list[list[Any]]:
    """[[literal folders], file name] for each `x.py` a launcher line (`python`, `torchrun`, `deepspeed` ...) of a
    shell script names, in order; `$basepath/` and `${X}/` parts are left out, as the graph matches literal folders."""
    out: list[list[Any]] = []
    for line in _logical_lines(text):
        if line.lstrip().startswith("#") or not _LAUNCHER.search(line):
            continue
        for m in _LAUNCHED.finditer(line):
            folders = [d for d in m.group(1).split("/") if d and "$" not in d and "{" not in d and d != "."]
            out.append([folders, m.group(2)])
    return out


# `python3 -m verl.trainer.main_ppo \`: the module a shell line runs
_SHELL_MODULE = re.compile(r"(?:^|\s)-m\s+([A-Za-z_]\w*(?:\.\w+)*)")
# a distributed training launch at a line's start (after `NAME=value` prefixes)
_TRAINING_LAUNCH = re.compile(rb"^\s*(?:[A-Z_]+=\S*\s+)*(?:deepspeed|torchrun|accelerate\s+launch|python3?\s+-m\s+"
                              rb"torch\.distributed\.(?:launch|run))\b", re.MULTILINE)
# a shell script's file name written anywhere in a text (`bash scripts/train.sh`, `subprocess.run(["x.bash"])`)
SHELL_NAME = re.compile(r"[\w.-]+\.(?:sh|bash)\b")


def shell_facts(data: bytes) -> dict[str, Any]:
    """A shell script's facts (`import_facts`'s, for any script suffix): `launch`, `ascend`, `modules`, `trains`,
    `scripts`."""
    text = data.decode("utf-8", errors="replace")
    modules = {m for line in text.splitlines() if not line.lstrip().startswith("#") for m in _SHELL_MODULE.findall(line)}
    return {"launch": launched_paths(text), "ascend": ASCEND_SCRIPT.search(text) is not None,
            "modules": sorted(modules), "trains": _TRAINING_LAUNCH.search(data) is not None,
            "scripts": sorted(set(SHELL_NAME.findall(text)))}


def import_facts(data: bytes, rel: str) -> dict[str, Any] | None:
    """The import graph's part of a file's summary (see the module docstring), or None for other kinds of file."""
    if rel.endswith(".py"):
        if b"import" not in data:
            return {}
        text = data.decode("utf-8", errors="replace")
        return {"load": load_time_imports(text), "main": _MAIN.search(text) is not None,
                "mark": b"transfer_to_npu" in data or b"megatron_adaptor" in data}
    if rel.endswith(".sh"):
        return shell_facts(data)
    return None


def with_facts(summary: dict[str, Any] | None, data: bytes, rel: str, findings: Sequence[Any] = (),
               tree: ast.AST | None = None, utf8_tree: ast.Module | None = None) -> dict[str, Any] | None:
    """`summary` (crossfile's part, or None) with the import graph's facts added, and for a Python file its Triton
    facts (backends.triton_facts; `findings`, the file's own, say whether it has Triton findings) and its tree-pass
    facts (tree_facts); for a file of any kind with findings, its framework (frameworks.framework_fact, in `tree`):
    in the worker, once per file. `tree`: the whole file's `ast` tree when the engine parsed one (not parsed again);
    `utf8_tree`: the same tree when it is also the tree of the bytes' plain UTF-8 decoding (the launch facts')."""
    facts = import_facts(data, rel)
    out = summary
    if facts is not None:
        out = {**(summary or {}), FACTS: facts}
        if rel.endswith(".py"):
            from auditor.static.backends import TRITON_KERNEL, triton_facts

            out[TRITON] = triton_facts(data, any(getattr(f, "name", None) == TRITON_KERNEL for f in findings))
            out[TREE] = tree_facts(data, rel)
            if isinstance(tree, ast.Module):
                from auditor.static.backend_files import member_facts

                members = member_facts(tree)     # pd31's per-backend member reading, kept for warm runs
                if members:
                    out[TREE]["members"] = members
            if rel == "__init__.py" and b"NODE_CLASS_MAPPINGS" in data:
                out[TREE]["comfy_nodes"] = True   # a ComfyUI node pack's root (unreached_defs reads the pack again)
            if findings and isinstance(tree, ast.Module):
                from auditor.static.class_twins import cuda_class_spans

                spans = cuda_class_spans(tree)     # class_twins: CUDA-named classes (`GPUWorker`), with findings
                if spans:
                    out[TREE]["cuda_classes"] = spans
            if isinstance(tree, ast.Module) and (b"environ" in data or b"backend" in data):
                from auditor.static.backend_switches import switch_fact

                switches = switch_fact(tree)     # backend switches (unreached_defs; tq54a)
                if switches:
                    out[TREE]["switches"] = switches
            if isinstance(tree, ast.Module):
                from auditor.static.cuda_helpers import cuda_defs_fact, nccl_aware_defs

                defs = cuda_defs_fact(data, tree, findings)   # FORMAT 14: helpers named for CUDA it defines (t11r)
                if defs:
                    out[TREE]["cuda_defs"] = defs
                aware = nccl_aware_defs(data, tree)     # `get_nccl_backend()` returning "hccl" on Ascend (tq45b)
                if aware:
                    out[TREE]["nccl_aware"] = aware
                from auditor.static.tolerated_builds import FACT as BUILDS, builder_facts

                builds = builder_facts(tree, data)     # op builders' JIT loads and the tries around loads (tq52b)
                if builds:
                    out[TREE][BUILDS] = builds
                from auditor.project.setting_choices import FACT as CHOICES, choice_facts

                choices = choice_facts(tree)     # t18b: `if cfg.backbone == "dit": models.dit.DIT(...)`
                if choices:
                    out[TREE][CHOICES] = choices
            from auditor.project.launched import launch_facts, wrapper_fact
            from auditor.static.call_defaults import default_facts

            out[CALLS] = default_facts(data, tree)    # FORMAT 11: device / dtype defaults, the calls passing them
            from auditor.static.switch_fed_settings import FACT as SWITCH, switch_facts

            out[SWITCH] = switch_facts(data, tree, findings)     # decision 7's names and bindings, for warm runs
            if findings and wrapper_fact(data, findings):      # FORMAT 7: a short attention wrapper a script may launch
                out[TREE]["wrapper"] = True
            out[TREE].update(launch_facts(data, findings, utf8_tree))    # FORMAT 10: the patches it calls, its option defaults
            from auditor.project.launch_imports import FACT, import_failure_facts
            from auditor.project.launched import _MAX_SCRIPT_BYTES, _parse

            # (a file too big for one parse, read in pieces by the large-file pass, is not a launched script's import
            # chain: tests/test_reliability.py's bounded-memory audit)
            parsed = tree if tree is not None else _parse(as_text(data)) \
                if b"import" in data and len(data) <= _MAX_SCRIPT_BYTES else None
            from auditor.static.gates import is_cuda_test

            hard = import_failure_facts(parsed, findings, rel, is_cuda_test)
            if hard:        # s15e: its unconditional imports and the CUDA-only ones that fail (launch_imports)
                out[FACT] = hard
            from auditor.project.setting_reads import FACT as READS, reads_fact

            reads = reads_fact(parsed)      # t23e: how it reads config keys (setting_reads, on a warm run too)
            if reads:
                out[READS] = reads
            if b"npu" in data or b"NPU" in data:
                from auditor.project.npu_switch_arms import FACT as SWITCHES, npu_switch_fact

                routed = npu_switch_fact(parsed)      # tq54e: flash switches it routes to torch_npu / turns off there
                if routed:
                    out[SWITCHES] = routed
            from auditor.project.registry_choices import FACT as REGISTRY, registry_fact

            registry = registry_fact(parsed)    # tp51d: its registries of implementations (registry_choices)
            if registry:
                out[REGISTRY] = registry
            from auditor.project.registry_choices import DEFAULTS, option_defaults_fact

            defaults = option_defaults_fact(parsed)     # tp54b: its argparse defaults a launch may leave (launch choices)
            if defaults:
                out[DEFAULTS] = defaults
    from auditor.static.backend_files import ascend_image_fact

    image = ascend_image_fact(data, rel)     # FORMAT 13: a Dockerfile built for Ascend (ascend_dockerfile_sibling)
    if image is not None:
        out = {**(out or {})}
        out[TREE] = {**(out.get(TREE) or {}), "ascend_image": image}
    if "/" not in rel:
        from auditor.static.declared_vendor import declares_fact

        declares = declares_fact(data, rel)     # t11w: the root metadata's name and requirements (declared_vendor)
        if declares is not None:
            out = {**(out or {})}
            out[TREE] = {**(out.get(TREE) or {}), "declares": declares}
    from auditor.project.setting_keywords import FACT as KEYS, config_file, keys_fact

    if config_file(rel):        # h25a: a YAML config's keyed scalars (setting_keywords, on a warm run too)
        keys = keys_fact(data)
        out = {**(out or {}), KEYS: keys if keys is not None else False}     # False: it does not parse
    if findings:        # apply_other_frameworks reads only files with findings
        from auditor.static.frameworks import framework_fact

        out = {**(out or {})}
        out[TREE] = {**(out.get(TREE) or {}), "framework": framework_fact(data)}
        from auditor.static.shim_graph import quiet_fact

        quiet = quiet_fact(data, findings)      # FORMAT 8: NPU700 lines that set a switch off (drop_quiet_debug_values)
        if quiet is not None:
            out[TREE]["quiet"] = quiet
        from auditor.static.ci_jobs import ci_fact

        ci = ci_fact(data, rel) if any(getattr(f, "severity", "info") != "info" and not getattr(f, "data", {}).get(
            "context") for f in findings) else None     # FORMAT 9: a workflow's CUDA CI job spans (apply_cuda_ci_jobs)
        if ci is not None:
            out[TREE]["ci"] = ci
        if rel.endswith(".ipynb"):
            from auditor.static.ci_jobs import colab_fact

            colab = colab_fact(data, rel) if any(getattr(f, "severity", "info") != "info" for f in findings) \
                else None       # a notebook's Colab tie (apply_colab_notebooks, lead decision 8)
            if colab is not None:
                out[TREE]["colab"] = colab
    if rel.endswith(".ipynb"):
        from auditor.static.switch_fed_settings import FACT as SWITCH, switch_facts

        out = {**(out or {}), SWITCH: switch_facts(data, None, findings, rel)}     # its cells, for warm runs
    return out


def tree_facts(data: bytes, rel: str) -> dict[str, Any]:
    """A Python file's facts for the tree passes that used to read Python files again (cache FORMAT 6): `ops`, the
    operators it defines with torch.library (opnamespaces.python_registrations, read by python_defined_ops);
    `getattr`, the namespaces `getattr(torch.ops, "ns")` names, by line, and `getattr_own`, the lines where
    `getattr(torch.ops, var)` names the file's own `Library(var, ...)` (FORMAT 7; both read by
    opnamespaces.literal_namespaces);
    `hydra`, the config folders it reads as a Hydra entry importing an Ascend adaptor (npu_native.hydra_folders,
    read by apply_hydra_configs); `shim`, it imports transfer_to_npu (backends.shim_fact, read by
    transfer_scopes); `top_npu` and, for an `__init__.py`, `relative` (npu_native.subpackage_facts, FORMAT 13,
    read by ascend_subpackages). Only non-empty facts are written: most files keep `{}`."""
    from auditor.static.backends import shim_fact
    from auditor.static.npu_native import hydra_folders, subpackage_facts
    from auditor.static.opnamespaces import defined_ops_fact, getattr_namespaces_fact, getattr_own_lines_fact

    from auditor.static.class_twins import npu_classes

    out: dict[str, Any] = {}
    put_facts(out, ops=defined_ops_fact(data), getattr=getattr_namespaces_fact(data),
              getattr_own=getattr_own_lines_fact(data), hydra=hydra_folders(data, rel), shim=bool(shim_fact(data)))
    out.update(subpackage_facts(data, rel))      # FORMAT 13: `top_npu`, `relative` (npu_native.ascend_subpackages)
    # class_twins: `NPUWorker`, the NPU members of per-backend classes (t11q)
    put_facts(out, npu_classes=npu_classes(data))
    return out


def put_facts(out: dict[str, Any], **facts: Any) -> None:
    """Write each fact into `out` only when it is non-empty (true): a file's fact dictionary keeps only what it
    has, so most files keep `{}` in the cache."""
    out.update((k, v) for k, v in facts.items() if v)


def held_tree(project: ProjectImports | None, rel: str) -> dict[str, Any] | None:
    """A file's tree-pass facts (`tree`) from its summary: None without a project or a summary that holds them (the
    pass then reads the file with read_counted)."""
    return project.tree(rel) if project is not None else None


def kept_fact(summary: Any, key: str, valid: Callable[[Any], bool], compute: Callable[[], Any],
              changed: set[str], rel: str) -> Any:
    """A tree pass's fact about one file, read from the file's summary (saved with the cache) when `valid` accepts
    it there, else computed once and kept in the summary, `rel` added to `changed` so the cache saves it again: a
    warm run reads no file for it (cpu_bindings' setup.py facts, own_env_switches' comparisons)."""
    held = summary.get(key) if isinstance(summary, dict) else None
    if held is not None and valid(held):
        return held
    value = compute()
    if isinstance(summary, dict):
        summary[key] = value
        changed.add(rel)
    return value


def read_counted(project: ProjectImports | None, path: Path | str | None, limit: int | None = MAX_FILE_BYTES,
                 prefix: bool = False) -> bytes:
    """The one reader of the tree passes for a file whose facts no summary holds: counted in `project.reads` (when
    there is a project), read as the discovery reads (read_source: a FIFO, device or socket is refused, never waited
    on). Each pass keeps its own size limit: `limit` bytes (a larger file raises SourceError), None for any size, or
    with `prefix` the first `limit` bytes of a file of any size. Raises OSError (no path: FileNotFoundError) or
    SourceError."""
    if project is not None:
        project.reads += 1
    if path is None:
        raise FileNotFoundError("no path")
    if not prefix:
        return read_source(Path(path), limit if limit is not None else 1 << 62)[0]
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SourceError("special", "not a regular file (a FIFO, device or socket); not read")
        chunks: list[bytes] = []
        left = limit if limit is not None else 1 << 62
        while left > 0:
            chunk = os.read(fd, min(1 << 20, left))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def as_text(data: bytes) -> str:
    """UTF-8 text (errors replaced) with universal newlines, exactly as `Path.read_text(encoding="utf-8",
    errors="replace")` reads the same bytes."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()


class ProjectImports:
    """The tree's files and their summaries, once per run, for the import graph and the cross-file pass."""

    def __init__(self, files: Sequence[tuple[Path, str]], results: Sequence[Any] = ()) -> None:
        self.files = list(files)
        self.paths = {rel: path for path, rel in self.files}
        self.summaries: dict[str, dict[str, Any]] = {}
        for r in results:
            summary = getattr(r, "summary", None)
            if summary is None and getattr(r, "error", True) is None:
                # a file with no worker facts (a Makefile, a Dockerfile) still keeps what a tree pass reads of it
                # (`kept_fact`), so a warm run reads it no more
                summary = r.summary = {}
            if isinstance(summary, dict):
                self.summaries[r.path] = summary
        self.reads = 0                       # files read by the project passes this run (tests, bench)
        self.changed: set[str] = set()       # rels whose summary a pass updated (crossfile's `uses`): saved again
        self._module_names: dict[str, str] | None = None
        self._sources: dict[str, tuple[str, ast.Module] | None] = {}
        self._triton: dict[str, dict[str, Any] | None] = {}      # Triton facts read this run (no summary held them)

    def facts(self, rel: str) -> dict[str, Any] | None:
        """A file's import-graph facts: from its summary, else read now (and counted in `reads`)."""
        summary = self.summaries.get(rel)
        facts = summary.get(FACTS) if summary is not None else None
        if isinstance(facts, dict):
            return facts
        try:
            return import_facts(read_counted(self, self.paths.get(rel)), rel)
        except (OSError, SourceError):      # not read: a FIFO, over the limit
            return None

    def shell(self, rel: str) -> dict[str, Any] | None:
        """A shell script's facts (`shell_facts`), of a `.sh` from its summary as `facts` gives them, of another
        suffix (`.bash`, which the import graph does not read) read now; None when it cannot be read."""
        if rel.endswith(".sh"):
            return self.facts(rel)
        try:
            return shell_facts(read_counted(self, self.paths.get(rel)))
        except (OSError, SourceError):
            return None

    def _held(self, rel: str, key: str) -> dict[str, Any] | None:
        """The facts a file's summary holds under `key`, or None when it holds none."""
        summary = self.summaries.get(rel)
        facts = summary.get(key) if summary is not None else None
        return facts if isinstance(facts, dict) else None

    def tree(self, rel: str) -> dict[str, Any] | None:
        """A Python file's tree-pass facts (tree_facts) from its summary, or None when no summary holds them (the
        caller then reads the file itself, as it always did)."""
        return self._held(rel, TREE)

    def calls(self, rel: str) -> dict[str, Any] | None:
        """A Python file's call_defaults facts from its summary, or None when no summary holds them."""
        return self._held(rel, CALLS)

    def triton(self, rel: str, modules: bool = False) -> dict[str, Any] | None:
        """A Python file's Triton facts (backends.triton_facts): from its summary, else read now, once per run
        (counted in `reads`); `modules`: the caller follows the file's imports, so facts without them are read
        again unless its markers settle it. None for a file that is not read (unreadable, over the limit)."""
        summary = self.summaries.get(rel)
        facts = summary.get(TRITON) if summary is not None else None
        if isinstance(facts, dict) and (not modules or "modules" in facts or facts.get("ascend") or facts.get("skip")):
            return None if facts.get("skip") else facts
        if rel not in self._triton:
            from auditor.static.backends import triton_facts

            try:
                self._triton[rel] = triton_facts(read_counted(self, self.paths.get(rel)), True)
            except (OSError, SourceError):      # not read: a FIFO, over the limit
                self._triton[rel] = None
        return self._triton[rel]

    def source(self, rel: str, last: bool = False) -> tuple[str, ast.Module] | None:
        """A file's text and `ast` tree, read and parsed once per run for every project pass that needs more than
        its summary (the cross-file uses, guarded imports, imported gates), decoded as the engine decodes it (PEP
        263); None when it cannot be read, decoded or parsed. Counted in `reads` when read. `last`: the caller is
        the run's last reader of the file (crossfile's placement, the last pass), so the tree is not kept: held
        trees (~26 bytes per byte of source) were most of the 440 MB one process held on transformers (session 16)."""
        if rel not in self._sources:
            from auditor.source import decode_source

            path = self.paths.get(rel)
            self._sources[rel] = None
            if path is not None:
                try:
                    text = decode_source(read_counted(self, path))
                    self._sources[rel] = (text, ast.parse(text))
                except (OSError, SourceError, UnicodeDecodeError, SyntaxError, ValueError, LookupError,
                        RecursionError, MemoryError):
                    pass
        return self._sources.pop(rel) if last else self._sources[rel]

    def module_names(self) -> dict[str, str]:
        """rel -> dotted name by packages (module_paths.module_names), computed once."""
        if self._module_names is None:
            self._module_names = module_names([rel for _, rel in self.files])
        return self._module_names


