"""Per-file result cache.

One JSON index per engine key. The key covers everything the static engine is given: the tool's own
code (every source file of the auditor package), the rule files, the coverage tables, the target and
the per-run inputs (the coverage rule's API list, the size limit). Rule selection (--select / --ignore /
per-file-ignores / noqa) is applied after the cache, on the full result, so it never changes what is
stored. Each entry is keyed by the file's absolute path and checked by size + mtime, then by content
hash. Whatever the index holds is validated before use; anything of the wrong shape is a miss, and an
index that is not what this version writes is dropped and rebuilt.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.data import rules_dir, tables_dir

CACHE_FOLDER = ".npu-audit-cache"
DEFAULT_CACHE_DIR = CACHE_FOLDER            # kept for callers that name the folder
# What an index holds, one version per fact family (hs14, session 12; replaces the one FORMAT number, 3 .. 13, that
# every change bumped and every merge renumbered). A change to what a family stores bumps that family's number; a
# new family adds its own line (two helpers adding different families touch different lines, nothing to renumber).
# An index is read only when its `facts` equal FACTS exactly: a changed, added or dropped family drops the whole
# index (an entry's findings and facts come from one worker pass, so no part of an entry is reusable alone), and an
# index of the numbered scheme (`format`, no `facts`) is never read. (The engine key also covers the tool's code;
# FACTS is what still holds where the sources are not hashed, e.g. a bytecode-only install.)
FACTS: dict[str, int] = {
    "entry": 1,           # size, mtime, sha1, findings, lines, suppressed, error (valid_entry)
    "summary": 8,         # crossfile.summarize: defs, imports, tech, tech_lines ...; `uses`, `guarded` memos (FORMAT 3); 2: aliases (t30a)
                          # 3: class count attributes among the gates (t34b); 4: strings that only name are no definitions (tq43)
                          # 5: a technology named only by the project's own package names is no technology (tq44a);
                          #    and `uses` skips type tests and docstring decorators (tq44b)
                          # 6: aliases re-exported by `from torch.cuda.* import` (tk45)
                          # 7: `len(ids)` of the CUDA device ids is a count among the gates; imports under a user option
                          #    from a package imported at the top are not guarded (tq53b)
                          # 8: a package `__init__.py`'s `__version__`, `release_version` (review55 item 4)
    "facts": 7,           # project_imports.import_facts: load, main, mark; a shell script's launch, ascend (FORMAT 4); 2: configs (t18b)
                          # 3: a shell script's modules, trains, scripts (unreached_defs reads no script again; h44)
                          # 4: a launch's script on a continuation line (lead, session 51)
                          # 5: a launch's name-like option values, `values` (tp54b)
                          # 6: how many GPU ids a launch shows its script, `visible_devices` (tp55a)
                          # 7: `from . import (` names on the lines below, in `load` (tq59b)
    "triton": 1,          # backends.triton_facts (FORMAT 5)
    "make": 1,            # makefile.note_suppressions: each `make` call's suppression comments (FORMAT 5)
    "tree": 10,           # project_imports.tree_facts: ops, getattr, hydra, shim; framework (FORMAT 6); 2: choices (t18b); 3: members (pd31)
                          # 4: members' option-chosen imports, `chosen` (tq43); 5: OneFlow is a framework (tq44b)
                          # 6: members' option-chosen classes, `built` (tq45b); 7: Paddle's toolkits are Paddle (tq46b)
                          # 8: PaddleOCR / PaddleX are Paddle's toolkits too (tq47a)
                          # 9: op builders' JIT loads and the tries around loads, `builds` (tq52b)
                          # 10: backend switches, their predicates and environment stores, `switches` (tq54a)
    "getattr_own": 1,     # opnamespaces.getattr_own_lines_fact; wrapper (launched.wrapper_fact) (FORMAT 7)
    "quiet": 1,           # shim_graph.quiet_fact (FORMAT 8)
    "ci": 4,              # ci_jobs.ci_fact (FORMAT 9); 2: NVIDIA instance runner labels (t11w); 3: Lightning,
                          # CircleCI, runners a job of the workflow launches (pd32)
                          # 4: a CircleCI workflow's parameters for a CUDA job (tq50b)
    "colab": 2,           # ci_jobs.colab_fact: a notebook's Colab tie (lead decision 8, pd24); 2: the notebook's
                          # own Colab GPU-runtime metadata (tq37)
    "launch": 6,          # launch_facts (FORMAT 10); 2: setting guards (t18b); 5: a switch's own statements (review50)
                          # 3: builds HF TrainingArguments, `hf_args` (review48 item 6); 4: Apex switches (tp50b)
                          # 6: a short helper's nvidia-smi / NVML query, `probe` (tp53a)
    "calls": 20,          # call_defaults.default_facts (FORMAT 11); 2: main_calls, flags, switches, optional_attrs (pd17);
                          # 3: None fallbacks (pd20); 4: static / class methods (pd22); 5: value branches, the
                          # keywords' values (pd25); 6: autocasts always off (pd27); 7: autocast parameters, the
                          # names set, imports by name, unparsed (pd29); 8: attributes set from outside a class (pd31);
                          # 9: blocks behind a `self.X` set only to False (pd40); 10: `else` of `if p is not None`,
                          # `__new__` defaults (t33d); 11: each call's definition and CUDA gate (g3, caller_gates);
                          # 12: `Class.method` keys of class-level methods, `~method` receivers, helper-call values (r2d)
                          # 13: `else` arms of a default's own value, `str(param)` tests (tq44b)
                          # 14: definitions' top-level class and function names, `tops` (stale_keywords; session 45 review)
                          # 15: switches handed on, each call's argument codes, `forwards` (tq47a)
                          # 16: a subclass with no `__init__` names itself in its base's construction (tq50b)
                          # 17: classes bound to `self.X` and built only through it, `self.X(...)` (tq52a)
                          # 18: CUDA gates on `len(ids)` of the CUDA device ids; opted-in imports unguarded (tq53b)
                          # 19: definitions' plain classes and computed getattr, `plain` (tq57a's dead methods)
                          # 20: refs read only as a module path's step or a truth value, `inert_refs` (tq58c)
    "platform": 1,        # platform_predicates.platform_facts (FORMAT 12)
    "subpackages": 1,     # npu_native.subpackage_facts: top_npu, relative (FORMAT 13)
    "ascend_image": 1,    # backend_files.ascend_image_fact (FORMAT 13)
    "vendor": 1,          # vendor_dispatch.vendor_facts: vendor_npu, vendor_cuda (FORMAT 13)
    "classes": 1,         # class_twins: cuda_classes, npu_classes (t11q)
    "declares": 2,        # declared_vendor.declares_fact: the root metadata's name, core requirements (t11w)
                          # 2: its vLLM platform-plugin entry point, `plugin` (tq59b)
    "cuda_defs": 2,       # cuda_helpers.cuda_defs_fact: helpers named for CUDA a file defines (t11r); 2: nccl_aware (tq45b)
    "comfy_nodes": 1,     # tree facts of a root __init__.py naming NODE_CLASS_MAPPINGS (unreached_defs, t17e)
    "reach": 3,           # unreached_defs._Sources: a Python file's reach_facts and word tests, kept in its summary
                          #    by the reach pass (h45); 2: strings of value lists name nothing (tq47b)
                          # 3: a top-level definition's registry and key, `top` (tq59b); a hyphenated string read as a
                          #    key (tq60b)
    "local_builds": 2,    # local_builds.record_local_build: builds of the project's own setup.py folders (t15u);
                          # 2: builds of a Dockerfile's copied build context (tp46a)
    "source_installs": 1,  # requirements.SOURCE_INSTALLS: CUDA extensions a VCS requirement installs (NPU954, tk45)
    "called_scripts": 3,  # called_scripts.script_call: a shell line's call of another script of the tree (t19c);
                          # 2: the words after the script (t20b); 3: a script's functions (shell_functions, h25a)
    "hard_imports": 16,    # launch_imports.import_failure_facts: unconditional imports, CUDA-only ones (s15e); 2: a
                          # setup.py's CUDA extension names (t16a); 3: a hard-coded NCCL backend (pd6); 4: a
                          # comparison with "nccl" is none (t22c); 5: not a `.x_cuda` known by its name only (t22d);
                          # 6: an NCCL default the module's own call leaves in place, argparse options (pd37);
                          # 7: extension names folded from constants, those built under a condition (t35c);
                          # 8: extensions a CMake build with a CUDA switch makes, CUDA-macro CppExtensions (r2a)
                          # 9: the argparse option whose default is the hard-coded NCCL backend (tp51c)
                          # 10: argparse's one-letter aliases among the options (tp52c)
                          # 11: a library trainer that starts NCCL itself (NPU989, tp52b)
                          # 12: a script that spawns its own ranks with torch.multiprocessing (tp53b)
                          # 13: Meta's Llama reference `Llama.build` starts NCCL itself (NPU994, tp53b)
                          # 14: NCCL after an `assert torch.cuda.is_available()` is hard-coded (tp54a; with the
                          #     launched calls' `ones`, the rank options given 1)
                          # 15: kernel warnings on unconditional imports, `soft` (tp54b)
                          # 16: NCCL parameter defaults another module's call leaves in place (tp55b)
    "setting_reads": 7,   # setting_reads.reads_fact: config keys a Python file reads, sections it hands over (t23e);
                          # 2: reads passed as keywords, names passed on (t24b); 3: passed to a trainer (pd37);
                          # 4: keys picked by the hardware (pd47); 5: values with a CPU fallback (tq48a);
                          # 6: reads held in a local name or formatted into a string before they are passed (tp51b)
                          # 7: keys picked from a device count, stored from any value the key does not feed (tq52a)
    "npu_switches": 1,    # npu_switch_arms.npu_switch_fact: flash switches routed to torch_npu / off on the NPU (tq54e)
    "registry": 1,        # registry_choices.registry_fact: classes a dict display maps a string key to (lead, s52)
    "option_defaults": 2,  # registry_choices.option_defaults_fact: argparse options' name-like defaults (tp54b);
                          # 2: launched.name_defaults' (dest=, aliases, dataclass fields; lead, s55)
    "setting_keys": 1,    # setting_keywords.keys_fact: a YAML config's keyed scalars (h25a)
    "switch_fed": 2,      # switch_fed_settings.switch_facts: names feeding a switch, settings' bindings (lead, s42);
                          # 2: notebooks too
    "pins": 2,            # requirements.PINS_KEY: a metadata file's Liger-Kernel specifiers (liger_ascend, h26a);
                          # 2: transformers' (transformers_npu_release, tq42)
}
KEEP_INDEXES = 4                            # indexes for other keys kept per folder (a few selections/targets)
_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def code_digest() -> str:
    """Content hash of the auditor package's sources, the rules and the tables (about 30 ms)."""
    h = hashlib.blake2b(__version__.encode(), digest_size=16)
    for label, folder, suffixes in (("code", _PACKAGE_DIR, (".py", ".json")),
                                    ("rules", rules_dir(), (".yaml", ".yml", ".json")),
                                    ("tables", tables_dir(), (".json", ".yaml", ".yml"))):
        for path in sorted(folder.rglob("*")):
            if path.suffix not in suffixes or "__pycache__" in path.parts or not path.is_file():
                continue
            h.update(f"\0{label}/{path.relative_to(folder).as_posix()}\0".encode())
            try:
                h.update(path.read_bytes())
            except OSError:
                h.update(b"<unreadable>")
    return h.hexdigest()


def engine_key(*parts: Any) -> str:
    """Changes whenever anything that shapes results changes: tool code, rules, tables, and `parts`
    (target, size limit, the coverage rule's API list ...), which may be any JSON-able values."""
    h = hashlib.blake2b(code_digest().encode(), digest_size=12)
    for part in parts:
        h.update(b"\0" + json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()


def default_cache_dir(start: Path) -> Path:
    """One cache per project: <root>/.npu-audit-cache where root is the nearest folder above `start`
    holding pyproject.toml, setup.py, setup.cfg or .git; else the user's cache folder."""
    here = start.resolve() if start.exists() else start.absolute()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in ("pyproject.toml", ".git", "setup.py", "setup.cfg")):
            return folder / CACHE_FOLDER
    return user_cache_dir() / "projects" / hashlib.blake2b(str(here).encode(), digest_size=8).hexdigest()


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "npu-audit"


_ENTRY_TYPES = {"size": int, "mtime": int, "sha1": str, "findings": list, "lines": int, "suppressed": int}


def valid_entry(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    if any(not isinstance(entry.get(k), t) or isinstance(entry.get(k), bool) and t is int
           for k, t in _ENTRY_TYPES.items()):
        return False
    err = entry.get("error")
    return (err is None or isinstance(err, dict)) and all(isinstance(f, dict) for f in entry["findings"])


class ResultCache:
    def __init__(self, directory: Path, key: str) -> None:
        self.directory = directory
        self.key = key
        self.path = directory / f"results-{key}.json"
        self.entries: dict[str, Any] = {}
        self.dirty = False
        self.rebuilt = False                 # the index existed but was not usable
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError, RecursionError):
            self.rebuilt = self.dirty = True
            return
        if isinstance(doc, dict) and doc.get("facts") == FACTS and doc.get("key") == key \
                and isinstance(doc.get("entries"), dict):
            self.entries = doc["entries"]
        else:
            self.rebuilt = self.dirty = True

    def get(self, path: Path, max_bytes: int) -> dict[str, Any] | None:
        """The stored entry when the file is unchanged; None (a miss) for anything else."""
        import stat as stat_mod

        entry = self.entries.get(str(path))
        if entry is None:
            return None
        if not valid_entry(entry):
            del self.entries[str(path)]
            self.dirty = True
            return None
        try:
            st = path.stat()
        except OSError:
            return None
        if not stat_mod.S_ISREG(st.st_mode):
            return None
        if entry["size"] == st.st_size and entry["mtime"] == st.st_mtime_ns:
            return entry
        from auditor.discover import SourceError, read_source

        try:
            data, _ = read_source(path, max_bytes)
        except (OSError, SourceError):
            return None
        if hashlib.sha1(data).hexdigest() == entry["sha1"]:
            entry["mtime"] = st.st_mtime_ns
            entry["size"] = st.st_size
            self.dirty = True
            return entry
        return None

    def drop(self, path: Path) -> None:
        if self.entries.pop(str(path), None) is not None:
            self.dirty = True

    def put(self, path: Path, stamp: tuple[int, int, str], payload: dict[str, Any]) -> None:
        """stamp = (size, mtime_ns, sha1) of the bytes that were analysed."""
        size, mtime, digest = stamp
        self.entries[str(path)] = {"size": size, "mtime": mtime, "sha1": digest, **payload}
        self.dirty = True

    def update_summary(self, path: Path, summary: dict[str, Any] | None) -> None:
        """A project pass added to a file's summary (crossfile's `uses`): keep it with the entry."""
        entry = self.entries.get(str(path))
        if entry is not None and isinstance(summary, dict):
            entry["summary"] = summary
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("*\n")
            others = sorted((p for p in self.directory.glob("results-*.json") if p != self.path),
                            key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
            for old in others[KEEP_INDEXES - 1:]:       # keep a few recent keys, drop the rest
                old.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump({"facts": FACTS, "key": self.key, "tool": __version__, "entries": self.entries},
                              fh, separators=(",", ":"))
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a cache that cannot be written only costs speed
