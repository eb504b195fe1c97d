#!/usr/bin/env python3
"""Generate rules/distributed_library_trainers.yaml (NPU989): trainer factories of a training library, looked up by
name, whose trainer class starts an NCCL process group itself (tp52b, issue 15; tuned on project test145).

Source (read as data from the published wheel, never imported): EVer, the remote-sensing training library that
ChangeStar and LoveDA install (`pip install ever-beta==0.2.3` in their READMEs; `--ever-wheel`, default
rules/gen/.cache/ever_beta-0.2.3-py3-none-any.whl, from `pip download --no-deps ever-beta==0.2.3`). Its
ever/api/trainer/__init__.py maps names to trainer classes (`TRAINER = dict(th_ddp=THDDPTrainer, ...)` and
`if trainer_name == 'th_amp_ddp': from .th_amp_ddp_trainer import THAMPDDPTrainer`) in `get_trainer(trainer_name)`,
which ever/__init__.py re-exports as `ever.trainer` (`from ever.api import trainer`). A name is NCCL's when its class's
constructor or `run` calls `init_process_group` with the literal backend "nccl" (`THAMPDDPTrainer.__init__`: `if
torch.cuda.is_available(): torch.cuda.set_device(...); dist.init_process_group(backend="nccl", ...)`).

    python rules/gen/library_nccl_trainers.py [--from-sources [--ever-wheel ever_beta-X-py3-none-any.whl]]
"""
from __future__ import annotations

import ast
from pathlib import Path

from sources import REPO, RULES_DIR, Pins, SourceError, Wheel, generator_args, run_main, write_outputs, yaml_text

OUT = RULES_DIR / "distributed_library_trainers.yaml"
DEFAULT_WHEEL = REPO / "rules" / "gen" / ".cache" / "ever_beta-0.2.3-py3-none-any.whl"
FACTORY_MODULE = "ever/api/trainer/__init__.py"
FACTORY = "get_trainer"


def _sources(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise SourceError(f"{path} does not exist (pip download --no-deps ever-beta==0.2.3, or pass --ever-wheel)")
    return dict(Wheel(path).texts((".py",)))


def _relative_imports(nodes) -> dict[str, str]:
    """class name -> module file of each `from .mod import Cls` among nodes (the factory's folder)."""
    folder = FACTORY_MODULE.rsplit("/", 1)[0]
    return {a.asname or a.name: f"{folder}/{n.module}.py" for n in nodes
            if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module for a in n.names}


def trainer_classes(sources: dict[str, str]) -> dict[str, list[str]]:
    """name -> [module file, class] of each trainer `get_trainer(name)` returns: the module-level dict's entries and
    the names its `if trainer_name == '<name>':` branches import and add."""
    tree = ast.parse(sources[FACTORY_MODULE], filename=FACTORY_MODULE)
    classes = _relative_imports(tree.body)
    out: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Name) and node.value.func.id == "dict":
            for kw in node.value.keywords:
                if kw.arg and isinstance(kw.value, ast.Name) and kw.value.id in classes:
                    out[kw.arg] = [classes[kw.value.id], kw.value.id]
        if isinstance(node, ast.FunctionDef) and node.name == FACTORY:
            for branch in ast.walk(node):
                if isinstance(branch, ast.If) and isinstance(branch.test, ast.Compare) and \
                        isinstance(branch.test.comparators[0], ast.Constant):
                    imported = _relative_imports(branch.body)
                    for cls, module in imported.items():
                        out[str(branch.test.comparators[0].value)] = [module, cls]
    if not out:
        raise SourceError(f"{FACTORY_MODULE}: no trainers found in `{FACTORY}`: the layout changed")
    return dict(sorted(out.items()))


def starts_nccl(source: str, cls: str, where: str) -> bool:
    """Does a method of class `cls` (`__init__`, `run`) call `init_process_group` with the literal backend "nccl"?"""
    for node in ast.parse(source, filename=where).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    for call in ast.walk(item):
                        if isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(
                                call.func, "id", None)) == "init_process_group":
                            values = [a for a in call.args[:1]] + [k.value for k in call.keywords if k.arg == "backend"]
                            if any(isinstance(v, ast.Constant) and v.value == "nccl" for v in values):
                                return True
    return False


def reexports(sources: dict[str, str]) -> list[str]:
    """The qualified names of the factory: its own module's and the package root's `from ever.api import trainer`."""
    module = FACTORY_MODULE.removesuffix("/__init__.py").replace("/", ".")
    names = [f"{module}.{FACTORY}"]
    root = ast.parse(sources.get("ever/__init__.py", ""), filename="ever/__init__.py")
    parent, _, last = module.rpartition(".")
    for node in root.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == parent and \
                any(a.name == last for a in node.names):
            names.append(f"ever.{last}.{FACTORY}")
    return sorted(set(names))


def facts(path: Path) -> dict:
    sources = _sources(path)
    trainers = trainer_classes(sources)
    nccl = sorted(name for name, (module, cls) in trainers.items()
                  if module in sources and starts_nccl(sources[module], cls, module))
    return {"qualnames": reexports(sources), "trainers": trainers, "nccl": nccl}


def outputs(pins: Pins, wheel: Path = DEFAULT_WHEEL) -> dict:
    """{rule file: its text} from the pinned facts (recorded from the wheel when pins.record)."""
    if pins.record:
        pins.original("ever-beta", wheel.name, wheel.name.split("-")[1], wheel)
    found = pins.fact("trainers", lambda: facts(wheel))
    version = pins.data["originals"]["ever-beta"]["version"]
    if not found["nccl"]:
        raise SourceError("no trainer of the wheel starts an NCCL group: nothing to generate")
    where = "; ".join(f"{name}: {cls} ({module})" for name, (module, cls) in found["trainers"].items()
                      if name in found["nccl"])
    note = (f"generated by rules/gen/library_nccl_trainers.py from ever-beta {version} (PyPI wheel): "
            f"{FACTORY_MODULE} `{FACTORY}` names whose classes (their methods) call "
            f"init_process_group(backend=\"nccl\"): {where}")
    rules = [{
        "code": "NPU989", "name": "library-trainer-nccl-backend", "category": "distributed", "severity": "error",
        "effort": "medium", "fix": "none",
        "message": "`{symbol}` returns a trainer that starts an NCCL process group itself (EVer " + version + ")",
        "substitution": "a trainer that starts the group with the \"hccl\" backend (subclass it and call "
                        "`dist.init_process_group(backend=\"hccl\")` after `torch.npu.set_device`), or the same training "
                        "loop with `torch.nn.parallel.DistributedDataParallel` on the NPU",
        "match": [{"qualname": found["qualnames"]}],
        "when": {"arg": {"pos": 0, "values": found["nccl"]}},
        "source_note": note,
        "doc": {
            "what": "EVer's `er.trainer.get_trainer('th_amp_ddp')` (the names listed in the match): a trainer class looked "
                    "up by name from the library, which starts the process group itself.",
            "why": "The class's constructor (or `run`) calls `dist.init_process_group(backend=\"nccl\")` under "
                   "`torch.cuda.is_available()`: on Ascend there is no NCCL (without transfer_to_npu the guard skips "
                   "the group and the DistributedDataParallel wrapper it builds next fails).",
            "use_instead": "A trainer that initialises the process group with the \"hccl\" backend.",
        },
        "examples": {
            "flag": ["import ever as er\n\ntrainer = er.trainer.get_trainer('th_amp_ddp')()\ntrainer.run()\n"],
            "ok": ["import ever as er\n\ntrainer = er.trainer.get_trainer('dp')()\ntrainer.run()\n"],
        },
    }]
    header = ("# GENERATED by rules/gen/library_nccl_trainers.py - do not edit by hand; rerun the script.\n"
              f"# Source: ever-beta {version} (PyPI wheel, sha256 in rules/gen/inputs/library_nccl_trainers.json).\n")
    return {OUT: yaml_text(header, {"family": "distributed", "rules": rules})}


def main() -> None:
    ap = generator_args(__doc__.split("\n", 1)[0], wheel=False)
    ap.add_argument("--ever-wheel", type=Path, default=DEFAULT_WHEEL, help="the ever-beta wheel for --from-sources")
    args = ap.parse_args()
    pins = Pins("library_nccl_trainers", record=args.from_sources)
    write_outputs(outputs(pins, args.ever_wheel), pins)


if __name__ == "__main__":
    run_main(main)
