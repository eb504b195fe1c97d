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

Per-file part (`chosen_imports`, kept in each module's `members` facts so a warm run reads no file); tree part
(`apply_chosen_members`, once per run after the per-file passes).
"""
from __future__ import annotations

import ast
from typing import Any

from auditor.static.astutil import if_chains
from auditor.static.backends import DISCOUNTED, discount_findings
from auditor.static.module_paths import absolute_module, module_names
from auditor.static.project_imports import TREE

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


def _imports_in(body: list[ast.stmt]) -> list[list[Any]]:
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
                   for level, module in _imports_in(a[1])]
        if len(arms) >= _MIN_ARMS and len({m[0] for m in members}) >= _MIN_ARMS:
            out.append([subjects.pop(), members])
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


def _open(finding) -> bool:
    """An error or warning no per-backend / other-backend reading has discounted (a guard's warning counts)."""
    return finding.severity != "info" and finding.data.get("context") not in DISCOUNTED


def _cuda_only(files: list) -> bool:
    return any(f.name in _NVIDIA_ONLY_RULES and _open(f) for r in files for f in r.findings)


def apply_chosen_members(results: list) -> int:
    """Lower the error / warning findings of the CUDA-only members of option-chosen per-backend sets to info
    (module doc); returns how many changed."""
    chains: list[tuple[str, str, list[list[Any]]]] = []
    for r in results:
        facts = r.summary.get(TREE) if isinstance(r.summary, dict) else None
        members = facts.get("members") if isinstance(facts, dict) else None
        for subject, arms in (members.get("chosen") or ()) if isinstance(members, dict) else ():
            chains.append((r.path, subject, arms))
    if not chains:
        return 0
    rels = [r.path for r in results]
    names = module_names(rels)
    by_rel = {r.path: r for r in results}
    changed = 0
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
