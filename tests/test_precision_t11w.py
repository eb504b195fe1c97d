"""t11w (issue 11, session 14; TUNED on heldout15): other accelerators' code read as CUDA. A project whose own
metadata declares another accelerator (optimum-amd: AMD Instinct under ROCm; intel-npu-acceleration-library: Intel's
NPU; neuronx-distributed: AWS Neuron), ZLUDA's layer inside a CUDA project (OneTrainer's `modules/zluda/ZLUDA.py`),
and CI jobs on NVIDIA instance runners (`aws-g4dn-2xlarge-*`, `group: aws-g5-4xlarge-plus`). Trees modelled on
those projects' files."""
from __future__ import annotations

import json
from pathlib import Path

from auditor.runner import run_static
from auditor.static.ci_jobs import cuda_job_spans
from auditor.static.declared_vendor import declared_vendor, declares_fact
from auditor.static.project_imports import ProjectImports
from tests.static_snippets import line_of, write_tree

OPTIMUM_AMD_SETUP = '''\
import re

from setuptools import find_namespace_packages, setup

filepath = "optimum/amd/version.py"
try:
    with open(filepath) as version_file:
        (__version__,) = re.findall('__version__ = "(.*)"', version_file.read())
except Exception as error:
    assert False, "Error: Could not open '%s' due %s\\n" % (filepath, error)

INSTALL_REQUIRE = ["optimum<2.0.0", "transformers>=4.38,<5.0.0", "onnx", "onnxruntime-extensions"]

TESTS_REQUIRE = [
    "pytest",
    "parameterized",
    "torch==2.2.1",
]

EXTRAS_REQUIRE = {
    "tests": TESTS_REQUIRE,
    "zentorch": ["torch==2.2.1"],
    "brevitas": ["brevitas", "torch>=2.2", "datasets>=2.17"],
}

setup(
    name="optimum-amd",
    version=__version__,
    description="Optimum Library is an extension of the Hugging Face Transformers library for AMD hardware.",
    packages=find_namespace_packages(include=["optimum*"]),
    install_requires=INSTALL_REQUIRE,
    extras_require=EXTRAS_REQUIRE,
    python_requires=">=3.8.0",
)
'''

BENCH_YAML = '''\
defaults:
  - backend: pytorch
  - _base_
  - _self_

experiment_name: pytorch_bert
model: bert-base-uncased
device: cuda

backend:
  no_weights: true
  torch_dtype: float16
'''

QUANTIZE_LLM = '''\
import argparse

import torch
from transformers import AutoModelForCausalLM


def main(args):
    model = AutoModelForCausalLM.from_pretrained(args.model, device_map=args.device, torch_dtype=torch.float32)
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Quantize LLMs with Brevitas")
    parser.add_argument("--model", type=str, default="facebook/opt-125m")
    parser.add_argument(
        "--device",
        type=str,
        default="auto",
        choices=["cpu", "cuda:0", "auto"],
        help="Device to run the example on.",
    )
    main(parser.parse_args())
'''


def _findings(root: Path) -> dict[tuple[str, int], tuple[str, str | None]]:
    run = run_static([root], jobs=1)
    return {(r.path, f.line): (f.severity, f.data.get("context")) for r in run.results for f in r.findings}


def _amd_tree(tmp_path: Path, setup_py: str) -> Path:
    return write_tree(tmp_path, {"setup.py": setup_py, "benchmarks/inference_pytorch_bert.yaml": BENCH_YAML,
                                 "examples/quantization/brevitas/quantize_llm.py": QUANTIZE_LLM})


def test_a_project_named_for_amd_keeps_its_cuda_lines_as_info(tmp_path):
    found = _findings(_amd_tree(tmp_path, OPTIMUM_AMD_SETUP))
    assert found[("benchmarks/inference_pytorch_bert.yaml", line_of(BENCH_YAML, "device: cuda"))] == ("info", "other-backend")    # `device: cuda`
    # "cuda:0" is one of `--device`'s choices: info in any project since pd28 (the option's default is the choice)
    assert found[("examples/quantization/brevitas/quantize_llm.py", line_of(QUANTIZE_LLM, "cuda:0"))] == ("info", "option-choices")


def test_the_same_files_in_a_plain_cuda_project_keep_their_errors(tmp_path):
    # (t11z: the description is read too, so a plain project describes itself plainly)
    plain = OPTIMUM_AMD_SETUP.replace('name="optimum-amd"', 'name="bert-bench"').replace(" for AMD hardware", "")
    found = _findings(_amd_tree(tmp_path, plain))
    assert found[("benchmarks/inference_pytorch_bert.yaml", line_of(BENCH_YAML, "device: cuda"))] == ("error", None)
    # "cuda:0" is one of `--device`'s choices: info in any project since pd28 (the option's default is the choice)
    assert found[("examples/quantization/brevitas/quantize_llm.py", line_of(QUANTIZE_LLM, "cuda:0"))] == ("info", "option-choices")


def test_a_vendor_name_beside_cuda_metadata_is_multi_backend(tmp_path):
    # the name says AMD, but the project also builds CUDA extensions and requires flash-attn: the lines decide
    cuda_too = OPTIMUM_AMD_SETUP.replace('"onnxruntime-extensions"]', '"onnxruntime-extensions", "flash-attn>=2.5"]')
    found = _findings(_amd_tree(tmp_path, cuda_too))
    assert found[("benchmarks/inference_pytorch_bert.yaml", line_of(BENCH_YAML, "device: cuda"))] == ("error", None)
    fact = declares_fact(cuda_too.encode(), "setup.py")
    assert fact is not None and fact["name"] == "optimum-amd" and fact["cuda"] is True


def test_the_tree_folder_name_alone_declares_nothing(tmp_path):
    root = _amd_tree(tmp_path / "optimum-amd-fa22eca40472", OPTIMUM_AMD_SETUP.replace('name="optimum-amd"',
                                                                                       'name="bench-suite"')
                     .replace(" for AMD hardware", ""))
    assert _findings(root)[("benchmarks/inference_pytorch_bert.yaml", line_of(BENCH_YAML, "device: cuda"))] == ("error", None)


INTEL_NPU_SETUP = '''\
from setuptools import setup, Extension
from setuptools.command.build_ext import build_ext
import os

with open("requirements.txt") as fh:
    requirements = fh.read().splitlines()


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


setup(
    name="intel_npu_acceleration_library",
    version="1.4.0",
    packages=["intel_npu_acceleration_library"],
    ext_modules=[CMakeExtension("intel_npu_acceleration_library")],
    install_requires=requirements,
)
'''

TRAIN_MNIST = '''\
import intel_npu_acceleration_library
from intel_npu_acceleration_library.compiler import CompilerConfig
import torch
from torch import nn


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(28 * 28, 512)

    def forward(self, x):
        return self.l1(x)


model = NeuralNetwork()
compiler_conf = CompilerConfig(dtype=torch.float16, training=True)
model = intel_npu_acceleration_library.compile(model, compiler_conf)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
'''


def test_intel_npu_runtime_project_drops_host_hints_and_the_torch_pin(tmp_path):
    root = write_tree(tmp_path, {"setup.py": INTEL_NPU_SETUP, "requirements.txt": "numpy\ntorch\ntransformers>=4.43.0\n",
                                 "examples/train_mnist.py": TRAIN_MNIST})
    assert declared_vendor([(root / "setup.py", "setup.py")], None) == ("other-npu", "setup.py: its name "
                                                                         "'intel_npu_acceleration_library'")
    found = _findings(root)
    assert not [k for k in found if k[0] in ("requirements.txt", "examples/train_mnist.py")]
    # the same example in a project that does not declare Intel's NPU keeps its hints
    plain = write_tree(tmp_path / "plain", {"requirements.txt": "numpy\ntorch\n", "examples/train_mnist.py":
                                            TRAIN_MNIST.replace("intel_npu_acceleration_library", "mycompiler")})
    assert ("requirements.txt", 2) in _findings(plain)


NXD_SETUP = '''\
from setuptools import setup, find_packages

setup(
    name="neuronx-distributed",
    version="0.14.0",
    packages=find_packages(where="src"),
    package_dir={"": "src"},
    install_requires=[
        "torch-neuronx",
        "torch-xla",
        "safetensors",
    ],
)
'''

NXD_SCRIPT = '''\
#!/bin/bash
set -o pipefail

use_flash_attention=1
export NEURON_CC_FLAGS="--model-type transformer"

torchrun --nproc_per_node=32 run_llama_nxd_ptl.py \\
    --tensor_parallel_size 8 \\
    --use_flash_attention=$use_flash_attention |& tee $OUTPUT_LOG
'''


def test_a_core_requirement_on_a_vendor_runtime_declares_the_project(tmp_path):
    # the name is neutral here: `install_requires=["torch-neuronx", ...]` says the project is Neuron's
    setup = NXD_SETUP.replace('name="neuronx-distributed"', 'name="llama-recipes-trn"')
    root = write_tree(tmp_path, {"setup.py": setup, "test/integration/run_llama_7b_tp_ptl.sh": NXD_SCRIPT})
    found = _findings(root)
    flags = {k: v for k, v in found.items() if k[0].endswith(".sh")}
    assert flags and all(v == ("info", "other-backend") for v in flags.values())
    plain = write_tree(tmp_path / "plain", {"setup.py": setup.replace('"torch-neuronx",', '"torch",'),
                                            "test/integration/run_llama_7b_tp_ptl.sh": NXD_SCRIPT})
    assert any(v[0] == "warning" for k, v in _findings(plain).items() if k[0].endswith(".sh"))


def test_pyproject_name_and_dependencies_are_read():
    pyproject = b'[project]\nname = "vllm-gaudi"\ndependencies = ["habana-torch-plugin", "numpy"]\n'
    assert declares_fact(pyproject, "pyproject.toml") == {"name": "vllm-gaudi", "core": ["habana-torch-plugin", "numpy"],
                                                          "cuda": False}
    ascend = b'[project]\nname = "vllm-ascend"\ndependencies = ["torch-npu==2.5.1"]\n'
    assert declares_fact(ascend, "pyproject.toml")["cuda"] is True
    assert declares_fact(b"[project\nname=", "pyproject.toml") is None       # bad TOML: no fact, no traceback
    assert declares_fact(b"setup(name=", "setup.py") == {"name": None, "core": [], "cuda": False}
    assert declares_fact(b"torch\n", "sub/requirements.txt") is None       # only the root's metadata


def test_a_warm_run_reads_the_metadata_fact_from_the_cache(tmp_path):
    root = _amd_tree(tmp_path / "tree", OPTIMUM_AMD_SETUP)
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results) and warm.project_reads == 0
    key = ("benchmarks/inference_pytorch_bert.yaml", line_of(BENCH_YAML, "device: cuda"))
    for run in (cold, warm):
        assert {(r.path, f.line): f.severity for r in run.results for f in r.findings}[key] == "info"
    index = json.loads(next(cache.rglob("*.json")).read_text())
    kept = next(e["summary"]["tree"] for p, e in index["entries"].items() if p.endswith("setup.py"))
    assert kept["declares"]["name"] == "optimum-amd"
    project = ProjectImports([(root / "setup.py", "setup.py")], warm.results)
    assert declared_vendor([(root / "setup.py", "setup.py")], project)[0] == "rocm" and project.reads == 0


ZLUDA_PY = '''\
from modules.util.config.TrainConfig import TrainConfig

import torch
from torch._prims_common import DeviceLikeType


def is_zluda(device: DeviceLikeType):
    device = torch.device(device)
    if device.type in ["cpu", "mps"]:
        return False
    return torch.cuda.get_device_name(device).endswith("[ZLUDA]")


def initialize():
    torch.backends.cudnn.enabled = False
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_math_sdp(True)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    if hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
        torch.backends.cuda.enable_cudnn_sdp(False)


def initialize_devices(config: TrainConfig):
    if not is_zluda(config.train_device) and not is_zluda(config.temp_device):
        return
    devices = [config.train_device, config.temp_device]
    for i in range(2):
        device = torch.device(devices[i])
        print(f"ZLUDA device failed: {torch.cuda.get_device_name(device)}")
        devices[i] = "cpu"
    config.train_device, config.temp_device = devices
'''


def test_zluda_setup_is_another_backend_but_its_probe_runs_everywhere(tmp_path):
    root = write_tree(tmp_path, {"modules/zluda/ZLUDA.py": ZLUDA_PY})
    found = {line: v for (path, line), v in _findings(root).items()}
    for needle in ("enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp", "hasattr(torch.backends"):
        assert found[line_of(ZLUDA_PY, needle)] == ("info", "other-backend"), needle     # ZLUDA's own set-up
    assert found[line_of(ZLUDA_PY, "ZLUDA device failed")] == ("info", "other-backend")   # after is_zluda said yes
    # is_zluda(device) is called for the train device on every backend: its torch.cuda call runs on Ascend
    assert found[line_of(ZLUDA_PY, '.endswith("[ZLUDA]")')][0] == "error"
    # the same set-up in a folder that names no backend stays what it is: an SDPA backend switch, a warning since
    # t11y (the flag is set on Ascend too; NPU349), not dropped to info
    other = write_tree(tmp_path / "o", {"modules/attention/setup_attn.py": ZLUDA_PY})
    assert {line: v for (_p, line), v in _findings(other).items()}[line_of(ZLUDA_PY, "enable_math_sdp")] == \
        ("warning", None)


WORKFLOW = '''\
name: vLLM Main Branch Tests

on:
  workflow_dispatch:

jobs:
  test_vllm_main:
    name: Test with vLLM main branch
    runs-on: 'aws-g4dn-2xlarge-use1-public-80'
    steps:
      - uses: actions/checkout@v4
      - name: Verify CUDA
        run: |
          nvidia-smi
          nvcc --version
  test_api_cuda:
    runs-on:
      group: aws-g5-4xlarge-plus
    steps:
      - run: nvidia-smi
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: nvidia-smi
'''


def test_nvidia_instance_runners_are_cuda_ci_jobs(tmp_path):
    spans = cuda_job_spans(WORKFLOW)
    assert [(s[2], s[3]) for s in spans] == [("test_vllm_main", "runs-on: aws-g4dn-2xlarge-use1-public-80"),
                                             ("test_api_cuda", "runs-on: aws-g5-4xlarge-plus")]
    root = write_tree(tmp_path, {".github/workflows/vllm_main_tests.yaml": WORKFLOW})
    found = {line: v for (_p, line), v in _findings(root).items()}
    lines = [i for i, text in enumerate(WORKFLOW.splitlines(), 1) if "nvidia-smi" in text or "nvcc" in text]
    assert [found[i] for i in lines] == [("info", "cuda-ci-job")] * 3 + [("error", None)]   # ubuntu-latest: stays
    # a label that only looks alike (`python3`, `inf2`: AWS Neuron) is no NVIDIA runner
    assert cuda_job_spans(WORKFLOW.replace("aws-g4dn-2xlarge-use1-public-80", "aws-inf2-8xlarge")
                          .replace("aws-g5-4xlarge-plus", "python3-runner")) == []


ROCM_TEST = '''\
import pytest
import torch


def _is_rocm() -> bool:
    return torch.cuda.is_available() and torch.version.hip is not None


@pytest.mark.skipif(not _is_rocm(), reason="ROCm only")
def test_prefill():
    q = torch.randn(4, 8, device="cuda")
    assert q.shape == (4, 8)
'''


def test_a_private_probe_in_a_rocm_test_stays_that_backends_code(tmp_path):
    root = write_tree(tmp_path, {"models/attention/rocm_impl/test/test_prefill.py": ROCM_TEST})
    found = {line: v for (_p, line), v in _findings(root).items()}
    assert found[line_of(ROCM_TEST, "torch.version.hip")] == ("info", "other-backend")


GRAPHCORE_SETUP = '''\
from setuptools import find_namespace_packages, setup

setup(
    name="optimum-graphcore",
    version="0.7.1",
    packages=find_namespace_packages(include=["optimum*"]),
    install_requires=["transformers==4.29.2", "optimum==1.6.1", "diffusers[torch]==0.12.1"],
)
'''

GRAPHCORE_PIPELINE = '''\
import poptorch
import torch


def get_poplar_executor(model, ipu_config, fp16=True):
    if fp16:
        model.half()
    opts = ipu_config.to_options(for_inference=True)
    return poptorch.inferenceModel(model.eval(), opts)


def pad_inputs(batch, pad_size):
    padded = torch.zeros(pad_size, dtype=torch.float16)
    padded[: batch.shape[0]] = batch.half()
    return padded
'''


def test_a_graphcore_ipu_project_holds_host_tensors(tmp_path):
    # optimum-graphcore (heldout17, tuned on after the end draw): PopTorch compiles the model for the IPU from the
    # host; the dtype hints on its host tensors concern nothing on an NPU
    root = write_tree(tmp_path, {"setup.py": GRAPHCORE_SETUP, "optimum/graphcore/pipelines/base.py": GRAPHCORE_PIPELINE})
    assert declared_vendor([(root / "setup.py", "setup.py")], None) == ("ipu", "setup.py: its name 'optimum-graphcore'")
    assert not [k for k in _findings(root) if k[0] == "optimum/graphcore/pipelines/base.py"]
    # the same code in a project that names no other accelerator keeps its fp16 hints
    plain = write_tree(tmp_path / "plain", {"setup.py": GRAPHCORE_SETUP.replace("optimum-graphcore", "serving"),
                                            "serving/pipelines/base.py": GRAPHCORE_PIPELINE.replace("poptorch", "myrt")})
    assert [k for k in _findings(plain) if k[0] == "serving/pipelines/base.py"]
