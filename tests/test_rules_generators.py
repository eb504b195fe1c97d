"""Every generated rule file is what its generator builds from the pins committed in rules/gen/inputs/, byte
for byte and offline (issue 19): the generator is run in memory (no original is read, nothing is
downloaded) and its text compared with the committed file.  A failure means the rule file was edited by
hand or the pins changed: rerun `python rules/gen/<generator>.py` (or with --from-sources to re-pin)."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

GEN = Path(__file__).resolve().parent.parent / "rules" / "gen"
READS_ONLY_THE_REPOSITORY = {"hccl_rules"}
GENERATORS = ["apex_optimizers", "colossalai_kernels", "cuda_api", "deepspeed_ops", "env_vars", "hccl_rules",
              "library_nccl_trainers", "mmcv_npu_ops", "precision_dtypes", "torch_op_namespaces", "torch_optimizers"]


def _module(name: str):
    if str(GEN) not in sys.path:
        sys.path.insert(0, str(GEN))
    return importlib.import_module(name)


def test_every_generator_is_listed():
    scripts = {p.stem for p in GEN.glob("*.py")} - {"sources"}
    assert scripts == set(GENERATORS)


@pytest.mark.parametrize("name", GENERATORS)
def test_generated_rule_files_reproduce_from_the_pins(name, monkeypatch):
    mod = _module(name)
    sources = _module("sources")
    # an original touched in a plain run would be a bug: make every way of reaching one fail loudly
    monkeypatch.setattr(sources, "torch_npu_wheel", lambda *a, **k: pytest.fail(f"{name} looked for a wheel"))
    # hccl_rules reads only op_tables/hccl.json, which the repository holds: it has no pins
    pins = None if name in READS_ONLY_THE_REPOSITORY else sources.Pins(name)
    texts = mod.outputs(pins)
    assert texts, f"{name} produced no rule file"
    for path, text in texts.items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: rerun python rules/gen/{name}.py"


@pytest.mark.parametrize("name", [g for g in GENERATORS if g not in READS_ONLY_THE_REPOSITORY])
def test_pins_record_their_originals(name):
    sources = _module("sources")
    pins = sources.Pins(name)
    assert pins.data["originals"] and pins.data["facts"]
    for key, row in pins.data["originals"].items():
        assert row.get("name") and row.get("version"), (name, key)
