"""t36a (session 34): misses and flagged message lines of the static splits test66, test68 and test70 (TUNED): device
values only shown in a message (lead decision 48), Lightning trainer settings given as a dict, ProfilerActivity from
torch.profiler's own module, a compiled extension's CPU / CUDA twins imported relatively, multi-line imports continued
by a backslash, setuptools' `Extension` with .cu sources, and a TF32 switch inside an ONNX export function. Each shape
comes from the code it was missed in, with the nearest controls."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at, line_of

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# nnDetection scripts/utils.py and setup.py, LaVie's interpolation/utils.py, CuLE's examples/utils/initializers.py:
# environment reports that show CUDA facts, beside the calls decision 48 keeps as pairs
ENV_REPORT = b"""import os
import torch


def print_env():
    print(torch.version.cuda)
    print(f"PyTorch CUDA: {torch.version.cuda}")
    print(f"PyTorch Backend cudnn: {torch.backends.cudnn.version()}")
    print(f"System Arch List: {os.getenv('TORCH_CUDA_ARCH_LIST', None)}")
    print(f"System CUDA_HOME is None: {os.getenv('CUDA_HOME', None) is None}")
    print("CUDA ARCH {}".format(os.getenv("TORCH_CUDA_ARCH_LIST")))
    print('CUDA     : {}'.format(torch.backends.cudnn.m.cuda))
    print('CUDNN    : {}'.format(torch.backends.cudnn.version()))
    print("GPUs: {}".format(torch.cuda.device_count()))
    print(f"Specified devices: {os.environ['CUDA_VISIBLE_DEVICES']}")
    print("probe", str(torch.ones(2, device="cuda")))
    if torch.version.cuda is None:
        raise RuntimeError("needs a CUDA build of torch")
    arch_list = os.getenv("TORCH_CUDA_ARCH_LIST")
    return arch_list
"""


def test_values_shown_in_messages_are_quiet_and_calls_stay():
    found = _found(ENV_REPORT)
    for text in ("print(torch.version.cuda)", "{torch.version.cuda}", "System Arch List", "System CUDA_HOME",
                 "CUDA ARCH {}", "torch.backends.cudnn.m.cuda"):
        assert not codes_at(found, line_of(ENV_REPORT, text)), text
    # a CUDA call in a message is a pair (decision 48), `.format` / `str` around it or not
    assert "NPU006" in codes_at(found, line_of(ENV_REPORT, "{torch.backends.cudnn.version()}"))
    assert "NPU006" in codes_at(found, line_of(ENV_REPORT, "'CUDNN    : {}'"))
    assert "NPU002" in codes_at(found, line_of(ENV_REPORT, "torch.cuda.device_count()"))
    assert "NPU003" in codes_at(found, line_of(ENV_REPORT, 'device="cuda"'))
    # t24a kept the subscript read (it raises where the variable is unset); tk42 (decision 49, test99's ViDiT-Q label):
    # shown, it is a message line too. The same value read as code is a finding
    assert not codes_at(found, line_of(ENV_REPORT, "Specified devices"))
    assert codes_at(found, line_of(ENV_REPORT, "if torch.version.cuda is None"))
    assert codes_at(found, line_of(ENV_REPORT, 'arch_list = os.getenv("TORCH_CUDA_ARCH_LIST")'))


# RWKV-infctx-trainer RWKV-v5/lightning_trainer.py: the Trainer's defaults handed to LightningCLI as a dict
LIGHTNING_CLI = b"""from lightning.pytorch.cli import LightningCLI


def cli_main(argv):
    if "deepspeed_stage_3" in assumed_deepspeed_strategy(argv):
        print("note: 'deepspeed_stage_3' shards the model")
    LightningCLI(
        RWKV, RWKVDataModule,
        save_config_kwargs={"overwrite": True},
        trainer_defaults={
            "accelerator": "gpu",
            "precision": "bf16-mixed",
            "strategy": "deepspeed_stage_2_offload",
            "num_sanity_val_steps": 0,
        },
        args=argv,
    )
    return {"accelerator": "auto", "strategy": "ddp", "help": "accelerator: gpu or cpu"}
"""


def test_trainer_settings_in_a_dict_are_read_as_keywords():
    found = _found(LIGHTNING_CLI)
    assert codes_at(found, line_of(LIGHTNING_CLI, '"accelerator": "gpu"')) == {"NPU050"}
    assert codes_at(found, line_of(LIGHTNING_CLI, '"strategy": "deepspeed_stage_2_offload"')) == {"NPU418"}
    for text in ('if "deepspeed_stage_3" in', "print(\"note:", '"accelerator": "auto"'):
        assert not codes_at(found, line_of(LIGHTNING_CLI, text)), text


# SmolLM vision/m4/training/main.py
PROFILER = b"""from torch.profiler.profiler import ProfilerActivity, profile, tensorboard_trace_handler


def maybe_profile(path, schedule):
    return profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        on_trace_ready=tensorboard_trace_handler(path),
        schedule=schedule,
    )


def cpu_profile(path):
    return profile(activities=[ProfilerActivity.CPU], on_trace_ready=tensorboard_trace_handler(path))
"""


def test_profiler_activity_from_the_profiler_module():
    found = _found(PROFILER)
    assert codes_at(found, line_of(PROFILER, "ProfilerActivity.CUDA]")) == {"NPU010"}
    assert not codes_at(found, line_of(PROFILER, "activities=[ProfilerActivity.CPU], on_trace"))


# fast-transformers fast_transformers/causal_product/__init__.py: the op's CPU and CUDA builds, chosen by device
CAUSAL_PRODUCT = b"""import torch

from .causal_product_cpu import causal_dot_product as causal_dot_product_cpu, \\
    causal_dot_backward as causal_dot_backward_cpu

try:
    from .causal_product_cuda import \\
        causal_dot_product as causal_dot_product_cuda, \\
        causal_dot_backward as causal_dot_backward_cuda
except ImportError:
    causal_dot_product_cuda = causal_dot_backward_cuda = None


class CausalDotProduct(torch.autograd.Function):
    dot = {
        "cpu": causal_dot_product_cpu,
        "cuda": causal_dot_product_cuda
    }
"""

# a package's Python helpers named for CUDA, with no compiled CPU twin beside them
PYTHON_HELPERS = b"""from .ops_cuda import fused_rotary
from .utils_cpu import to_host


def rotate(x):
    return fused_rotary(to_host(x))
"""


def test_relative_cuda_build_beside_its_cpu_twin():
    found = _found(CAUSAL_PRODUCT, "fast_transformers/causal_product/__init__.py")
    # the multi-line import is reported on its first line (decision 6), the CPU twin's import is not a finding
    assert "NPU379" in codes_at(found, line_of(CAUSAL_PRODUCT, "from .causal_product_cuda import"))
    assert "NPU379" in codes_at(found, line_of(CAUSAL_PRODUCT, '"cuda": causal_dot_product_cuda'))
    assert not codes_at(found, line_of(CAUSAL_PRODUCT, "from .causal_product_cpu import"))
    assert not codes_at(found, line_of(CAUSAL_PRODUCT, '"cpu": causal_dot_product_cpu'))
    assert not _found(PYTHON_HELPERS, "pkg/rotary.py")


# llm-awq tinychat/modules/fused_internencoder.py: a guarded flash-attn import continued by a backslash
BACKSLASH_IMPORT = b"""try:
    from flash_attn.bert_padding import pad_input, unpad_input
    from flash_attn.flash_attn_interface import \\
        flash_attn_varlen_qkvpacked_func
    has_flash_attn = True
except ImportError:
    has_flash_attn = False
"""


def test_backslash_continued_import_is_reported_on_its_first_line():
    found = _found(BACKSLASH_IMPORT)
    assert "NPU341" in codes_at(found, line_of(BACKSLASH_IMPORT, "from flash_attn.flash_attn_interface import"))
    assert not codes_at(found, line_of(BACKSLASH_IMPORT, "        flash_attn_varlen_qkvpacked_func"))


# CuLE setup.py / torchcule/atari/env.py: setuptools' Extension whose build_ext sends the .cu sources to nvcc
CULE_SETUP = """import os
from setuptools import find_packages, setup, Extension

sources = [os.path.join('torchcule', f) for f in ['frontend.cpp', 'backend.cu']]
cpu_sources = ['torchcule/reader.cpp']

setup(name='torchcule',
      ext_modules=[
          Extension('torchcule_atari',
              sources=sources,
              extra_compile_args={'gcc': [], 'nvcc': ['-O3']}
              ),
          Extension('torchcule_reader', sources=cpu_sources),
          ],
      packages=find_packages(exclude=['build']))
"""

CULE_ENV = """import torchcule_atari
import torchcule_reader


class Env(torchcule_atari.AtariEnv):
    def __init__(self, path):
        super().__init__()
        self.roms = torchcule_reader.read(path)
"""


def _lines_by_path(root: Path, codes: tuple[str, ...]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for r in run_static([root], jobs=1).results:
        for f in r.findings:
            if f.code in codes:
                out.setdefault(r.path, set()).add(f.line)
    return out


def test_setuptools_extension_with_cu_sources(tmp_path):
    root = tmp_path / "cule"
    (root / "torchcule").mkdir(parents=True)
    (root / "setup.py").write_text(CULE_SETUP)
    (root / "torchcule" / "env.py").write_text(CULE_ENV)
    found = _lines_by_path(root, ("NPU370", "NPU320"))
    setup_py = CULE_SETUP.encode()
    assert found["setup.py"] == {line_of(setup_py, "Extension('torchcule_atari'")}      # not the C++-only reader
    env_py = CULE_ENV.encode()
    assert found["torchcule/env.py"] == {line_of(env_py, "import torchcule_atari"), line_of(env_py, "class Env(")}


# FB-BEV deployment/pth2onnx.py: settings made before tracing for the export; the cast is the exported file's dtype
ONNX_EXPORT = b"""import torch


def main(model, data, onnx_path):
    model.eval()
    torch.backends.cuda.matmul.allow_tf32 = False
    model = model.half()
    with torch.no_grad():
        torch.onnx.export(model, data, f=onnx_path, opset_version=13)
"""


def test_tf32_switch_in_an_export_function_is_reported():
    found = _found(ONNX_EXPORT)
    assert codes_at(found, line_of(ONNX_EXPORT, "allow_tf32 = False")) == {"NPU206"}
    assert not codes_at(found, line_of(ONNX_EXPORT, "model.half()"))


# a shell script that reads what its `python -c` program prints: the print is the program's result, not a message
SCRIPT = b"""#!/bin/bash
CUDA_VERSION=$(python -c "import torch; print(torch.version.cuda)")
python -c "import torch; print(torch.version.cuda)"
python -c "import torch; print('CUDA', torch.version.cuda); x = torch.ones(1)"
"""


def test_python_c_output_read_by_the_script_is_a_result():
    found = _found(SCRIPT, "setup.sh")
    assert codes_at(found, 2)                                    # the script reads the version
    assert not codes_at(found, 3) and not codes_at(found, 4)       # printed to the log
