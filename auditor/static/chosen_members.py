"""Per-backend handlers chosen by an option (tq43, session 43; TUNED on heldout47's RoboVerse).

A tree that runs one of several simulators, engines or backends picks the module to import by the user's option:
RoboVerse's `get_sim_handler_class(sim)` is an `if sim == SimType.ISAACLAB: from metasim.sim.isaaclab import ...
elif sim == SimType.ISAACGYM: from metasim.sim.isaacgym import ... elif sim == SimType.GENESIS: ...` chain, each arm
importing its handler package lazily (inside the arm, often in a `try`), so only the chosen member is ever imported
(the language reference, "The import statement": an import runs when its statement does). The member built on an
NVIDIA-only package (`from isaacgym import gymapi`: Isaac Gym's PhysX GPU pipeline) is the CUDA member of a
per-backend set, as pd36 reads the TensorRT arm of a format chain and backend_files a `backends/tensorrt_llm/` folder
beside other backends: an Ascend run chooses another member (MuJoCo, SAPIEN, Genesis, PyBullet), so the member's
error / warning findings are info ("platform-class"), never rewritten, never dropped.

Read from the code: an if / elif chain of at least three arms, each testing one subject (`sim`, `args.backend`,
`self.engine`) for equality or membership against a constant, at least three of which import a module; the members
are the modules those imports name, resolved in the tree (a package folder or a module file). A member is CUDA-only
when one of its files holds an error or warning (a guarded import's), still undiscounted, of a package NVIDIA-only by design (NPU411's Isaac Gym,
DeepGEMM, ...; TensorRT), not of one with an Ascend port (vLLM) or an optional one;
at least one other member of the chain must not be. A lone `if sim == "isaacgym": import isaacgym` with no sibling
arms, an arm that calls CUDA code without importing a member, and a member imported at module level anywhere else
in the tree keep their severity.

tq45b: a chain whose arms build one class each instead (`if config.backend == Backend.EXL2: return
InterfaceEXL2(config)`, `chosen_builds`) names a set of classes; a guarded import of a package with no NPU build whose
uses the rest of the tree reaches only through some of those classes is their member's (`_built_members`).

Per-file part (`chosen_imports`, `chosen_builds`, kept in each module's `members` facts so a warm run reads no
file); tree part (`apply_chosen_members`, once per run after the per-file passes).
"""
from __future__ import annotations

import ast
from typing import Any

from auditor.backend_words import backends_in_text
from auditor.static.astutil import ast_dotted, if_chains
from auditor.static.backends import DISCOUNTED, as_info, discount_findings
from auditor.static.call_defaults import FACT_CALLERS, FACT_IMPORTS, FACT_REFS, FACT_UNPARSED, MODULE_CALL, \
    UNKNOWN_CALLER
from auditor.static.module_paths import absolute_module, module_names
from auditor.static.project_imports import TREE
from auditor.static.unreached_defs import UNNAMED_USES

_MIN_ARMS = 3
_NOTE = ("one member of a per-backend set the user chooses by `{subject}` ({others}): its package is NVIDIA-only by "
         "design; an Ascend run chooses another member; left as is")


def _subject_and_label(test: ast.AST) -> tuple[str, str] | None:
    """(subject, label) of `sim == SimType.ISAACGYM`, `"isaacgym" == args.sim`, `backend in ("a", "b")`,
    `sim is Sim.X`; None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.Is, ast.In))):
        return None
    left, right = test.left, test.comparators[0]

    def constant(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            return node.attr         # an enum member: SimType.ISAACGYM
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
            labels = [constant(e) for e in node.elts]
            return "/".join(x for x in labels if x) if all(labels) else None
        return None

    for subject, other in ((left, right), (right, left)):
        label = constant(other)
        if label is not None and isinstance(subject, (ast.Name, ast.Attribute)) and constant(subject) is None:
            return ast.unparse(subject), label.lower()
        if label is not None and isinstance(subject, ast.Attribute):
            # `self.sim == SimType.X`: an attribute of an instance is a subject too
            if isinstance(subject.value, ast.Name) and subject.value.id in ("self", "cls", "args", "cfg", "config"):
                return ast.unparse(subject), label.lower()
    return None


def arm_imports(body: list[ast.stmt]) -> list[list[Any]]:
    """[level, module] of each `from x import y` / `import x` in an arm (in a `try` too), not in nested defs."""
    out: list[list[Any]] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom) and (node.module or node.level):
            out.append([node.level, node.module or ""])
        elif isinstance(node, ast.Import):
            out += [[0, a.name] for a in node.names]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        else:
            stack += [c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler))]
    return out


def chosen_imports(tree: ast.AST) -> list[list[Any]]:
    """[subject, [[label, level, module], ...]] of each if / elif chain that imports a member per option value."""
    out: list[list[Any]] = []
    for chain in if_chains(tree):
        arms = [(_subject_and_label(arm.test), arm.body) for arm in chain]
        subjects = {a[0][0] for a in arms if a[0] is not None}
        if len(subjects) != 1:
            continue
        members = [[a[0][1], level, module] for a in arms if a[0] is not None
                   for level, module in arm_imports(a[1])]
        if len(arms) >= _MIN_ARMS and len({m[0] for m in members}) >= _MIN_ARMS:
            out.append([subjects.pop(), members])
    return out


def _built_class(body: list[ast.stmt]) -> str | None:
    """The class an arm builds: its first `return Name(...)` / `x = Name(...)` of a capitalised name."""
    for stmt in body:
        value = stmt.value if isinstance(stmt, (ast.Return, ast.Assign)) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id[:1].isupper():
            return value.func.id
    return None


def chosen_builds(tree: ast.AST) -> list[list[Any]]:
    """[subject, [[label, class], ...]] of each if / elif chain that builds one class per option value (tq45b: OuteTTS'
    `if config.backend == Backend.HF: return InterfaceHF(config) elif ... == Backend.EXL2: return
    InterfaceEXL2(config) ...`)."""
    out: list[list[Any]] = []
    for chain in if_chains(tree):
        arms = [(_subject_and_label(arm.test), _built_class(arm.body)) for arm in chain]
        subjects = {a[0][0] for a in arms if a[0] is not None}
        built = [[a[0][1], a[1]] for a in arms if a[0] is not None and a[1]]
        if len(subjects) == 1 and len(arms) >= _MIN_ARMS and len({b[1] for b in built}) >= _MIN_ARMS:
            out.append([subjects.pop(), built])
    return out


def _member_rels(module: str, level: int, importer: str, rels: list[str], names: dict[str, str]) -> list[str]:
    """The tree's files a chosen import loads as its member: a package folder's files, or one module file."""
    me = names.get(importer, "")            # a relative import resolves from the importer's dotted name
    if level and not me:
        return []
    dotted = absolute_module(module, level, me, importer.endswith("__init__.py"))
    by_name = {name: rel for rel, name in names.items()}
    rel = by_name.get(dotted)
    if rel is None:
        return []
    if rel.endswith("/__init__.py"):
        folder = rel[: -len("__init__.py")]
        return [r for r in rels if r.startswith(folder)]
    return [rel]


# rules whose package has no build but NVIDIA's by design (Isaac Gym, TensorRT): a member importing one is the set's
# CUDA member; a package with an Ascend port (vLLM: vllm-ascend) or an optional one (bitsandbytes) is not read here
_NVIDIA_ONLY_RULES = frozenset({"nvidia-only-package", "tensorrt"})
# tq45b: for a built member's guarded import, also the extension libraries with CPU / CUDA kernels only (NPU416:
# ExLlamaV2, AutoGPTQ, AutoAWQ): an engine member built on one has no NPU path either
_NO_NPU_BUILD_RULES = _NVIDIA_ONLY_RULES | {"cuda-extension-library"}


def _open(finding) -> bool:
    """An error or warning no per-backend / other-backend reading has discounted (a guard's warning counts)."""
    return finding.severity != "info" and finding.data.get("context") not in DISCOUNTED


def _cuda_only(files: list) -> bool:
    return any(f.name in _NVIDIA_ONLY_RULES and _open(f) for r in files for f in r.findings)


def _chains(results: list, kind: str) -> list[tuple[str, str, list[list[Any]]]]:
    """(file, subject, arms) of the run's `chosen` (imports) or `built` (classes) chains, from the modules' facts."""
    chains: list[tuple[str, str, list[list[Any]]]] = []
    for r in results:
        facts = r.summary.get(TREE) if isinstance(r.summary, dict) else None
        members = facts.get("members") if isinstance(facts, dict) else None
        for subject, arms in (members.get(kind) or ()) if isinstance(members, dict) else ():
            chains.append((r.path, subject, arms))
    return chains


def apply_chosen_members(results: list, project: Any = None) -> int:
    """Lower the error / warning findings of the CUDA-only members of option-chosen per-backend sets to info
    (module doc); returns how many changed."""
    changed = _built_members(results, project)
    chains = _chains(results, "chosen")
    if not chains:
        return changed
    rels = [r.path for r in results]
    names = module_names(rels)
    by_rel = {r.path: r for r in results}
    for importer, subject, arms in chains:
        sets: dict[str, list[str]] = {}
        for label, level, module in arms:
            sets.setdefault(label, [])
            sets[label] += [m for m in _member_rels(module, level, importer, rels, names) if m not in sets[label]]
        cuda = {label for label, files in sets.items() if files and _cuda_only([by_rel[f] for f in files])}
        others = sorted(label for label, files in sets.items() if label not in cuda)
        if not cuda or not others:
            continue
        note = _NOTE.format(subject=subject, others=", ".join(others[:5]))
        for label in cuda:
            for rel in sets[label]:
                if rel != importer:
                    changed += discount_findings(by_rel[rel], "platform-class", note, lower=_open)
    return changed


_BUILT_NOTE = ("every use of this optional import sits in {holders}, which only the `{labels}` member of a per-backend "
               "set the user chooses by `{subject}` ({others}) builds: its package has no NPU build; an Ascend run "
               "chooses another member; left as is")


def _site_owners(name: str, rel: str, python: list[str], project: Any) -> set[str] | None:
    """The top-level classes holding every mention of the definition `name` of file `rel` in the tree's other Python
    files (call_defaults' `callers` sites), or None when one is elsewhere or unknown: module level, a function, a
    star import, an attribute read, a file without facts."""
    owners: set[str] = set()
    for other in python:
        if other == rel:
            continue
        facts = project.calls(other)
        if facts is None or facts.get(FACT_UNPARSED):
            return None
        if "." + name in (facts.get(FACT_REFS) or ()) or \
                any(i.endswith(":*") for i in facts.get(FACT_IMPORTS) or ()):
            return None
        sites = facts.get(FACT_CALLERS) or {}
        for caller, _line, _gate in [*sites.get(name, ()), *sites.get(MODULE_CALL + name, ())]:
            if "." not in caller or caller == UNKNOWN_CALLER:
                return None
            owners.add(caller.split(".", 1)[0])
    return owners


def _built_members(results: list, project: Any) -> int:
    """tq45b (heldout52's OuteTTS): `Interface(config)` builds one interface class per `config.backend` (HF,
    llama.cpp, ExLlamaV2, vLLM, ...); `InterfaceEXL2.get_model` builds `EXL2Model`, whose module imports exllamav2
    under try / except. A guarded import of a package with no NPU build (`_NO_NPU_BUILD_RULES`) whose every use sits
    in definitions (`unnamed_uses`, pd34) that the rest of the tree names only inside the classes some arms of one
    such chain build, with another arm left, is that member's: info, context `platform-class` (policy (k)). A
    definition also named at module level, in a function or outside the chain's classes keeps its severity."""
    chains = _chains(results, "built")
    if not chains or not hasattr(project, "calls"):
        return 0
    python = [r.path for r in results if r.path.endswith(".py")]
    owners_of: dict[tuple[str, str], set[str] | None] = {}
    changed = 0
    for r in results:
        for i, f in enumerate(r.findings):
            holders = (f.data or {}).get(UNNAMED_USES)
            if not holders or f.name not in _NO_NPU_BUILD_RULES or not _open(f):
                continue
            owners: set[str] = set()
            for name in holders:
                if (r.path, name) not in owners_of:
                    owners_of[(r.path, name)] = _site_owners(name, r.path, python, project)
                found = owners_of[(r.path, name)]
                if not found:
                    owners = set()
                    break
                owners |= found
            for _importer, subject, arms in chains if owners else ():
                built = {cls: label for label, cls in arms}
                if not owners <= built.keys():
                    continue
                labels = sorted({built[c] for c in owners})
                others = sorted({label for label, _cls in arms} - set(labels))
                if others:
                    note = _BUILT_NOTE.format(holders=" and ".join(f"`{n}`" for n in holders),
                                              labels="` / `".join(labels), subject=subject,
                                              others=", ".join(others[:5]))
                    r.findings[i] = as_info(f, "platform-class", note)
                    changed += 1
                    break
    return changed


_NAMED_NOTE = ("one member of a set the user picks by name (`{subject}`), whose other arm builds the same kind of "
               "object from `{other}`: an Ascend run names that one; left as is")


def _getattr_source(body: list[ast.stmt], subject: str) -> str | None:
    """`X` of the first `getattr(X, <subject>)` in an arm (`getattr(apex.optimizers, config.name)(params)`)."""
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" and \
                    len(n.args) >= 2 and ast.unparse(n.args[1]) == subject:
                return ast.unparse(n.args[0])
    return None


def lower_named_members(findings: list, tree: ast.AST) -> list:
    """tq45b (heldout52's richdreamer, threestudio's `parse_optimizer`): `if config.name in ["FusedAdam"]: import
    apex; optim = getattr(apex.optimizers, config.name)(...) ... else: optim = getattr(torch.optim, config.name)(...)`.
    The user names a class; the arm that takes it from a package with no NPU build is one member of the set whose
    torch arm builds the same kind of object (Adam, AdamW): its package findings (apex / third_party / kernel, an
    error or a guarded import's warning) are info, context `platform-class` (policy (k)). An arm without a torch
    sibling keeps them."""
    if not isinstance(tree, ast.Module) or not any(
            f.category in ("apex", "third_party", "kernel") and f.severity != "info" for f in findings):
        return findings
    spans: list[tuple[int, int, str, str]] = []
    for chain in if_chains(tree):
        tests = [_subject_and_label(arm.test) for arm in chain]
        subjects = {t[0] for t in tests if t is not None}
        if len(subjects) != 1 or None in tests:
            continue
        subject = subjects.pop()
        arms = [arm.body for arm in chain] + ([chain[-1].orelse] if chain[-1].orelse else [])
        sources = [_getattr_source(body, subject) for body in arms]
        torch_arms = [x for x in sources if x and x.split(".", 1)[0] == "torch"]
        if len(arms) < 2 or not torch_arms:
            continue
        for body, source in zip(arms, sources):
            if source and source.split(".", 1)[0] != "torch":
                spans.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno, subject, torch_arms[0]))
    if not spans:
        return findings
    out = []
    for f in findings:
        hit = next((s for s in spans if s[0] <= f.line <= s[1]), None) if f.severity != "info" and \
            f.category in ("apex", "third_party", "kernel") else None
        out.append(as_info(f, "platform-class", _NAMED_NOTE.format(subject=hit[2], other=hit[3])) if hit else f)
    return out


# tq56e (policy (k), heldout73's aps): `if backend == "horovod": hvd.init()` beside `if backend == "torch":
# dist.init_process_group(...)` (aps/distributed/backend.py, https://github.com/funcwj/aps). The arm the user's option
# names after a package uses that package; the same option's torch arm does the same job with torch's own API, which
# an Ascend run picks. The arm's findings of the package it is named for are info; the torch arm keeps its own (its
# "nccl" is a true error).
_LABEL_NOTE = ("the `{label}` member of a set the user picks by `{subject}`, whose `{other}` arm does the same job "
               "with torch: an Ascend run picks that arm; left as is")
_TORCH_LABELS = frozenset({"torch", "pytorch", "native", "ddp", "fsdp"})


def lower_label_members(findings: list, tree: ast.AST) -> list:
    """Open apex / third-party / kernel / distributed findings of package P inside the body of an `if <subject> ==
    "P":` arm: info, context `platform-class` (policy (k)), where the file also tests the same subject against a torch
    label (`"torch"`, `"native"`, `"ddp"`, ...). An arm named for another package, or a subject with no torch label,
    keeps them."""
    if not isinstance(tree, ast.Module) or not any(
            _open(f) and f.category in _PACKAGE_CATEGORIES and "." in (f.symbol or "") for f in findings):
        return findings
    arms: list[tuple[int, int, str, str]] = []
    labels: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (test := _subject_and_label(node.test)) and node.body:
            labels.setdefault(test[0], set()).add(test[1])
            arms.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno, *test))
    arms = [a for a in arms if labels[a[2]] & _TORCH_LABELS and a[3] not in _TORCH_LABELS]
    if not arms:
        return findings
    out = []
    for f in findings:
        top = (f.symbol or "").split(".", 1)[0].lower()
        hit = next((a for a in arms if a[0] <= f.line <= a[1] and a[3] == top), None) \
            if _open(f) and f.category in _PACKAGE_CATEGORIES and "." in (f.symbol or "") else None
        if hit:
            other = sorted(labels[hit[2]] & _TORCH_LABELS)[0]
            f = as_info(f, "platform-class", _LABEL_NOTE.format(label=hit[3], subject=hit[2], other=other))
        out.append(f)
    return out


# tq47b (policy (k), heldout56's sglang-omni): a registry of members, one module each. sglang-omni's relay transports
# are classes registered by name in sibling modules (`@register_relay("nccl") class NcclRelay` in relay/nccl.py beside
# `@register_relay("nixl")`, `"shm"`, `"mooncake"`), and the pipeline builds the one its `relay_type` names
# (`create_relay(relay_type)`): the module whose registered name is a CUDA word is the CUDA member of a per-backend set
# whose other members an Ascend run picks instead.
_REGISTERED_NOTE = "the `{key}` member of a set registered by `{decorator}` ({others}): the user or config picks one " \
                   "by name and an Ascend run picks another; left as is"
_MIN_OTHERS = 2
_PACKAGE_CATEGORIES = frozenset({"apex", "third_party", "kernel", "distributed"})


def _registrations(tree: ast.AST | None) -> list[tuple[str, str]]:
    """(decorator, name) of each top-level class or function registered by a one-string decorator call
    (`@register_relay("nccl")`)."""
    out = []
    for node in getattr(tree, "body", ()):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and len(d.args) == 1 and not d.keywords and \
                        isinstance(d.args[0], ast.Constant) and isinstance(d.args[0].value, str):
                    name = ast_dotted(d.func)
                    if name and "regist" in name.lower():
                        out.append((name, d.args[0].value))
    return out


def _imports_registrar(project: Any, rel: str) -> bool:
    """Whether the file imports a name spelling `regist` (`from .base import register_relay`), by its cached
    import-graph facts: only such files are read (a warm run reads no other)."""
    return any("regist" in str(name).lower() for load in (project.facts(rel) or {}).get("load", ())
               for name in [load[0], *(load[1] if len(load) > 1 else ())])


def _member_packages(findings: list, tree: ast.AST | None) -> set[str]:
    """tq56e (heldout73's aps, `@ApsRegisters.trainer.register("apex") class ApexTrainer` beside "ddp" / "hvd"): the
    names of the packages the module's open apex / third-party / kernel / distributed findings use, and the aliases
    the module imports them as (`import horovod.torch as hvd`): a member registered under such a name is the member
    built on that package, as one registered under a CUDA word is."""
    tops = {f.symbol.split(".", 1)[0].lower() for f in findings
            if _open(f) and f.category in _PACKAGE_CATEGORIES and f.symbol and "." in f.symbol}
    if not tops:
        return tops
    aliases = {a.asname.lower() for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names if a.asname and ((n.module or a.name) if isinstance(n, ast.ImportFrom)
                                                 else a.name).split(".", 1)[0].lower() in tops} if tree else set()
    return tops | aliases


def apply_registered_members(results: list, project: Any = None) -> int:
    """Lower the error / warning findings of a module registered under a CUDA name beside two or more sibling
    modules registered by the same decorator under other names to info (`platform-class`); returns how many."""
    if project is None:
        return 0
    paths = getattr(project, "paths", {})
    changed = 0
    for result in results:
        if not result.path.endswith(".py") or not any(_open(f) for f in result.findings):
            continue
        held = project.source(result.path) if _imports_registrar(project, result.path) else None
        if held is None or "regist" not in held[0]:
            continue
        built_on = _member_packages(result.findings, held[1])
        cuda = [(dec, key) for dec, key in _registrations(held[1])
                if backends_in_text(key.lower()) == {"cuda"} or key.lower() in built_on]
        if not cuda:
            continue
        folder = result.path.rpartition("/")[0]
        siblings = [rel for rel in paths if rel.endswith(".py") and rel != result.path
                    and rel.rpartition("/")[0] == folder]
        for decorator, key in cuda:
            others = sorted({k for rel in siblings if _imports_registrar(project, rel)
                             and (src := project.source(rel)) is not None and "regist" in src[0]
                             for d, k in _registrations(src[1]) if d == decorator and "cuda" not in backends_in_text(k.lower())})
            if len(others) >= _MIN_OTHERS:
                note = _REGISTERED_NOTE.format(key=key, decorator=decorator, others=", ".join(others[:5]))
                changed += discount_findings(result, "platform-class", note, lower=_open)
                break
    return changed


# tq51b (heldout64's ASearcher / AReaL copy): per-cluster environment sets. A launcher keeps one dict of environment
# settings per named cluster (`NA132_ENVIRONS = {"NCCL_IB_HCA": "mlx5_bond", ...}`) and applies it only when the run
# names that cluster (`if cluster_name == "na132": env.update(**NA132_ENVIRONS)`): the NVIDIA InfiniBand cluster's NCCL
# tuning is one member of a per-site set, and an Ascend run names its own cluster and never takes it (policy (k)).
_CLUSTER_NOTE = ("one member of a per-cluster set of environment settings, applied only when the run names cluster "
                 "`{label}` (`{subject}`): an Ascend cluster takes its own set; left as is")
_ENV_CATEGORIES = frozenset({"distributed", "device", "performance"})


def _cluster_test(test: ast.AST) -> tuple[str, str] | None:
    """(subject, label) of `<...cluster...> == "name"`, the run's cluster compared with one named cluster."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    for subject, label in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        dotted = ast_dotted(subject) or ""
        if "cluster" in dotted.lower() and isinstance(label, ast.Constant) and isinstance(label.value, str) \
                and not backends_in_text(label.value):
            return dotted, label.value
    return None


def _subject_defaults(tree: ast.AST) -> dict[str, Any]:
    """The literal defaults the file gives names a cluster test may compare: its options (argparse, dataclass fields:
    `option_defaults`) and its functions' parameters (`def get_env_vars(cluster_name="local")`)."""
    from auditor.project.launched import option_defaults

    out = {name: value for name, value in option_defaults(tree).items() if isinstance(name, str)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                     *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)]
            for arg, default in pairs:
                if isinstance(default, ast.Constant):
                    out.setdefault(arg.arg, default.value)
    return out


def lower_cluster_environs(findings: list, tree: ast.AST) -> list:
    """Environment-variable findings inside a module-level dict of settings (string keys) whose every read in the file
    sits in the body of one `if <cluster> == "name":` test: info, context `platform-class` (policy (k)), where the file
    holds a set - another such dict under another name of the same subject, or a dict read outside every cluster test
    (the base the named cluster's dict adds to) - and "name" is not the subject's default in the file. A dict read
    anywhere else, or never read here, keeps them."""
    if not isinstance(tree, ast.Module) or not any(
            f.severity != "info" and f.category in _ENV_CATEGORIES and f.symbol and f.symbol.isupper()
            for f in findings):
        return findings
    tables = {t.id: stmt for stmt in tree.body if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict)
              and stmt.value.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in stmt.value.keys)
              for t in stmt.targets if isinstance(t, ast.Name)}
    if not tables:
        return findings
    # each read of a table: the cluster test of the `if` whose body holds it, or None
    reads: dict[str, list[tuple[str, str] | None]] = {}
    gated: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (test := _cluster_test(node.test)):
            for n in (n for stmt in node.body for n in ast.walk(stmt)):
                if isinstance(n, ast.Name) and n.id in tables and isinstance(n.ctx, ast.Load):
                    reads.setdefault(n.id, []).append(test)
                    gated.add(id(n))
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in tables and isinstance(n.ctx, ast.Load) and id(n) not in gated:
            reads.setdefault(n.id, []).append(None)
    gated_tables: dict[str, tuple[str, str]] = {
        name: first for name, tests in reads.items()
        if None not in tests and len(set(tests)) == 1 and (first := tests[0]) is not None}
    # a set, not one table (review51 item 5): another table under another label of the same subject (`PPU_ENVIRONS`
    # under "wa180" beside `NA132_ENVIRONS` under "na132"), or a base table every run takes that the named cluster's
    # table adds to; and never the label the subject takes by default (`--cluster` with `default="slurm"`: the
    # default run applies it)
    based = any(None in tests for tests in reads.values())
    defaults = _subject_defaults(tree)
    spans = [(tables[name].lineno, tables[name].end_lineno or tables[name].lineno, test)
             for name, test in gated_tables.items()
             if (based or any(o[0] == test[0] and o[1] != test[1] for o in gated_tables.values()))
             and defaults.get(test[0].rsplit(".", 1)[-1]) != test[1]]
    if not spans:
        return findings
    out = []
    for f in findings:
        hit = next((s for s in spans if s[0] <= f.line <= s[1]), None) \
            if f.severity != "info" and f.category in _ENV_CATEGORIES else None
        out.append(as_info(f, "platform-class", _CLUSTER_NOTE.format(label=hit[2][1], subject=hit[2][0])) if hit else f)
    return out
