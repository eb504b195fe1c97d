"""`make <target>` in scripts, CI steps, Dockerfile RUN lines and notebook `!` lines, resolved against the project's
own Makefile: a target whose rule compiles with nvcc (its recipe runs `$(NVCC)` / `nvcc`, or a prerequisite is a
`.cu` source, or it depends on such a target) is a CUDA build, which has no Ascend counterpart (t15e, tuned on
project split test8: karpathy/llm.c's `make train_gpt2cu`, `make -C dev/cuda`).

Two steps, because the Makefile is another file of the tree:
1. the shell reader (auditor/project/shell.py) records each `make` call with its targets, `-C` folder, `-f` file
   and the folder a `cd` moved to, in the file's summary (`make_calls`, kept in the cache entry);
2. after every file is read, `apply_make_builds` finds the Makefile each call runs (from the tree's root, then from
   the calling file's folder) and adds one finding per call that names (or defaults to) a CUDA target.

The Makefile is read by a tokenizer that follows GNU make's syntax where it matters here: logical lines
(backslash continuations), comments, variable assignments of every flavour (`=`, `:=`, `::=`, `?=`, `+=`, with
`override` / `export`), rules (`targets: prerequisites | order-only`, `::`), tab-indented recipe lines and a recipe
after `;`, pattern rules (`%.ptx: %.cu`, used only when the stem's `.cu` file exists), variable references
`$(X)` / `${X}` and substitution references `$(X:%=%.ptx)`. Conditionals are not evaluated: every branch's
assignments count (a CUDA target a branch may add is a CUDA target the Makefile can build). Nothing is run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from auditor.findings import FileResult, Finding
from auditor.source import SourceError, read_source
from auditor.suppress import Suppressions, covered

SUMMARY_KEY = "make_calls"
IGNORE_KEY = "ignore"          # a call's suppression comments (note_suppressions)
MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
_MAX_BYTES = 512 * 1024
_ASSIGN_RE = re.compile(r"^(?:(?:override|export|private)\s+)*([A-Za-z_][\w.-]*)\s*(::?=|:::=|\?=|\+=|!=|=)(.*)$")
_DIRECTIVE_RE = re.compile(r"^(?:ifeq|ifneq|ifdef|ifndef|else|endif|include|-include|sinclude|define|endef|"
                           r"undefine|vpath|unexport|export|override)\b")
_REF_RE = re.compile(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\}|([A-Za-z_@<^*?]))")
_NVCC_RE = re.compile(r"(?<![\w.-])nvcc(?:\.exe)?(?![\w.-])", re.I)


@dataclass
class Makefile:
    folder: Path
    variables: dict[str, list[str]] = field(default_factory=dict)
    rules: list[tuple[list[str], list[str], str]] = field(default_factory=list)   # targets, prerequisites, recipe
    default_goal: str | None = None
    _cuda: dict[str, str] | None = None

    @classmethod
    def parse(cls, text: str, folder: Path) -> "Makefile":
        mk = cls(folder)
        lines = _logical_lines(text)
        raw_rules: list[tuple[str, str, list[str]]] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.strip() or line.startswith("\t"):
                continue
            stripped = _strip_comment(line).strip()
            if not stripped:
                continue
            if stripped.startswith("define "):      # a multi-line variable: skipped whole
                while i < len(lines) and not lines[i].strip().startswith("endef"):
                    i += 1
                continue
            assign = _ASSIGN_RE.match(stripped)
            if assign and ":" not in assign.group(1):
                mk.variables.setdefault(assign.group(1), []).append(assign.group(3).strip())
                continue
            if _DIRECTIVE_RE.match(stripped):
                continue
            head, sep, tail = _split_rule(stripped)
            if not sep:
                continue
            if "=" in tail.split(";", 1)[0] and _ASSIGN_RE.match(tail.strip()):
                continue                            # a target-specific variable: `train: CFLAGS += -O3`
            prereqs, _, inline = tail.partition(";")
            recipe = [inline] if inline.strip() else []
            while i < len(lines) and (lines[i].startswith("\t") or not lines[i].strip()):
                if lines[i].startswith("\t"):
                    recipe.append(lines[i][1:])
                i += 1
            raw_rules.append((head, prereqs.replace("|", " "), recipe))
        for head, prereqs, recipe in raw_rules:
            targets = mk.expand(head).split()
            mk.rules.append((targets, mk.expand(prereqs).split(), mk.expand("\n".join(recipe))))
            if mk.default_goal is None:
                goal = next((t for t in targets if not t.startswith(".") and "%" not in t), None)
                mk.default_goal = goal
        return mk

    def expand(self, text: str, depth: int = 0, active: frozenset[str] = frozenset()) -> str:
        """Variable and substitution references replaced by every value the Makefile assigns (all branches).
        `active`: the variables being expanded; a reference back to one of them (`ARGS := $(ARGS) --x`, an append)
        expands to nothing, so a variable assigned many times from itself grows linearly, not exponentially."""
        if depth > 6 or "$" not in text:
            return text

        def one(m: re.Match) -> str:
            ref = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
            if ref is None or len(ref) == 1 and ref in "@<^*?":
                return m.group(0)                   # an automatic variable: left as written
            name, colon, subst = ref.partition(":")
            if " " in name or "," in name:          # a function (`$(shell which nvcc)`, `$(wildcard *.cu)`): its text
                return self.expand(ref, depth + 1, active)
            if name in active:
                return ""
            value = " ".join(self.expand(v, depth + 1, active | {name}) for v in self.variables.get(name, ()))
            if colon and "=" in subst:
                old, new = subst.split("=", 1)
                value = " ".join(_substitute(w, old, new) for w in value.split())
            return value

        return self.expand(_REF_RE.sub(one, text), depth + 1, active)

    def cuda_targets(self) -> dict[str, str]:
        """target -> why it is a CUDA build (an nvcc recipe, a `.cu` prerequisite, a CUDA prerequisite)."""
        if self._cuda is not None:
            return self._cuda
        cuda: dict[str, str] = {}
        deps: dict[str, list[str]] = {}
        for targets, prereqs, recipe in self.rules:
            for t in targets:
                if "%" in t or t.startswith(".") and "/" not in t:
                    continue                        # pattern rules are read per target; `.PHONY` is no target
                deps.setdefault(t, []).extend(prereqs)
                source = next((p for p in prereqs if p.endswith(".cu")), None)
                if _NVCC_RE.search(recipe):
                    cuda.setdefault(t, "its recipe runs nvcc")
                elif source is not None:
                    cuda.setdefault(t, f"it is built from {source}")
        changed = True
        while changed:
            changed = False
            for t, prereqs in deps.items():
                if t in cuda:
                    continue
                for p in prereqs:
                    if p in cuda or "%" not in p and self._pattern_source(p, cuda):
                        cuda[t] = f"it builds {p}, a CUDA target"
                        changed = True
                        break
        self._cuda = cuda
        return cuda

    def why_cuda(self, target: str) -> str | None:
        return self.cuda_targets().get(target) or self._pattern_cuda(target)

    def setup_builds(self, target: str) -> list[str]:
        """The setup scripts (relative to the Makefile's folder) that the target's recipe, or a prerequisite's, runs a
        build command of (`cd nms; python setup_linux.py build_ext --inplace`: py-faster-rcnn's NMS Makefile and its
        copies), following the recipe's `cd`s (each recipe line a shell of its own, as make runs it)."""
        found: list[str] = []
        todo, seen = [target], set()
        while todo:
            goal = todo.pop()
            if goal in seen:
                continue
            seen.add(goal)
            for targets, prereqs, recipe in self.rules:
                if goal in targets:
                    todo.extend(prereqs)
                    found.extend(s for line in recipe.splitlines() for s in _recipe_setup_scripts(line))
        return list(dict.fromkeys(found))

    def _pattern_cuda(self, target: str) -> str | None:
        """A target only a pattern rule makes (`%: %.cu`, `%.ptx: %`): CUDA when the stem's `.cu` source is there,
        or when the rule's prerequisite is one of the Makefile's CUDA targets (`adamw.ptx` from `adamw`). A pattern
        whose prerequisite names no file that is there and no target (`%: %.cu` for `make clean`) does not apply."""
        return self._pattern_source(target, self.cuda_targets())

    def _pattern_source(self, target: str, explicit: dict[str, str], depth: int = 0) -> str | None:
        if target.startswith(".") and "/" not in target or depth > 2:
            return None
        for targets, prereqs, recipe in self.rules:
            for pattern in targets:
                if "%" not in pattern:
                    continue
                stem = _stem(pattern, target)
                if stem is None:
                    continue
                for p in prereqs:
                    if "%" not in p:
                        continue
                    source = p.replace("%", stem, 1)
                    if source.endswith(".cu") and (self.folder / source).is_file():
                        return f"its pattern rule `{pattern}: {p}` compiles {source}"
                    if source != target and (source in explicit or self._pattern_source(source, explicit, depth + 1)):
                        return f"its pattern rule `{pattern}: {p}` reads {source}, a CUDA target"
        return None


# a setup script's build commands (setuptools' `build_ext`, `install`, ...) run by `python[3[.x]] SCRIPT.py VERB`
_SETUP_RUN_RE = re.compile(r"^(?:\S*/)?python[\d.]*\s+(?:-\S+\s+)*(\S+\.py)\s+(?:\S+\s+)*?"
                           r"(?:build_ext|build|install|develop|bdist_wheel|bdist_egg)(?:\s|$)")


def _recipe_setup_scripts(line: str) -> Iterator[str]:
    """The setup scripts a recipe line runs a build of, relative to where the line starts (its `cd`s followed)."""
    cwd: str | None = ""
    for command in re.split(r"\s*(?:;|&&|\|\|)\s*", line.strip().lstrip("@-+").strip()):
        words = command.split()
        if words[:1] == ["cd"]:
            cwd = cd(cwd, words[1] if len(words) > 1 else None)
        elif cwd is not None and (run := _SETUP_RUN_RE.match(command)):
            script = _join(cwd, run.group(1))
            if script is not None:
                yield script


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def _strip_comment(line: str) -> str:
    at = 0
    while True:
        at = line.find("#", at)
        if at < 0:
            return line
        if at == 0 or line[at - 1] != "\\":
            return line[:at]
        at += 1


def _split_rule(line: str) -> tuple[str, str, str]:
    """`targets: prerequisites` split at the rule's colon (not a drive letter `C:\\`, not `:=`)."""
    depth = 0
    for i, ch in enumerate(line):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == ":" and depth == 0:
            if line[i + 1:i + 2] == "=" or (i == 1 and line[i + 1:i + 2] in ("\\", "/")):
                return line, "", ""
            rest = line[i + 1:]
            return line[:i], ":", rest[1:] if rest.startswith(":") else rest
    return line, "", ""


def _substitute(word: str, old: str, new: str) -> str:
    if "%" in old:
        stem = _stem(old, word)
        return new.replace("%", stem, 1) if stem is not None else word
    return word[:-len(old)] + new if old and word.endswith(old) else word


def _stem(pattern: str, word: str) -> str | None:
    prefix, _, suffix = pattern.partition("%")
    if len(word) >= len(prefix) + len(suffix) and word.startswith(prefix) and word.endswith(suffix):
        return word[len(prefix):len(word) - len(suffix)]
    return None


# -- the call sites -------------------------------------------------------------------------------------------

_MAKE_VALUE_OPTS = {"-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir", "-o", "--old-file",
                    "-W", "--what-if", "--assume-new", "--new-file", "--assume-old", "-l", "--load-average"}


def make_call(words: list[str], cwd: str | None) -> dict[str, Any] | None:
    """The folder, Makefile and targets of `make [options] [VAR=value] [targets]` (words after `make`); None when
    they are not literal (`make $TARGET`, `make -C $DIR`) or the script moved to a folder it does not name."""
    if cwd is None:
        return None
    folder: str = cwd
    makefile: str | None = None
    targets: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        value = None
        if w in _MAKE_VALUE_OPTS:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        elif w.startswith(("--directory=", "--file=", "--makefile=")):
            w, value = w.split("=", 1)
        elif w.startswith("-C") and len(w) > 2:
            w, value = "-C", w[2:]
        elif w in ("-j", "--jobs") and i + 1 < len(words) and words[i + 1].isdigit():
            i += 1
        elif w.startswith("-") or "=" in w:
            pass
        else:
            if "$" in w or "%" in w:
                return None
            targets.append(w)
        if value is not None:
            if "$" in value or "%" in value:
                return None
            if w in ("-C", "--directory"):
                moved = _join(folder, value)
                if moved is None:
                    return None
                folder = moved
            elif w in ("-f", "--file", "--makefile"):
                makefile = value
        i += 1
    return {"dir": folder, "makefile": makefile, "targets": targets}


def _join(base: str, rel: str, climb: bool = False) -> str | None:
    """`rel` joined to `base`; None for an absolute or home path, and for one above where the script started unless
    `climb`, which keeps the `..` parts (`../Nanoflow/pipeline`, cmake_calls.outside_cd)."""
    rel = rel.replace("\\", "/")
    if rel.startswith(("/", "~")):
        return None
    parts = [p for p in base.split("/") if p and p != "."]
    for p in rel.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts or parts[-1] == "..":
                if not climb:
                    return None
                parts.append(p)
            else:
                parts.pop()
        else:
            parts.append(p)
    return "/".join(parts)


def cd(cwd: str | None, target: str | None) -> str | None:
    """The folder (relative to where the script started) after `cd target`; None once it is not known."""
    if cwd is None or not target or target in ("-", "~") or "$" in target:
        return None
    return _join(cwd, target)


# -- the tree pass --------------------------------------------------------------------------------------------

def _read_makefile(folder: Path, name: str | None, cache: dict) -> Makefile | None:
    names = (name,) if name else MAKEFILE_NAMES
    for n in names:
        path = folder / n
        key = str(path)
        if key in cache:
            if cache[key] is not None:
                return cache[key]
            continue
        try:      # the discovery's reader: a FIFO or device named Makefile is refused, never waited on
            mk = Makefile.parse(read_source(path, _MAX_BYTES)[0].decode("utf-8", errors="replace"), folder)
        except (OSError, SourceError):
            mk = None
        cache[key] = mk
        if mk is not None:
            return mk
    return None


def recorded_calls(result: FileResult, root: Path, key: str) -> tuple[list, tuple[Path, ...]]:
    """The calls a worker recorded in `result`'s summary under `key` (`make`, `cmake`, local-extra installs), and the
    folders a call's relative folder is read from: the tree's top folder (a CI step and most scripts run there),
    then the calling file's folder."""
    calls = (result.summary or {}).get(key) or []
    here = Path(result.path)
    own = here.parent if here.is_absolute() else root / here.parent
    return calls, tuple(dict.fromkeys((root, own)))


def keep_call(result: FileResult, key: str, call: dict[str, Any]) -> None:
    """Keep a recorded call (with its position) in `result`'s summary under `key`, for the tree pass that reads the
    file or folder it names (a reader's step 1)."""
    summary = result.summary if result.summary is not None else {}
    summary.setdefault(key, []).append(call)
    result.summary = summary


def positioned(calls: list, *keys: str) -> Iterator[tuple]:
    """((line, col, end_col), call[key] ...) of each recorded call that has them; a malformed one (an older cache
    entry, a summary a caller built by hand) is skipped."""
    for call in calls:
        try:
            values = ((call["line"], call["col"], call["end_col"]), *(call[k] for k in keys))
        except (KeyError, TypeError):
            continue
        yield values


def call_finding(rule, product: str, result: FileResult, call_pos: tuple[int, int, int], message: str, symbol: str,
                 data: dict) -> Finding:
    """The finding a recorded call (`make`, `cmake`, a local-extra install, a launch) gets on the calling line."""
    line, col, end_col = call_pos
    return Finding(
        code=rule.code, name=rule.name, category=rule.category, severity=rule.severity_for(product),
        effort=rule.effort, path=result.path, line=line, col=col, end_line=line, end_col=end_col,
        message=message, substitution=rule.substitution, fix="none", source="static", symbol=symbol, data=data)


def add_call_findings(results: list[FileResult], root: Path, key: str,
                      finder: Callable[[FileResult, Path], list[Finding]]) -> None:
    """Add finder(result, top)'s findings to every file that recorded calls under `key`, except those on a line that
    already has the code (runner, after the per-file pass; top: the tree's top folder)."""
    top = root if root.is_dir() else root.parent
    for result in results:
        if result.summary and result.summary.get(key):
            found = finder(result, top)
            have = {(f.line, f.code) for f in result.findings}
            result.findings.extend(f for f in found if (f.line, f.code) not in have)


def unsuppressed(new: list[Finding], calls: list, here: Path, root: Path) -> list[Finding]:
    """`new` without the findings the calling file's own `# npu-audit: ignore[...]` comments silence: those the worker
    that read the file kept with each call (note_suppressions); calls recorded without them (a caller that built the
    summary itself, an older cache entry) have the file read, as before (relative to root unless absolute)."""
    if all(isinstance(call, dict) and isinstance(call.get(IGNORE_KEY), list) for call in calls):
        return [f for f in new if not any(f.line in (call["line"], call.get("file_line"))
                                          and covered(call[IGNORE_KEY], f.code)
                                          for call in calls)]
    try:
        text = (here if here.is_absolute() else root / here).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return new
    suppressions = Suppressions.of(text.splitlines(), text)
    return [f for f in new if not suppressions.covers(f.line, f.end_line, f.code)]


def make_build_findings(result: FileResult, root: Path, rule, cache: dict | None = None,
                        product: str = "a2", setup_cuda: Callable[[Path], list[int]] | None = None,
                        run_rule=None) -> list[Finding]:
    """The findings of `result`'s recorded `make` calls whose targets the Makefile builds with nvcc, or whose recipe
    runs a setup script that always compiles CUDA extensions (`setup_cuda(path)`: the lines of those extensions);
    root is the tree's top folder (a CI step and most scripts run there), the calling file's folder is tried next.
    A recorded run of a program by its path (`{"program": ...}`) is `run_rule`'s when the Makefile of its folder has
    a target of its name that compiles with nvcc (never the default goal)."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if rule is None or not calls:
        return []
    cache = {} if cache is None else cache
    here = Path(result.path)
    new = []
    for call in calls:
        try:
            line, col, end_col, folder, name, targets = (call["line"], call["col"], call["end_col"], call["dir"],
                                                         call["makefile"], list(call["targets"]))
        except (KeyError, TypeError):
            continue
        mk = None
        for base in bases:
            mk = _read_makefile(base / folder if folder else base, name, cache)
            if mk is not None:
                break
        if mk is None:
            continue
        program = call.get("program")
        if program is not None:
            why = mk.why_cuda(targets[0]) if run_rule is not None and targets else None
            if why is not None:
                new.append(call_finding(run_rule, product, result, (line, col, end_col),
                                        run_rule.message.replace("{symbol}", program) + f" (its Makefile's `{targets[0]}`: "
                                        f"{why})", program, {"targets": targets}))
            continue
        goals = targets or ([mk.default_goal] if mk.default_goal else [])
        built = [(t, why) for t in goals if (why := mk.why_cuda(t) or _setup_cuda_build(mk, t, setup_cuda))]
        if not built:
            continue
        target, why = built[0]
        symbol = "make " + " ".join(t for t, _ in built)
        message = rule.message.replace("{symbol}", symbol) + f" (`{target}`: {why})"
        new.append(call_finding(rule, product, result, (line, col, end_col), message, symbol,
                                {"targets": [t for t, _ in built]}))
    if new:
        # the calling file's own `# npu-audit: ignore[NPU333]` comments, as for the findings of its own pass
        return unsuppressed(new, calls, here, root)
    return new


def _setup_cuda_build(mk: Makefile, target: str, setup_cuda: Callable[[Path], list[int]] | None) -> str | None:
    """Why the target is a CUDA build through a setup script its recipe runs (None when none compiles CUDA)."""
    if setup_cuda is None:
        return None
    for script in mk.setup_builds(target):
        lines = setup_cuda(mk.folder / script)
        if lines:
            return f"its recipe builds {script}, whose CUDA extension (line {abs(lines[0])}) every build compiles"
    return None


def note_suppressions(summary: dict[str, Any] | None, data: bytes, keys: tuple[str, ...] = (SUMMARY_KEY,)) -> None:
    """In the worker, from the bytes it read: the suppression comments (file-level and on its line) that apply to
    each call the file records under `keys` (`make`, `cmake`, local-extra installs), kept with the call (`ignore`,
    in the cache entry), so that the tree passes never read the calling file again. The text is what those passes
    read before: the raw file, UTF-8."""
    lists = [calls for key in keys if (calls := (summary or {}).get(key))]
    if not lists:
        return
    text = data.decode("utf-8", errors="replace")
    suppressions = Suppressions.of(text.splitlines(), text)
    for calls in lists:
        for call in calls:
            if isinstance(call, dict) and isinstance(call.get("line"), int):
                call[IGNORE_KEY] = suppressions.directives_at(call["line"], call["line"])


def apply_make_builds(results: list[FileResult], root: Path, rules, product: str = "a2",
                      setup_cuda: Callable[[Path], list[int]] | None = None) -> None:
    """Add the `make` findings to every file that recorded calls (runner, after the per-file pass); setup_cuda: as
    make_build_findings takes it."""
    rule = next((r for r in rules if "nvcc" in r.match.get("makefile", ())), None)
    run_rule = next((r for r in rules if "built-program" in r.match.get("makefile", ())), None)
    if rule is None:
        return
    cache: dict = {}
    add_call_findings(results, root, SUMMARY_KEY, lambda result, top: make_build_findings(result, top, rule, cache,
                                                                                          product, setup_cuda, run_rule))
