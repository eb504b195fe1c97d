"""Lead, session 41 (after the figures; project test104 TUNED for it): a stage's bare `ARG NAME` that re-declares a
global ARG given a value before the first FROM only brings that value into scope (Dockerfile reference, "Understand
how ARG and FROM interact"); the global line is the CUDA version setting, the re-declaration none."""
from __future__ import annotations

import textwrap

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found

# NeMo-Curator's shape: a global CUDA version, the stage re-declares it to use it in its RUN lines
REDECLARED = """\
    ARG CUDA_VER=12.5.1
    ARG LINUX_VER=ubuntu22.04
    ARG PYTHON_VER=3.12

    FROM rapidsai/ci-conda:cuda${CUDA_VER}-${LINUX_VER}-py${PYTHON_VER} AS deps
    WORKDIR /opt

    # Re-declare ARGs after new FROM to make them available in this stage
    ARG CUDA_VER

    RUN conda install -y -c nvidia cuda-version=${CUDA_VER}
    """

# alphafold's shape: a CUDA version the build command passes, no default anywhere
PASSED_IN = """\
    FROM ubuntu:22.04
    ARG CUDA=12.2.2
    FROM nvidia/cuda:${CUDA}-cudnn9-runtime-ubuntu22.04
    ARG CUDA

    RUN apt-get install -y cuda-command-line-tools-$(cut -f1,2 -d- <<< ${CUDA//./-})
    """


def _line(src: str, needle: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(src).splitlines(), 1) if needle == ln.strip())


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def test_redeclared_global_cuda_arg_is_not_a_second_setting(tmp_path):
    found = _found(write_tree(tmp_path, {"Dockerfile": REDECLARED}), "Dockerfile")
    assert "NPU018" in _codes(found, _line(REDECLARED, "ARG CUDA_VER=12.5.1"))
    assert not _codes(found, _line(REDECLARED, "ARG CUDA_VER"))


def test_stage_arg_without_a_global_value_is_still_the_setting(tmp_path):
    # `ARG CUDA=12.2.2` is declared inside the first stage, not before the first FROM: the later stage's bare
    # `ARG CUDA` does not inherit it, so it is the version the build passes (t35a's reading)
    found = _found(write_tree(tmp_path, {"Dockerfile": PASSED_IN}), "Dockerfile")
    assert "NPU018" in _codes(found, 4)
