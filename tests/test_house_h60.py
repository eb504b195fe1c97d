"""House work of session 60: one reading of an environment variable's default (`astutil.env_get_default`), used by
the CPU-build probe of setup.py files (cpu_bindings) instead of its own argument checks."""
from __future__ import annotations

import ast

import pytest

from auditor.static.astutil import env_get_default
from auditor.static.cpu_bindings import default_cpu_choices


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize("text, key, default", [
    ('os.getenv("FORCE_CUDA", "0")', "FORCE_CUDA", "0"),
    ('os.environ.get("CUDA_HOME")', "CUDA_HOME", None),
    ('getenv("WITH_CUDA", 1)', "WITH_CUDA", 1),
])
def test_a_call_with_a_literal_key_gives_its_default(text, key, default):
    read = env_get_default(_expr(text))
    assert read is not None and read[0] == key
    assert (read[1].value if read[1] is not None else None) == default


@pytest.mark.parametrize("text", [
    'os.environ["FORCE_CUDA"]',             # a subscript has no default
    'os.getenv(name, "0")',                  # the key is not a literal
    'os.getenv("FORCE_CUDA", default="0")',  # a keyword default is the callee's to read
    'int(os.getenv("FORCE_CUDA", "0"))',     # a value derived from a read
])
def test_other_reads_give_none(text):
    assert env_get_default(_expr(text)) is None


_SETUP = '''
import os
import torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

def get_extensions():
    extension = CppExtension
    sources = ["csrc/vision.cpp"]
    define_macros = []
    if {test}:
        extension = CUDAExtension
        sources += ["csrc/cuda/nms.cu"]
        define_macros += [("WITH_CUDA", None)]
    return [extension("maskrcnn_benchmark._C", sources, define_macros=define_macros)]
'''


@pytest.mark.parametrize("test", [
    'os.getenv("FORCE_CUDA", "0") == "1"',
    '(torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1"',
    'os.environ.get("FORCE_CUDA")',
])
def test_a_build_that_picks_cuda_only_when_a_cuda_variable_is_set_keeps_the_cpu_extension(test):
    spans, tests = default_cpu_choices(ast.parse(_SETUP.format(test=test)))
    assert len(spans) == 1 and tests == [10]


@pytest.mark.parametrize("test", [
    'os.getenv("FORCE_CUDA", "1") == "1"',  # the default itself picks CUDA
    'os.getenv("MAX_JOBS", "0") == "1"',    # not a CUDA variable
])
def test_a_test_that_may_hold_without_cuda_is_not_a_cpu_default(test):
    assert default_cpu_choices(ast.parse(_SETUP.format(test=test))) == ([], [])



def test_the_packaging_files_are_read_once_per_run(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from auditor.static import unreached_defs

    reads = []
    read_packaging = unreached_defs._packaging_facts
    monkeypatch.setattr(unreached_defs, "_packaging_facts", lambda *a: reads.append(a) or read_packaging(*a))
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "fastseg"\n[project.scripts]\n'
                                             'fastseg-train = "fastseg.train:main"\n'
                                             '[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    (tmp_path / "train.py").write_text("import torch\n")
    paths = {"pyproject.toml": tmp_path / "pyproject.toml", "train.py": tmp_path / "train.py"}
    project = SimpleNamespace(paths=paths, summaries={}, changed=set(), root=tmp_path, reads=0)
    assert unreached_defs._workspace_members(project) == ["packages/*"]
    assert "fastseg/train" in unreached_defs._installed_names(project)[1]
    assert unreached_defs._workspace_members(project) == ["packages/*"]
    assert len(reads) == 1
