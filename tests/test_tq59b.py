"""tq59b (issue 11, session 59; TUNED on heldout78): a vLLM platform plugin for another accelerator is that
accelerator's code. Trees modelled on such a plugin's metadata, examples and tests (a plugin for a made-up
accelerator `Tachyon`: the name and description say nothing a backend word knows; the entry point does)."""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from auditor.static.declared_vendor import declares_fact
from tests.static_snippets import line_of, write_tree

PLUGIN_PYPROJECT = '''\
[project]
name = "vllm-tachyon"
description = "vLLM plugin for Tachyon hardware support"
dependencies = [
    "vllm>=0.19.0,<0.19.1",
    "torch",
]

[project.entry-points."vllm.platform_plugins"]
tachyon = "vllm_tachyon:register"

[tool.uv]
extra-build-variables = { vllm = { VLLM_TARGET_DEVICE = "empty" } }

[tool.uv.sources]
vllm = { git = "https://github.com/vllm-project/vllm", rev = "v0.19.0" }
torch = [{ index = "pytorch-cpu" }]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true
'''

EXAMPLE = '''\
import os

from vllm import LLM, SamplingParams

os.environ["VLLM_TACHYON_BACKEND"] = "eager"

prompts = ["Hello, my name is"]
llm = LLM(model="ibm-granite/granite-3.3-8b-instruct", max_model_len=256, max_num_seqs=2)
for out in llm.generate(prompts, SamplingParams(max_tokens=20)):
    print(out.outputs[0].text)
'''

TEST_UTIL = '''\
from vllm import LLM


def tachyon_embeddings(model, prompts, max_model_len):
    llm = LLM(model=model, task="embed", max_model_len=max_model_len)
    return [o.outputs.embedding for o in llm.embed(prompts)]
'''

TEST_E2E = '''\
from tests.output_util import tachyon_embeddings


def test_embeddings(model):
    results = tachyon_embeddings(model, ["chicken soup"], max_model_len=256)
    assert len(results) == 1
'''

SETUP_PY = '''\
from setuptools import find_packages, setup

setup(
    name="vllm-tachyon",
    packages=find_packages(),
    install_requires=["vllm", "torch"],
    entry_points={"vllm.platform_plugins": ["tachyon = vllm_tachyon:register"]},
)
'''


def _findings(root: Path) -> dict[tuple[str, int], tuple[str, str, str | None]]:
    run = run_static([root], jobs=1)
    return {(r.path, f.line): (f.code, f.severity, f.data.get("context")) for r in run.results for f in r.findings}


def _plugin_tree(tmp_path: Path, pyproject: str) -> Path:
    return write_tree(tmp_path, {"pyproject.toml": pyproject, "vllm_tachyon/__init__.py": "def register():\n    "
                                 "return 'vllm_tachyon.platform.TachyonPlatform'\n",
                                 "examples/offline_inference.py": EXAMPLE, "tests/__init__.py": "",
                                 "tests/output_util.py": TEST_UTIL, "tests/e2e/test_embeddings.py": TEST_E2E})


def test_a_vllm_platform_plugin_runs_its_engine_on_its_own_accelerator(tmp_path):
    found = _findings(_plugin_tree(tmp_path, PLUGIN_PYPROJECT))
    llm = line_of(EXAMPLE, "llm = LLM(")
    assert found[("examples/offline_inference.py", llm)][1:] == ("info", "other-backend")
    assert found[("tests/output_util.py", line_of(TEST_UTIL, "llm = LLM("))][1:] == ("info", "other-backend")
    # the pin of vLLM (a CPU build for the plugin) is worth knowing, not an error
    assert found[("pyproject.toml", line_of(PLUGIN_PYPROJECT, '"vllm>=0.19.0'))][1] == "info"
    # the call of the tree's own vLLM helper keeps its pointer at info (read after crossfile's pass)
    assert found[("tests/e2e/test_embeddings.py", line_of(TEST_E2E, "results = tachyon"))][:2] == ("NPU417", "info")


def test_the_same_tree_without_the_entry_point_keeps_its_warnings(tmp_path):
    plain = PLUGIN_PYPROJECT.replace('[project.entry-points."vllm.platform_plugins"]\ntachyon = '
                                     '"vllm_tachyon:register"\n', "")
    found = _findings(_plugin_tree(tmp_path, plain))
    assert found[("examples/offline_inference.py", line_of(EXAMPLE, "llm = LLM("))][1:] == ("warning", None)


def test_a_library_with_vllm_as_an_opt_in_extra_is_no_plugin_package(tmp_path):
    # a library that offers vLLM in an extra and registers a plugin beside its own code (optimum-neuron's shape) is
    # read by its other metadata: vLLM is not its core install (tests/test_precision_t11s.py reads its extras)
    library = PLUGIN_PYPROJECT.replace('    "vllm>=0.19.0,<0.19.1",\n', "").replace(
        "[project.entry-points", '[project.optional-dependencies]\nvllm = ["vllm>=0.19.0"]\n\n[project.entry-points')
    assert "plugin" in declares_fact(library.encode(), "pyproject.toml")
    found = _findings(_plugin_tree(tmp_path, library))
    assert found[("examples/offline_inference.py", line_of(EXAMPLE, "llm = LLM("))][1:] == ("warning", None)


def test_an_ascend_plugin_is_not_another_accelerators():
    # vLLM Ascend registers the same entry point: its name says Ascend, so its metadata says nothing of the kind
    ascend = PLUGIN_PYPROJECT.replace("vllm-tachyon", "vllm-ascend").encode()
    fact = declares_fact(ascend, "pyproject.toml")
    assert fact is not None and fact["cuda"] is True and fact["plugin"] == "vllm.platform_plugins"


def test_the_entry_point_is_read_from_setup_py_and_setup_cfg():
    assert declares_fact(SETUP_PY.encode(), "setup.py")["plugin"] == "vllm.platform_plugins"
    cfg = b"[metadata]\nname = vllm-tachyon\n\n[options.entry_points]\nvllm.platform_plugins =\n" \
          b"    tachyon = vllm_tachyon:register\n"
    assert declares_fact(cfg, "setup.cfg")["plugin"] == "vllm.platform_plugins"
    # a general plugin (custom ops, a model registry) is no hardware platform
    general = SETUP_PY.replace("vllm.platform_plugins", "vllm.general_plugins").encode()
    assert "plugin" not in declares_fact(general, "setup.py")
