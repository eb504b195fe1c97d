"""Per-file facts for the tree passes that used to read every Python file of the tree again (session 10, hs10;
cache FORMAT 6): the operators a file defines with torch.library (opnamespaces.python_defined_ops, read when a
`torch.ops.<ns>` namespace is not first-party) and the config folders of a Hydra entry that imports an Ascend
adaptor (npu_native.apply_hydra_configs, read when a YAML config holds a Megatron switch warning). Computed once per
file in the worker (project_imports.tree_facts, key `tree` of the summary, kept in the cache entry); each pass must
give what it gave when it read the files itself, and read none of them when the summaries hold the facts."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from auditor.static.npu_native import _config_folders, hydra_folders
from auditor.static.opnamespaces import defined_ops_fact, python_defined_ops, python_registrations
from auditor.static.project_imports import TREE, ProjectImports
from tests.static_snippets import write_tree
from tests.test_precision_t11h import HYDRA_CONFIG, HYDRA_ENTRY
from tests.test_precision_t11i import CUDA_EXTENSION_OP, CUDA_ONLY_OP, OPS_EVENT, OPS_LIB, OPS_TREE, ST_REINPLACE


def _ops_tree(root: Path) -> Path:
    return write_tree(root, OPS_TREE)


def _hydra_tree(root: Path, entry: str = HYDRA_ENTRY) -> Path:
    return write_tree(root, {"cli/train_grpo.py": entry, "configs/grpo_qwen_7b_A3.yaml": HYDRA_CONFIG,
                             "rl_trainer/__init__.py": "", "rl_trainer/workers.py": "import ray\n"})


def _files(run, root: Path) -> list[tuple[Path, str]]:
    return [(root / r.path, r.path) for r in run.results]


def _findings(run) -> list[tuple[str, int, str, str, str]]:
    return sorted((r.path, f.line, f.code, f.severity, str(f.data.get("context"))) for r in run.results
                  for f in r.findings)


def _refuse_python_reads(monkeypatch) -> None:
    """Fail the test if anything reads a `.py` file with Path.read_bytes / read_text or os.open."""
    import os

    real_text, real_bytes, real_open = Path.read_text, Path.read_bytes, os.open

    def check(path) -> None:
        if str(path).endswith(".py"):
            raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (check(self), real_text(self, *a, **k))[1])
    monkeypatch.setattr(Path, "read_bytes", lambda self, *a, **k: (check(self), real_bytes(self, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (check(path), real_open(path, *a, **k))[1])


# -- torch.library operators -----------------------------------------------------------------------------------

def test_defined_ops_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    root = _ops_tree(tmp_path)
    run = run_static([root], jobs=1)
    facts = {r.path: r.summary[TREE] for r in run.results if r.path.endswith(".py")}
    # the operators each file defines, kept with its summary (only non-empty facts are written)
    assert facts["tests/st/reinplace_st.py"] == {"ops": ["custom.sin_cos_inplace"], "framework": "PyTorch"}
    assert "ops" not in facts["torchair_like/ops/_tagged_event.py"]     # `lib.define` without its own Library(...)
    assert "ops" not in facts["kern/fused.py"] and "ops" not in facts["vq/kernels.py"]     # CUDA-only operators
    files = _files(run, root)
    wanted = {"custom", "air", "fastkern", "mykern", "vq"}
    reference = python_defined_ops(files, wanted)        # no project: every Python file read, as before
    assert reference == {"custom.sin_cos_inplace"}
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert python_defined_ops(files, wanted, project) == reference
    assert project.reads == 0


def test_a_summary_without_the_tree_facts_reads_the_file_as_before(tmp_path):
    root = _ops_tree(tmp_path)
    run = run_static([root], jobs=1)
    for r in run.results:                    # a caller that built the summaries itself, without `tree`
        if r.summary:
            r.summary.pop(TREE, None)
    files = _files(run, root)
    project = ProjectImports(files, run.results)
    assert python_defined_ops(files, {"custom"}, project) == {"custom.sin_cos_inplace"}
    assert project.reads == sum(rel.endswith(".py") for _, rel in files)


@pytest.mark.parametrize("source", [
    ST_REINPLACE, CUDA_ONLY_OP, CUDA_EXTENSION_OP, OPS_LIB, OPS_EVENT,
    'from torch.library import custom_op\n\n@custom_op("mylib::rms_norm", mutates_args=())\ndef f(x): ...\n',
    'from torch._library import triton_op\n\n@triton_op ( "kern::add", mutates_args={})\ndef add(x, y): ...\n',
    'torch.library.define("ns::op(Tensor x) -> Tensor")\ntorch.library.impl("ns::op", "npu", f)\n',
    'lib = Library("ext", "DEF")\nlib.define(f"scale(Tensor x) -> Tensor")\n',
    'x = y[::2]\nz = {"a": 1}\n',
    'lib = torch.library.Library("aten", "IMPL")\nlib.impl("add.Tensor", add_npu, "PrivateUse1")\n',
])
def test_the_word_test_never_changes_what_a_file_defines(source):
    data = textwrap.dedent(source).encode()
    assert defined_ops_fact(data) == sorted(python_registrations(data))


GUARD = """\
    import torch

    if not hasattr(getattr(torch.ops, "npugraph_ex"), "record_tagged_stream"):
        pass
    if not hasattr(getattr(torch.ops, "fastkern"), "rms_norm"):  # a second getattr(torch.ops, "fastkern") too
        pass
    if getattr(torch.ops, "air", None) or getattr(torch.ops, "npu", None):
        pass
    """


def test_getattr_namespaces_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    from dataclasses import replace

    from auditor.runner import _unreported_op_namespaces
    from auditor.static.opnamespaces import literal_namespaces

    root = write_tree(tmp_path, {"ops/guard.py": GUARD, "ops/__init__.py": ""})
    run = run_static([root], jobs=1)
    guard = next(r for r in run.results if r.path == "ops/guard.py")
    assert guard.summary[TREE]["getattr"] == {"3": ["npugraph_ex"], "5": ["fastkern", "fastkern"],
                                              "7": ["air", "npu"]}
    # the findings as the pass first sees them: `getattr(torch.ops, ...)` has the symbol `torch.ops`
    raw = [replace(f, symbol="torch.ops") if f.code == "NPU380" else f for f in guard.findings]
    assert {f.line for f in raw if f.code == "NPU380"} >= {5}
    files = _files(run, root)
    old, new = (replace(guard, findings=list(raw)) for _ in range(2))
    not_reported = _unreported_op_namespaces()
    dropped = literal_namespaces([old], files, not_reported)
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert literal_namespaces([new], files, not_reported, project) == dropped
    assert new.findings == old.findings and project.reads == 0


def test_getattr_of_the_files_own_library_comes_from_the_worker_warm_and_cold(tmp_path, monkeypatch):
    """t11j's drop (`getattr(torch.ops, lib_name)` where the same file registers `Library(lib_name, ...)`) is read
    from the per-file fact `getattr_own` (FORMAT 7): the same findings cold, warm and without a cache, and the warm
    run reads no Python file."""
    from tests.test_precision_t11j import REGISTRY

    source = textwrap.dedent(REGISTRY)
    root = write_tree(tmp_path / "tree", {"vendor_ops/registry.py": source,
                                          "vendor_ops/vendor.py": "dispatch_key = 'PrivateUse1'\n",
                                          "vendor_ops/__init__.py": ""})
    cache = tmp_path / "cache"
    nocache = run_static([root], jobs=1)
    cold = run_static([root], jobs=1, cache_dir=cache)
    registry = next(r for r in cold.results if r.path == "vendor_ops/registry.py")
    own_line = source.splitlines().index("        namespace = getattr(torch.ops, lib_name)") + 1
    assert registry.summary[TREE]["getattr_own"] == [own_line]
    _refuse_python_reads(monkeypatch)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _findings(warm) == _findings(cold) == _findings(nocache)
    assert (own_line, "NPU380") not in {(f.line, f.code) for r in warm.results for f in r.findings}


# -- Hydra entries that load an Ascend adaptor -------------------------------------------------------------------

def test_hydra_config_folders_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    root = _hydra_tree(tmp_path)
    run = run_static([root], jobs=1)
    entry = next(r for r in run.results if r.path == "cli/train_grpo.py")
    assert entry.summary[TREE] == {"hydra": ["configs"]}     # (no findings of its own: no framework fact)
    config = next(r for r in run.results if r.path == "configs/grpo_qwen_7b_A3.yaml")
    assert {f.code: f.severity for f in config.findings if f.code in ("NPU122", "NPU363")} == \
        {"NPU122": "info", "NPU363": "info"}
    files = _files(run, root)
    reference = _config_folders(files)
    assert reference == {"configs": "cli/train_grpo.py"}
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert _config_folders(files, project) == reference
    assert project.reads == 0


def test_a_plain_hydra_entry_has_no_folder_fact(tmp_path):
    plain = HYDRA_ENTRY.replace("from mindspeed_llm.training.arguments import parse_args_decorator",
                                "from rl_trainer.arguments import parse_args_decorator")
    root = _hydra_tree(tmp_path, plain)
    run = run_static([root], jobs=1)
    assert next(r for r in run.results if r.path == "cli/train_grpo.py").summary[TREE] == {}
    config = next(r for r in run.results if r.path == "configs/grpo_qwen_7b_A3.yaml")
    assert {f.code: f.severity for f in config.findings if f.code in ("NPU122", "NPU363")} == \
        {"NPU122": "error", "NPU363": "warning"}


def test_hydra_folders_of_several_entries_and_the_size_limit(monkeypatch):
    entry = textwrap.dedent(HYDRA_ENTRY).replace(
        "@hydra.main(config_path='../configs'",
        "@hydra.main(config_path=\"conf\", config_name='a')\ndef other(c):\n    pass\n\n\n"
        "@hydra.main(config_path='../configs'").encode()
    # in order, each folder once, relative to the entry's folder; a path that climbs out of the tree is left out
    assert hydra_folders(entry, "cli/train_grpo.py") == ["cli/conf", "configs"]
    assert hydra_folders(entry, "train_grpo.py") == ["conf"]
    assert hydra_folders(entry.replace(b"'../configs'", b"'.'"), "train.py") == ["conf", ""]
    import auditor.discover

    # a file over the default size limit was never read by the pass: no fact either
    monkeypatch.setattr(auditor.discover, "MAX_FILE_BYTES", len(entry) - 1)
    assert hydra_folders(entry, "cli/train_grpo.py") == []


# -- the cache ---------------------------------------------------------------------------------------------------

def test_warm_run_equals_cold_run_and_reads_no_python_file(tmp_path, monkeypatch):
    root = _ops_tree(tmp_path / "tree")
    write_tree(root, {"cli/train_grpo.py": HYDRA_ENTRY, "configs/grpo_qwen_7b_A3.yaml": HYDRA_CONFIG})
    _paddle_tree(root)
    _debug_tree(root)       # FORMAT 8: the NPU700 lines' `quiet` fact
    from tests.test_precision_policy import _TORCHCHAT_WORKFLOW

    write_tree(root, {".github/workflows/run-readme-pr.yml": _TORCHCHAT_WORKFLOW})     # FORMAT 9: `ci`
    _subpackage_tree(root)      # FORMAT 11: `top_npu`, `relative` (ascend_subpackages)
    _docker_tree(root)          # FORMAT 11: `ascend_image` (ascend_dockerfile_sibling)
    _vendor_tree(root, broken=False)       # FORMAT 11: `vendor_npu`, `vendor_cuda` (apply_vendor_dispatch_tree)
    from tests.test_project_t23c import DIGRESS_EXPERIMENT, DIGRESS_GROUP, DIGRESS_MAIN

    # t23e: a config whose device count the code reads by name (setting_reads' `setting_reads` fact)
    write_tree(root, {"digress/src/main.py": DIGRESS_MAIN,
                      "digress/configs/experiment/sbm.yaml": DIGRESS_EXPERIMENT,
                      "digress/configs/general/general_default.yaml": DIGRESS_GROUP})
    cache = tmp_path / "cache"
    nocache = run_static([root], jobs=1)
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert cold.cached_files == 0
    index = next(cache.rglob("*.json"))
    entries = json.loads(index.read_text())["entries"]
    kept = {Path(p).name: e["summary"][TREE] for p, e in entries.items() if p.endswith(".py")}
    assert kept["reinplace_st.py"] == {"ops": ["custom.sin_cos_inplace"], "framework": "PyTorch"}
    assert kept["train_grpo.py"] == {"hydra": ["configs"]}      # (no findings: no framework fact)
    assert set(kept["launch.py"]["quiet"]) == {"8:ASCEND_LAUNCH_BLOCKING", "9:ASCEND_GLOBAL_LOG_LEVEL",
                                               "11:ASCEND_LAUNCH_BLOCKING", "12:ASCEND_GLOBAL_LOG_LEVEL"}
    assert [s[2] for s in entries[next(p for p in entries if p.endswith(".yml"))]["summary"][TREE]["ci"]] == \
        ["test-quantization-any"]
    by_end = {p.replace("\\", "/"): e["summary"][TREE] for p, e in entries.items() if p.endswith(".py")}
    assert next(f for p, f in by_end.items() if p.endswith("deep_ep/deep_ep/__init__.py"))["relative"] == \
        ["buffer", "utils"]
    assert next(f for p, f in by_end.items() if p.endswith("deep_ep/deep_ep/buffer.py"))["top_npu"] is True
    reads = next(e["summary"]["setting_reads"] for p, e in entries.items() if p.endswith("digress/src/main.py"))
    assert ["general", "gpus"] in reads["under"]
    assert not {r.path for r in cold.results for f in r.findings if r.path.startswith("digress/configs/")}
    _refuse_python_reads(monkeypatch)         # the warm run reads no Python file: not the worker, not a tree pass
    _refuse_reads_of(monkeypatch, ".yml")      # nor the workflow (apply_cuda_ci_jobs reads its `ci` fact)
    _refuse_dockerfile_reads(monkeypatch)      # nor a Dockerfile (ascend_dockerfile_sibling reads `ascend_image`)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results)
    assert _findings(warm) == _findings(cold) == _findings(nocache)
    assert warm.project_reads == 0


def test_an_index_written_before_format_6_is_not_read(tmp_path):
    from auditor import cache as cache_module

    root = _hydra_tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    index = next(cache.rglob("*.json"))
    doc = json.loads(index.read_text())
    assert doc["facts"] == cache_module.FACTS and "format" not in doc
    for entry in doc["entries"].values():      # what FORMAT 5 wrote: no tree facts
        if entry.get("summary"):
            entry["summary"].pop(TREE, None)
    index.write_text(json.dumps({"format": 5, **{k: v for k, v in doc.items() if k != "facts"}}))
    again = run_static([root], jobs=1, cache_dir=cache)
    assert again.cached_files == 0
    assert _findings(again) == _findings(cold)


def test_an_index_of_the_numbered_scheme_is_not_read(tmp_path):
    """The last numbered index (FORMAT 13, hs14 replaced the number by FACTS), same key, every entry intact, is
    dropped and rebuilt, never read; the rebuilt one is read by the next run."""
    root = _hydra_tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    index = next(cache.rglob("*.json"))
    doc = json.loads(index.read_text())
    assert doc["entries"]
    index.write_text(json.dumps({"format": 13, **{k: v for k, v in doc.items() if k != "facts"}}))
    again = run_static([root], jobs=1, cache_dir=cache)
    assert again.cached_files == 0
    assert _findings(again) == _findings(cold)
    assert json.loads(index.read_text())["facts"] == doc["facts"]
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results) > 0
    assert _findings(warm) == _findings(cold)


@pytest.mark.parametrize("change", ["bump", "add", "drop"])
def test_a_changed_fact_family_drops_the_whole_index(tmp_path, monkeypatch, change):
    """One family's version bumped (or a family added by another change, or one dropped): no entry of the index is
    read, whatever family it holds; the other indexes' files are untouched by the reading."""
    from auditor import cache as cache_module

    root = _hydra_tree(tmp_path / "tree")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert run_static([root], jobs=1, cache_dir=cache).cached_files == len(cold.results) > 0
    facts = dict(cache_module.FACTS)
    if change == "bump":
        facts["ci"] += 1
    elif change == "add":
        facts["a_new_family"] = 1
    else:
        facts.pop("quiet")
    monkeypatch.setattr(cache_module, "FACTS", facts)
    again = run_static([root], jobs=1, cache_dir=cache)
    assert again.cached_files == 0
    assert _findings(again) == _findings(cold)
    index = next(cache.rglob("*.json"))
    assert json.loads(index.read_text())["facts"] == facts
    assert run_static([root], jobs=1, cache_dir=cache).cached_files == len(cold.results)


def test_every_fact_family_has_a_version():
    from auditor import cache as cache_module

    assert cache_module.FACTS and all(type(v) is int and v >= 1 for v in cache_module.FACTS.values())
    assert all(k and k == k.strip() for k in cache_module.FACTS)


# -- a first-party package's Triton-Ascend backend folder (backends.triton_ascend_backend) -----------------------

def test_the_triton_ascend_backend_module_comes_from_the_worker_and_equals_the_old_reading(tmp_path, monkeypatch):
    from auditor.static.backends import _TRITON_IMPORT, import_in_head, triton_ascend_backend, triton_facts
    from auditor.static.firstparty import first_party_packages
    from tests.test_precision_policy import _triton_tree

    _triton_tree(tmp_path, with_ascend=True)
    run = run_static([tmp_path], jobs=1)
    files = _files(run, tmp_path)
    packages = first_party_packages(rel for _, rel in files)
    reference = triton_ascend_backend(files, packages)         # no project: each candidate read, as before
    assert reference == "src/flag_gems/runtime/backend/_ascend/ops/max.py"
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert triton_ascend_backend(files, packages, project) == reference
    assert project.reads == 0
    # the window stays the pass's 200,000 bytes: an import after it is not seen, one inside it is
    late = b"x = 1\n" * 40_000 + b"import triton\n"
    assert triton_facts(late, False) == {"import": True, "late": True}
    assert triton_facts(late[-120_000:], False) == {"import": True}
    # `\b` at the end of the window: `import triton` cut at 200,000 bytes matches there, `import tritonx` does not
    edge = b"x = 1\n" * 33_331 + b"\nimport tritonx\n"
    assert edge[:200_000].endswith(b"import triton")
    assert triton_facts(edge, False) == {"early": True}
    for data in (late, late[-120_000:], edge):
        assert import_in_head(triton_facts(data, False)) == (_TRITON_IMPORT.search(data[:200_000]) is not None)


def test_an_ascend_folder_module_without_a_triton_import_is_no_backend_from_facts_either(tmp_path):
    from auditor.static.backends import triton_ascend_backend
    from tests.test_precision_policy import _triton_tree
    from tests.static_snippets import write_source

    _triton_tree(tmp_path, with_ascend=False)
    write_source(tmp_path, "src/flag_gems/runtime/backend/_ascend/__init__.py",
                 "import torch_npu\n\nvendor_name = 'ascend'\ndevice_name = 'npu'\n")
    run = run_static([tmp_path], jobs=1)
    files = _files(run, tmp_path)
    project = ProjectImports(files, run.results)
    assert triton_ascend_backend(files, frozenset({"flag_gems"}), project) is None
    assert triton_ascend_backend(files, frozenset({"flag_gems"})) is None


# -- another framework's files (frameworks.apply_other_frameworks) -----------------------------------------------

def _paddle_tree(root: Path) -> Path:
    from tests.test_precision_policy import _PADDLE_CONFIG, _TORCH_CONFIG

    return write_tree(root, {
        "training/benchmarks/gpt3_13B/paddle/config/_base.py": _PADDLE_CONFIG,
        "training/benchmarks/gpt3_13B/pytorch/config/_base.py": _TORCH_CONFIG,
        "training/run_benchmarks/paddle/start_paddle_task.py":
            "import os\nimport paddle\n\nos.environ['NCCL_ALGO'] = 'Ring'\npaddle.set_device('gpu')\n",
        "training/run_benchmarks/paddle/run.sh": "export NCCL_ALGO=Ring\npython start_paddle_task.py\n",
        "training/run_benchmarks/tf/train.py": "import tensorflow as tf\nimport os\n\nos.environ['NCCL_ALGO'] = 'Ring'\n",
        "tools/paddle_to_torch.py": "import paddle\nimport torch\n\nstate = paddle.load('m.pdparams')\nmodel.cuda()\n",
    })


def test_the_framework_of_each_file_comes_from_the_worker_and_equals_the_old_reading(tmp_path, monkeypatch):
    from auditor.static.frameworks import file_framework

    root = _paddle_tree(tmp_path)
    run = run_static([root], jobs=1)
    with_findings = [r for r in run.results if r.findings]
    facts = {r.path: r.summary[TREE]["framework"] for r in with_findings}
    assert facts["training/run_benchmarks/paddle/start_paddle_task.py"] == "PaddlePaddle"
    assert facts["training/run_benchmarks/tf/train.py"] == "TensorFlow"
    assert facts["tools/paddle_to_torch.py"] == "PyTorch"
    assert facts["training/run_benchmarks/paddle/run.sh"] == ""        # a script: its folder names the framework
    reference = {r.path: file_framework(root / r.path, r.path) for r in with_findings}
    assert reference["training/run_benchmarks/paddle/run.sh"] == "PaddlePaddle"
    assert reference["tools/paddle_to_torch.py"] is None
    _refuse_python_reads(monkeypatch)
    assert {r.path: file_framework(root / r.path, r.path, facts[r.path]) for r in with_findings} == reference
    # the findings: Paddle's and TensorFlow's code is info, the PyTorch converter keeps its error
    severities = {(r.path, f.severity) for r in run.results for f in r.findings}
    assert ("training/run_benchmarks/tf/train.py", "info") in severities
    assert not {s for p, s in severities if p == "training/run_benchmarks/tf/train.py"} - {"info"}
    assert ("tools/paddle_to_torch.py", "error") in severities


def test_a_file_over_two_megabytes_is_named_by_its_path_only():
    from auditor.static.frameworks import _MAX_BYTES, framework_fact

    assert framework_fact(b"import paddle\n") == "PaddlePaddle"
    assert framework_fact(b"import paddle\n" + b"#" * _MAX_BYTES) == ""


# -- an Ascend backend folder of a first-party package that loads transfer_to_npu (backends.transfer_scopes) -----

def test_transfer_scopes_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    from auditor.static.backends import shim_fact, transfer_scopes
    from auditor.static.firstparty import first_party_packages

    root = write_tree(tmp_path, {
        "dlinfer/__init__.py": "import dlinfer.vendor as vendor\n",
        "dlinfer/vendor/__init__.py": "from . import ascend\n",
        "dlinfer/vendor/ascend/__init__.py": "from .pytorch_patch import *\n",
        "dlinfer/vendor/ascend/pytorch_patch.py": """\
            import torch
            import torch_npu
            from torch_npu.contrib import transfer_to_npu

            torch.cuda.set_device = torch.npu.set_device
            """,
        # names the shim in a comment only: no import
        "dlinfer/vendor/camb/notes.py": "# unlike ascend, camb needs no transfer_to_npu\nimport torch\n",
        "dlinfer/ops/attention.py": "import torch\n\n\ndef attn(q):\n    return q.cuda()\n",
    })
    run = run_static([root], jobs=1)
    facts = {r.path: r.summary[TREE] for r in run.results if r.path.endswith(".py")}
    assert facts["dlinfer/vendor/ascend/pytorch_patch.py"].get("shim") is True
    assert "shim" not in facts["dlinfer/vendor/camb/notes.py"]
    files = _files(run, root)
    packages = first_party_packages(rel for _, rel in files)
    reference = transfer_scopes(files, packages)
    assert reference == {"dlinfer": "dlinfer/vendor/ascend/pytorch_patch.py"}
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert transfer_scopes(files, packages, project) == reference and project.reads == 0
    assert shim_fact(b"from torch_npu.contrib import transfer_to_npu\n")
    assert not shim_fact(b"# transfer_to_npu is not needed\n")


# -- NPU700 lines that set an Ascend debug switch to its quiet value (shim_graph.drop_quiet_debug_values) ---------

_DEBUG_LAUNCHER = '''\
import os

from train.engine import build_engine


def setup_debug(args):
    if args.debug:
        os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"
        os.environ["ASCEND_GLOBAL_LOG_LEVEL"] = "1"
    else:
        os.environ["ASCEND_LAUNCH_BLOCKING"] = "0"
        os.environ.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")
    return build_engine(args)
'''
_DEBUG_SCRIPT = '''\
#!/bin/bash
source /usr/local/Ascend/ascend-toolkit/set_env.sh
export ASCEND_LAUNCH_BLOCKING=0
export ASCEND_GLOBAL_LOG_LEVEL=3
if [ "$DEBUG" = "1" ]; then
    export ASCEND_LAUNCH_BLOCKING=1
fi
python -m train.launch --config configs/7b.yaml
'''


def _debug_tree(root: Path) -> Path:
    return write_tree(root, {"train/__init__.py": "", "train/engine.py": "def build_engine(args):\n    return args\n",
                             "train/launch.py": _DEBUG_LAUNCHER, "scripts/run_npu.sh": _DEBUG_SCRIPT})


def test_quiet_debug_values_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    import copy

    from auditor.static.shim_graph import drop_quiet_debug_values

    root = _debug_tree(tmp_path / "tree")
    cold = run_static([root], jobs=1)
    kept = {r.path: r.summary[TREE]["quiet"] for r in cold.results if (r.summary or {}).get(TREE, {}).get("quiet")}
    assert kept["train/launch.py"] == {"8:ASCEND_LAUNCH_BLOCKING": False, "9:ASCEND_GLOBAL_LOG_LEVEL": False,
                                       "11:ASCEND_LAUNCH_BLOCKING": True, "12:ASCEND_GLOBAL_LOG_LEVEL": True}
    assert {f.line for r in cold.results if r.path == "train/launch.py" for f in r.findings
            if f.name == "npu-debug-env-var"} == {8, 9}          # lines 11 and 12 set the switches off: dropped
    # the per-file findings again, before the tree pass, then the pass from the facts (no file read) and the old way
    engine = StaticEngine(load_rules())
    fresh = [engine.analyze_path(root / r.path, r.path) for r in cold.results]
    assert sum(f.name == "npu-debug-env-var" for r in fresh for f in r.findings) > \
        sum(f.name == "npu-debug-env-var" for r in cold.results for f in r.findings)
    old = copy.deepcopy(fresh)
    dropped_old = drop_quiet_debug_values(old, _files(cold, root))
    project = ProjectImports(_files(cold, root), fresh)
    _refuse_python_reads(monkeypatch)
    dropped_new = drop_quiet_debug_values(fresh, _files(cold, root), project)
    assert dropped_new == dropped_old > 0 and project.reads == 0
    assert [[(f.line, f.code, f.symbol) for f in r.findings] for r in fresh] == \
        [[(f.line, f.code, f.symbol) for f in r.findings] for r in old]


def test_a_debug_finding_no_fact_names_reads_the_file_once(tmp_path):
    from auditor.static.shim_graph import drop_quiet_debug_values

    root = _debug_tree(tmp_path / "tree")
    rel = "train/launch.py"
    result = StaticEngine(load_rules()).analyze_path(root / rel, rel)
    assert [f.line for f in result.findings if f.name == "npu-debug-env-var"] == [8, 9, 11, 12]
    result.summary[TREE].pop("quiet")        # a summary written without the fact: the file is read, once
    project = ProjectImports([(root / rel, rel)], [result])
    assert drop_quiet_debug_values([result], [(root / rel, rel)], project) == 2
    assert project.reads == 1
    assert [f.line for f in result.findings if f.name == "npu-debug-env-var"] == [8, 9]


# -- CUDA CI jobs of a workflow (ci_jobs.apply_cuda_ci_jobs) -----------------------------------------------------

def _refuse_reads_of(monkeypatch, suffix: str) -> None:
    """Fail the test if anything reads a file named `*suffix` with Path.read_text or os.open (the tree passes'
    reader, project_imports.read_counted)."""
    import os

    real_text, real_open = Path.read_text, os.open

    def check(path) -> None:
        if str(path).endswith(suffix):
            raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (check(self), real_text(self, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (check(path), real_open(path, *a, **k))[1])


def _record_reads(monkeypatch) -> list[str]:
    """The paths opened with os.open from now on (read_source and the tree passes' reader use it)."""
    import os

    real_open = os.open
    read: list[str] = []
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (read.append(str(path)), real_open(path, *a, **k))[1])
    return read


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_cuda_ci_job_spans_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch, newline):
    import copy

    from auditor.static.ci_jobs import apply_cuda_ci_jobs
    from tests.test_precision_policy import _OPENCOMPASS_WORKFLOW, _TORCHCHAT_WORKFLOW

    root = tmp_path / "tree"
    for rel, text in ((".github/workflows/run-readme-pr.yml", _TORCHCHAT_WORKFLOW),
                      (".github/workflows/pr-stage-check.yml", _OPENCOMPASS_WORKFLOW)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.replace("\n", newline).encode())
    cold = run_static([root], jobs=1)
    spans = {r.path: r.summary[TREE]["ci"] for r in cold.results}
    readme = spans[".github/workflows/run-readme-pr.yml"]
    assert [(s[0], s[2]) for s in readme] == [(17, "test-quantization-any")]
    assert [s[2] for s in spans[".github/workflows/pr-stage-check.yml"]] == ["build_cu131"]
    engine = StaticEngine(load_rules())
    fresh = [engine.analyze_path(root / r.path, r.path) for r in cold.results]
    old = copy.deepcopy(fresh)
    lowered_old = apply_cuda_ci_jobs(old, _files(cold, root))
    project = ProjectImports(_files(cold, root), fresh)
    _refuse_reads_of(monkeypatch, ".yml")
    lowered_new = apply_cuda_ci_jobs(fresh, _files(cold, root), project)
    assert lowered_new == lowered_old > 0 and project.reads == 0
    assert [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in fresh] == \
        [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in old]


def test_a_workflow_without_the_ci_fact_is_read_as_before(tmp_path):
    from auditor.static.ci_jobs import apply_cuda_ci_jobs
    from tests.test_precision_policy import _TORCHCHAT_WORKFLOW

    root = write_tree(tmp_path / "tree", {".github/workflows/run-readme-pr.yml": _TORCHCHAT_WORKFLOW})
    rel = ".github/workflows/run-readme-pr.yml"
    result = StaticEngine(load_rules()).analyze_path(root / rel, rel)
    result.summary[TREE].pop("ci")
    project = ProjectImports([(root / rel, rel)], [result])
    assert apply_cuda_ci_jobs([result], [(root / rel, rel)], project) > 0
    assert project.reads == 1


# -- the tree's own Ascend sub-project packages (npu_native.ascend_subpackages, FORMAT 11) ----------------------------

def _subpackage_tree(root: Path, init: str = "from .buffer import Buffer\nfrom .utils import init_dist\n") -> Path:
    """sgl-kernel-npu's layout: `python/deep_ep/` ships a setup.py and the package `deep_ep/`, whose `buffer` module
    imports torch_npu at its top (the `__init__.py` only re-exports it); a vendored CUDA DeepEP beside it (no
    torch_npu); a benchmark importing both."""
    from tests.test_precision_t11h import BENCH_SCRIPT, PORT_BUFFER, PORT_SETUP

    cuda_buffer = PORT_BUFFER.replace("import torch_npu\n", "").replace('"npu"', '"cuda"')
    return write_tree(root, {
        "python/deep_ep/setup.py": PORT_SETUP, "python/deep_ep/deep_ep/__init__.py": init,
        "python/deep_ep/deep_ep/buffer.py": PORT_BUFFER, "python/deep_ep/deep_ep/utils.py": "import torch\n",
        "vendor/uccl/pyproject.toml": "[project]\nname = \"uccl_ep\"\n",
        "vendor/uccl/uccl_ep/__init__.py": "from .buffer import Buffer\n",
        "vendor/uccl/uccl_ep/buffer.py": cuda_buffer,
        "benchmarks/deepep/bench_dispatch.py": BENCH_SCRIPT + "\n    import uccl_ep\n",
    })


def test_ascend_subpackages_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    from auditor.static.npu_native import ascend_subpackages

    root = _subpackage_tree(tmp_path)
    run = run_static([root], jobs=1)
    facts = {r.path: r.summary[TREE] for r in run.results if r.path.endswith(".py")}
    assert facts["python/deep_ep/deep_ep/__init__.py"].get("relative") == ["buffer", "utils"]
    assert facts["python/deep_ep/deep_ep/buffer.py"].get("top_npu") is True
    assert "top_npu" not in facts["vendor/uccl/uccl_ep/buffer.py"] and "relative" not in facts[
        "python/deep_ep/deep_ep/buffer.py"]
    files = _files(run, root)
    wanted = {"deep_ep", "uccl_ep", "torch"}
    reference = ascend_subpackages(files, wanted)        # no project: the files read, as before
    assert reference == {"deep_ep": "python/deep_ep/deep_ep"}
    project = ProjectImports(files, run.results)
    _refuse_python_reads(monkeypatch)
    assert ascend_subpackages(files, wanted, project) == reference
    assert project.reads == 0
    bench = {f.code: f.severity for r in run.results if r.path == "benchmarks/deepep/bench_dispatch.py"
             for f in r.findings if f.code == "NPU411"}
    assert bench == {"NPU411": "info"}       # `deep_ep.Buffer` is the tree's own Ascend port


@pytest.mark.parametrize("init", ["import torch_npu\n", "from .buffer import Buffer\r\nfrom .buffer import Config\n",
                                  "from . import buffer\n", ""])
def test_subpackage_facts_equal_the_old_reading_of_each_init(tmp_path, init):
    from auditor.static.npu_native import ascend_subpackages

    root = _subpackage_tree(tmp_path, init)
    run = run_static([root], jobs=1)
    files = _files(run, root)
    project = ProjectImports(files, run.results)
    assert ascend_subpackages(files, {"deep_ep"}, project) == ascend_subpackages(files, {"deep_ep"})
    assert project.reads == 0


def test_a_subpackage_without_the_facts_is_read_as_before(tmp_path):
    from auditor.static.npu_native import ascend_subpackages

    root = _subpackage_tree(tmp_path)
    run = run_static([root], jobs=1)
    for r in run.results:                    # summaries written before FORMAT 11: no `top_npu` / `relative`
        if r.summary:
            r.summary.pop(TREE, None)
    files = _files(run, root)
    project = ProjectImports(files, run.results)
    assert ascend_subpackages(files, {"deep_ep"}, project) == {"deep_ep": "python/deep_ep/deep_ep"}
    assert project.reads == 3      # the __init__.py twice (its top imports, then its relative imports), buffer.py


# -- Dockerfiles built for Ascend beside a CUDA one (backend_files.ascend_dockerfile_sibling, FORMAT 11) -------------

def _docker_tree(root: Path) -> Path:
    """ROLL's `docker/`: a CUDA image beside CANN images (one installs torch_npu on a CANN base, one sources CANN's
    set_env.sh); a second CUDA image; a multi-stage file that copies from an NVIDIA stage (not Ascend's); a folder
    with only CUDA images."""
    from tests.test_precision_t11f import DOCKER

    return write_tree(root, {
        **DOCKER,
        "docker/Dockerfile.torch251.sglang": "FROM nvcr.io/nvidia/pytorch:24.07-py3\nRUN pip install sglang\n",
        "docker/Dockerfile.A2": "FROM ubuntu:22.04\r\nRUN bash Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run --install\r\n"
                                "RUN pip install torch==2.1.0 torch-npu==2.1.0.post8\r\n",
        "docker/Dockerfile.mixed": "FROM nvidia/cuda:12.4.0-devel-ubuntu22.04 AS build\n"
                                   "FROM quay.io/ascend/cann:8.0-910b\nCOPY --from=build /opt /opt\n",
        "images/cuda/Dockerfile": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN pip install flash-attn\n",
        "images/cuda/Dockerfile.dev": "FROM nvcr.io/nvidia/pytorch:24.07-py3\nRUN pip install apex\n",
    })


def _refuse_dockerfile_reads(monkeypatch) -> None:
    """Fail the test if anything opens a Dockerfile with Path.open or os.open (project_imports.read_counted)."""
    import os

    real_open, real_os_open = Path.open, os.open

    def check(path) -> None:
        if Path(path).name.lower().startswith("dockerfile"):
            raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: (check(self), real_open(self, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (check(path), real_os_open(path, *a, **k))[1])


def test_ascend_dockerfiles_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    from auditor.static.backend_files import apply_backend_files

    root = _docker_tree(tmp_path)
    run = run_static([root], jobs=1)
    image = {r.path: (r.summary or {}).get(TREE, {}).get("ascend_image") for r in run.results
             if "Dockerfile" in r.path}
    assert image == {"docker/Dockerfile.torch260.vllm": False, "docker/Dockerfile.A3": True,
                     "docker/Dockerfile.torch251.sglang": False, "docker/Dockerfile.A2": True,
                     "docker/Dockerfile.mixed": False, "images/cuda/Dockerfile": False,
                     "images/cuda/Dockerfile.dev": False}
    files = _files(run, root)
    reference = _findings(run)
    assert {s for (p, _, _, s, _) in reference if p == "docker/Dockerfile.torch260.vllm"} == {"info"}
    assert "error" in {s for (p, _, _, s, _) in reference if p == "images/cuda/Dockerfile"}
    # the pass as it ran before (it reads the siblings) and on the facts, on the same fresh per-file results
    import copy

    engine = StaticEngine(load_rules())
    fresh = [engine.analyze_path(root / r.path, r.path) for r in run.results]
    old = copy.deepcopy(fresh)
    lowered_old = apply_backend_files(old, files)
    project = ProjectImports(files, fresh)
    _refuse_dockerfile_reads(monkeypatch)
    lowered_new = apply_backend_files(fresh, files, project)
    assert lowered_new == lowered_old > 0 and project.reads == 0
    assert [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in fresh] == \
        [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in old]


def test_a_dockerfile_sibling_without_the_fact_is_read_as_before(tmp_path):
    from auditor.static.backend_files import ascend_dockerfile_sibling

    root = _docker_tree(tmp_path)
    run = run_static([root], jobs=1)
    for r in run.results:                    # summaries written before FORMAT 11: no `ascend_image`
        if r.summary and TREE in r.summary:
            r.summary[TREE].pop("ascend_image", None)
    files = _files(run, root)
    project = ProjectImports(files, run.results)
    rel = "docker/Dockerfile.torch260.vllm"
    assert ascend_dockerfile_sibling(root / rel, rel, project) == ascend_dockerfile_sibling(root / rel, rel) \
        in ("docker/Dockerfile.A2", "docker/Dockerfile.A3")
    assert project.reads >= 1


# -- NPU076 values compared with an NPU name in another file (vendor_dispatch.apply_vendor_dispatch_tree, FORMAT 11) --

def _vendor_tree(root: Path, broken: bool = True) -> Path:
    """DIPU's shape: the runtime compares `rt.vendor_type` with "NPU" in amp.py and with "MLU" / "CUDA" in the tests'
    loader; a second chain compared with NPU only through an escape (`"\\x4e\\x50\\x55"`) and an implicit
    concatenation; a report helper whose bare name is compared with "CUDA" only; a file ast cannot parse."""
    return write_tree(root, {
        "vendorrt/runtime/amp.py": '''\
            from vendorrt.runtime import device as rt


            def bf16_supported():
                return rt.vendor_type == "NPU"


            def graph_ok():
                return rt.graph_vendor in ("\\x4e\\x50\\x55", "N" "PU")
            ''',
        "vendorrt/tests/base.py": '''\
            from vendorrt.runtime import device as rt

            if rt.vendor_type == "MLU":
                from tests.config_mlu import DISABLED_TESTS
            elif rt.vendor_type == "CUDA":
                from tests.config_cuda import DISABLED_TESTS
            if rt.graph_vendor == "NVIDIA":
                GRAPHS = True
            ''',
        "tools/report.py": '''\
            def header(vendor_type):
                if vendor_type == "CUDA":
                    return "GPU"
                return "accelerator"
            ''',
        **({"tools/broken.py": "if rt.vendor_type == 'NPU':\n    x = (\n"} if broken else {}),
    })


def test_vendor_comparisons_come_from_the_worker_and_equal_the_old_reading(tmp_path, monkeypatch):
    import copy

    from auditor.static.vendor_dispatch import apply_vendor_dispatch_tree

    root = _vendor_tree(tmp_path)
    run = run_static([root], jobs=1)
    facts = {r.path: (r.summary or {}).get(TREE) for r in run.results}
    assert facts["vendorrt/runtime/amp.py"]["vendor_npu"] == ["rt.graph_vendor", "rt.vendor_type"]
    assert facts["vendorrt/tests/base.py"]["vendor_cuda"] == {"5": ["rt.vendor_type"], "7": ["rt.graph_vendor"]}
    assert "vendor_cuda" not in facts["tools/report.py"]        # a bare name: matched within its file only
    assert facts["tools/broken.py"]["vendor_unread"] is True     # no tree: the pass reads it as before
    found = {(r.path, f.line): f.severity for r in run.results for f in r.findings if f.code == "NPU076"}
    assert found == {("vendorrt/tests/base.py", 5): "info", ("vendorrt/tests/base.py", 7): "info",
                     ("tools/report.py", 2): "warning"}
    files = _files(run, root)
    engine = StaticEngine(load_rules())
    fresh = [engine.analyze_path(root / r.path, r.path) for r in run.results]
    old = copy.deepcopy(fresh)
    lowered_old = apply_vendor_dispatch_tree(old, files)
    project = ProjectImports(files, fresh)
    read = _record_reads(monkeypatch)
    lowered_new = apply_vendor_dispatch_tree(fresh, files, project)
    assert lowered_new == lowered_old == 2
    assert [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in fresh] == \
        [[(f.line, f.code, f.severity, f.message) for f in r.findings] for r in old]
    assert [Path(p).name for p in read] == ["broken.py"] and project.reads == 1     # only the file with no tree


def test_vendor_files_without_the_facts_are_read_as_before(tmp_path):
    from auditor.static.vendor_dispatch import apply_vendor_dispatch_tree

    root = _vendor_tree(tmp_path)
    run = run_static([root], jobs=1)
    files = _files(run, root)
    engine = StaticEngine(load_rules())
    fresh = [engine.analyze_path(root / r.path, r.path) for r in run.results]
    for r in fresh:                          # summaries written before FORMAT 11
        if r.summary and TREE in r.summary:
            for key in ("vendor_npu", "vendor_cuda"):
                r.summary[TREE].pop(key, None)
            r.summary[TREE]["vendor_unread"] = True
    project = ProjectImports(files, fresh)
    assert apply_vendor_dispatch_tree(fresh, files, project) == 2
    assert project.reads == 2 + sum(rel.endswith(".py") for _, rel in files)    # the 2 open files twice, as before


def test_the_tree_passes_reader_counts_each_read_and_keeps_each_pass_limit(tmp_path):
    """project_imports.read_counted, the one reader of the tree passes: every read is counted in `project.reads`;
    a file over the pass's limit is refused (SourceError), or with `prefix` its first bytes are read; no limit
    reads any size; a FIFO is refused, never waited on; no path is an OSError (counted, as the passes counted)."""
    import os

    from auditor.source import SourceError
    from auditor.static.project_imports import as_text, read_counted

    big = tmp_path / "Dockerfile"
    big.write_bytes(b"FROM ascend/cann\r\n" + b"x" * 300_000)
    project = ProjectImports([], [])
    with pytest.raises(SourceError):
        read_counted(project, big, 200_000)
    assert read_counted(project, big, 200_000, prefix=True) == big.read_bytes()[:200_000]
    assert read_counted(project, big, limit=None) == big.read_bytes()
    assert read_counted(None, big) == big.read_bytes()         # no project: read, nothing to count
    with pytest.raises(OSError):
        read_counted(project, None)
    assert project.reads == 4
    (tmp_path / "t.yml").write_bytes(b"a\r\nb\rc\xff\n")   # the old readers' Path.read_text: universal newlines
    assert as_text(b"a\r\nb\rc\xff\n") == (tmp_path / "t.yml").read_text(encoding="utf-8", errors="replace") == "a\nb\nc\ufffd\n"
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "ci.yml"
        os.mkfifo(fifo)
        for prefix in (False, True):
            with pytest.raises(SourceError):
                read_counted(project, fifo, 1_000_000, prefix=prefix)


def test_a_warm_run_reads_no_setup_py_for_its_cpu_build(tmp_path, monkeypatch):
    # policy (n) (cpu_bindings.py): a copied binding's setup.py that builds a CPU extension without CUDA is read once;
    # its facts are kept in its summary, so a warm run lowers the same findings without reading it again
    from tests.test_tq46a import LOSS, TRAIN, TRAIN_SH, WARP_INIT, WARP_SETUP

    root = tmp_path / "tree"
    write_tree(root, {"ocr/__init__.py": "", "ocr/losses.py": LOSS, "tools/train.py": TRAIN, "train.sh": TRAIN_SH,
                      "third_party/warp-ctc/pytorch_binding/warpctc_pytorch/__init__.py": WARP_INIT,
                      "third_party/warp-ctc/pytorch_binding/setup.py": WARP_SETUP})
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    lowered = {(r.path, f.line) for r in cold.results for f in r.findings if f.data.get("context") == "cpu-build"}
    assert ("ocr/losses.py", 2) in lowered
    _refuse_python_reads(monkeypatch)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _findings(warm) == _findings(cold)
    assert {(r.path, f.line) for r in warm.results for f in r.findings if f.data.get("context") == "cpu-build"} == lowered


def test_a_warm_run_reads_no_python_file_for_the_trees_own_env_switches(tmp_path, monkeypatch):
    # own_env_switches.py: which CUDA-named variables a Python file compares is read once and kept in its summary
    from tests.test_tq46a import LAYERS, OTHER_READ, PROFILE_SH

    root = tmp_path / "tree"
    write_tree(root, {"model/layers.py": LAYERS, "scripts/profile.sh": PROFILE_SH, "model/debug.py": OTHER_READ})
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    lowered = {(r.path, f.line) for r in cold.results for f in r.findings if f.data.get("context") == "own-switch"}
    assert ("model/layers.py", 11) in lowered and ("scripts/profile.sh", 2) in lowered
    _refuse_python_reads(monkeypatch)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _findings(warm) == _findings(cold)
    assert warm.project_reads == 0
