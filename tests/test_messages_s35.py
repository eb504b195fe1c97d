"""Session 35 (lead): an exception's message that shows a CUDA value is a message line (lead decision 49), as a print
or a log line showing it is; a CUDA call inside it stays a pair (decision 48). The shapes are apex-style setup.py
version checks and environment reports as real code bases write them, with the calls that must keep their finding."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at, line_of

ENGINE = StaticEngine(load_rules())

# apex-derived setup.py (check_cuda_torch_binary_vs_bare_metal) and an environment check in a training script
VERSION_CHECK = b"""import os
import subprocess

import torch
from torch.utils.cpp_extension import CUDA_HOME


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    bare_metal_version = raw_output.split()[raw_output.split().index("release") + 1].split(",")[0]
    torch_binary_version = torch.version.cuda
    if bare_metal_version != torch_binary_version:
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
            "compile Pytorch binaries.  Pytorch binaries were compiled with Cuda {}.\\n".format(torch.version.cuda)
        )


def require_recent_cuda():
    if torch.version.cuda is None or int(torch.version.cuda.split(".")[0]) < 11:
        raise EnvironmentError(f"this model needs CUDA >= 11, found {torch.version.cuda}")
    if not torch.backends.cudnn.enabled:
        raise ValueError(f"cudnn is off (benchmark={torch.backends.cudnn.benchmark})")
    if torch.cuda.device_count() < 2:
        raise RuntimeError(f"needs 2 GPUs, found {torch.cuda.device_count()}")
    raise NotImplementedError(torch.cuda.get_device_name(0))
"""


def test_exception_messages_showing_cuda_values_are_quiet():
    found = code_severities_by_line(ENGINE, VERSION_CHECK, "env_check.py")
    for text in ("compile Pytorch binaries.  Pytorch binaries", "found {torch.version.cuda}",
                 "cudnn is off (benchmark="):
        assert not codes_at(found, line_of(VERSION_CHECK, text)), text


def test_cuda_reads_and_calls_around_the_messages_keep_their_findings():
    found = code_severities_by_line(ENGINE, VERSION_CHECK, "env_check.py")
    for text in ("torch_binary_version = torch.version.cuda", "if torch.version.cuda is None",
                 "if not torch.backends.cudnn.enabled", "if torch.cuda.device_count() < 2",
                 "found {torch.cuda.device_count()}", "raise NotImplementedError(torch.cuda.get_device_name(0))"):
        assert codes_at(found, line_of(VERSION_CHECK, text)), text
    # in setup.py the build stops where CUDA is missing: that raise is a finding of its own (NPU080), its text is not
    in_setup = code_severities_by_line(ENGINE, VERSION_CHECK, "setup.py")
    assert ("NPU080", "error") in in_setup[line_of(VERSION_CHECK, "found {torch.version.cuda}")]
    assert not codes_at(in_setup, line_of(VERSION_CHECK, "compile Pytorch binaries.  Pytorch binaries"))
