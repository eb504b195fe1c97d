"""Precision fixes of tq50a (session 50, tuned on heldout61's labels): code already run on Ascend.

- a shell script that sets up Ascend itself (CANN's set_env.sh, `export HCCL_*`, ASCEND_RT_VISIBLE_DEVICES) or
  launches with `device=npu`, and names no CUDA device or NCCL setting: its vLLM starts and flash-attention switches
  are info (auditor/project/shell.py `_selects_ascend_devices`);
- a TileLang module compiled with TileLang-Ascend's pass configs (`PassConfigKey.TL_ASCEND_*`) is Ascend code
  (auditor/static/npu_native.py `written_for_npu`), and its kernels are no CUDA kernels for their users;
- a wrapper entry that imports transfer_to_npu and runs the program's modules out of its own folder (`from
  inference.pipeline.entry import main`, the folder below the tree root) puts them under the shim
  (auditor/static/shim_graph.py `_named_modules`);
- `sys.modules["apex.optimizers.FusedAdam"] = AdamW` provides the name, it selects no apex (patch_targets.py);
- `map_location="cuda"` passed to the tree's own loader that takes no map_location (stale_keywords.py);
- a conda environment named for macOS under any file name (`mac-env.yml`) (configs.py).

Code written afresh in the shape of an Ascend recipe repository, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from auditor.static.unreached_defs import reach_facts
from tests.test_tq38 import _in, _tree

VLLM_START = """\
#!/bin/bash
export VLLM_USE_V1=1
{setting}

vllm serve ${{MODEL_PATH}} \\
    --port 8000 \\
    --tensor-parallel-size 8
"""

VERL_LAUNCH = """\
#!/bin/bash
set -x
MODEL=/data/models/qwen3
export VLLM_ATTENTION_BACKEND=FLASH_ATTN
python3 -m verl.trainer.main_ppo --config-path=./config \\
    actor_rollout_ref.model.path=$MODEL \\
    actor_rollout_ref.rollout.name=vllm \\
    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True \\
    trainer.device={device} \\
    trainer.n_gpus_per_node=16
"""


def test_vllm_start_in_a_script_that_configures_hccl_is_info(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"serve/start.sh": VLLM_START.format(setting="export HCCL_BUFFSIZE=400"),
                             "cann/start.sh": VLLM_START.format(
                                 setting="source /usr/local/Ascend/ascend-toolkit/set_env.sh"),
                             "both/start.sh": VLLM_START.format(setting="export NCCL_P2P_DISABLE=1"),
                             "plain/start.sh": VLLM_START.format(setting="")})
    assert _in(found, "serve/start.sh")[5]["NPU447"] == "info"
    assert _in(found, "cann/start.sh")[5]["NPU447"] == "info"
    assert _in(found, "both/start.sh")[5]["NPU447"] == "warning"      # NCCL configured: not Ascend's alone
    assert _in(found, "plain/start.sh")[5]["NPU447"] == "warning"


def test_launch_with_device_npu_runs_its_engine_and_flash_switches_on_ascend(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"recipe_a/run.sh": VERL_LAUNCH.format(device="npu"),
                             "recipe_b/run.sh": VERL_LAUNCH.format(device="cuda")})
    npu, gpu = _in(found, "recipe_a/run.sh"), _in(found, "recipe_b/run.sh")
    assert npu[4]["NPU363"] == npu[8]["NPU363"] == npu[7]["NPU447"] == "info"
    assert gpu[4]["NPU363"] != "info" and gpu[7]["NPU447"] == "warning"


SERVE_USAGE = """\
#!/bin/bash
MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
if [ "${1:-}" = "--help" ]; then
  echo "usage: serve.sh   (on an Ascend host use serve_npu.sh, which passes --device npu)"
  exit 0
fi
export VLLM_ATTENTION_BACKEND=FLASH_ATTN
vllm serve "$MODEL" --tensor-parallel-size 4
"""

SERVE_EITHER = """\
#!/bin/bash
if [ -d /usr/local/Ascend ]; then
  source /usr/local/Ascend/ascend-toolkit/set_env.sh
  export HCCL_CONNECT_TIMEOUT=1200
{inside}fi
{after}"""


def test_ascend_words_in_messages_or_another_arm_leave_the_cuda_launch(tmp_path: Path) -> None:
    start = "export VLLM_ATTENTION_BACKEND=FLASH_ATTN\nvllm serve Qwen/Qwen2.5-7B-Instruct\n"
    found = _tree(tmp_path, {"a/serve.sh": SERVE_USAGE,
                             "b/serve.sh": SERVE_EITHER.format(inside="", after=start),
                             "c/serve.sh": SERVE_EITHER.format(inside="  " + start.replace("\n", "\n  ", 1), after=""),
                             "d/serve.sh": SERVE_USAGE.replace('"$MODEL" --tensor', '"$MODEL" --device npu --tensor')})
    usage, after, inside, launch = (_in(found, f"{d}/serve.sh") for d in "abcd")
    # `--device npu` in an echo text, the Ascend set-up in another `if` arm: the CUDA launch keeps its findings
    assert usage[7]["NPU363"] == usage[8]["NPU447"] == "warning"
    assert after[6]["NPU363"] == after[7]["NPU447"] == "warning"
    # the set-up in the same arm as the engine start, `--device npu` passed to the launch: Ascend's
    assert inside[5]["NPU363"] == inside[6]["NPU447"] == "info"
    assert launch[7]["NPU363"] == launch[8]["NPU447"] == "info"


TILELANG_KERNEL = """\
import tilelang
import tilelang.language as T

pass_configs = {{
    tilelang.PassConfigKey.{key}: True,
}}


@tilelang.jit(out_idx=[2], pass_configs=pass_configs)
def gemm_kernel(M, N, K):
    dtype = "float16"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64)) as (bx, by):
            T.clear(C)
    return main
"""

TILELANG_TEST = """\
import torch
from {module} import gemm_kernel

kernel = gemm_kernel(128, 128, 128)
a = torch.randn(128, 128)
out = kernel(a, a)
"""


def test_tilelang_ascend_pass_configs_make_ascend_kernels(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"ops_a/gemm_a.py": TILELANG_KERNEL.format(key="TL_ASCEND_AUTO_SYNC"),
                             "ops_a/test_gemm_a.py": TILELANG_TEST.format(module="gemm_a"),
                             "ops_b/gemm_b.py": TILELANG_KERNEL.format(key="TL_DISABLE_WARP_SPECIALIZED"),
                             "ops_b/test_gemm_b.py": TILELANG_TEST.format(module="gemm_b")})
    assert all(sev == "info" for codes in _in(found, "ops_a/gemm_a.py").values() for sev in codes.values())
    assert not any("NPU320" in codes for codes in _in(found, "ops_a/test_gemm_a.py").values())
    assert _in(found, "ops_b/gemm_b.py")[9]["NPU365"] == "warning"
    assert any("NPU320" in codes for codes in _in(found, "ops_b/test_gemm_b.py").values())
    # a CUDA kernel whose porting note (a comment) names the Ascend key: a comment changes no finding
    noted = TILELANG_KERNEL.format(key="TL_DISABLE_WARP_SPECIALIZED").replace(
        "pass_configs = {", "# TODO(ascend): tilelang-ascend needs tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC\n"
        "pass_configs = {")
    found = _tree(tmp_path / "noted", {"ops_c/gemm_c.py": noted})
    assert _in(found, "ops_c/gemm_c.py")[10]["NPU365"] == "warning"


WRAPPER = """\
import torch
import torch_npu
from torch_npu.contrib import transfer_to_npu

from inference.pipeline.entry import main

if __name__ == "__main__":
    main()
"""

ENTRY = """\
import argparse

from inference.pipeline.evaluator import Evaluator


def main():
    Evaluator().run()


if __name__ == "__main__":
    main()
"""

EVALUATOR = """\
import torch


class Evaluator:
    def __init__(self):
        self.device = f"cuda:{torch.cuda.current_device()}"

    def run(self):
        torch.cuda.synchronize()
        return torch.zeros(1, device=self.device)
"""


def test_wrapper_entry_below_the_root_puts_the_program_under_the_shim(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"models/magi-human/sample.py": WRAPPER,
                             "models/magi-human/inference/pipeline/entry.py": ENTRY,
                             "models/magi-human/inference/pipeline/evaluator.py": EVALUATOR,
                             # a second recipe whose wrapper has the same file name
                             "models/video-gen/sample.py": WRAPPER.replace("inference.pipeline", "hyvideo.runner"),
                             "models/video-gen/hyvideo/runner/entry.py": ENTRY.replace("inference.pipeline", "hyvideo.runner"),
                             "models/video-gen/hyvideo/runner/evaluator.py": EVALUATOR.replace("Evaluator", "Runner"),
                             "models/other-model/runner/entry.py": ENTRY.replace(
                                 "inference.pipeline.evaluator import Evaluator", "runner.scorer import Scorer").replace(
                                 "Evaluator()", "Scorer()"),
                             "models/other-model/runner/scorer.py": EVALUATOR.replace("Evaluator", "Scorer")})
    assert _in(found, "magi-human/inference/pipeline/evaluator.py")[6]["NPU002"] == "info"
    assert _in(found, "magi-human/inference/pipeline/evaluator.py")[9]["NPU002"] == "info"
    assert _in(found, "video-gen/hyvideo/runner/evaluator.py")[6]["NPU002"] == "info"
    # the same program without a wrapper that loads the shim
    assert _in(found, "other-model/runner/scorer.py")[6]["NPU002"] != "info"


PRELUDE = """\
import sys
import importlib


def apply_optimizer_patch():
    if 'apex.optimizers' in sys.modules:
        apex_opt = sys.modules['apex.optimizers']
    else:
        apex_opt = importlib.import_module('apex.optimizers')
    from mindspeed.optimizer.adamw import AdamW
    apex_opt.FusedAdam = AdamW
    sys.modules['apex.optimizers'] = apex_opt
    sys.modules['apex.optimizers.FusedAdam'] = AdamW


apply_optimizer_patch()
"""


def test_module_standin_registered_under_apex_name_selects_no_apex(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"patches/prelude_patch.py": PRELUDE}), "prelude_patch.py")
    assert "NPU318" in found[6]                     # the check whether apex is loaded keeps its finding
    assert "NPU318" not in found.get(12, {}) and "NPU318" not in found.get(13, {})


LOADER = """\
import pickle


def load_local_or_remote_file(filepath, file_type=None):
    with open(filepath, "rb") as f:
        return pickle.load(f)
"""

RESUME = """\
from rlkit.util.io import load_local_or_remote_file


def resume(variant):
    data = load_local_or_remote_file(variant.get("path"), map_location="cuda")
    return data["algorithm"]
"""


def test_map_location_to_the_trees_loader_without_it_is_a_stale_keyword(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"rlkit/util/io.py": LOADER, "rlkit/launchers/resume.py": RESUME,
                             "other/util/io.py": LOADER.replace("file_type=None", "file_type=None, **kwargs"),
                             "other/launchers/resume.py": RESUME.replace("rlkit.", "other.")})
    assert _in(found, "rlkit/launchers/resume.py")[5]["NPU003"] == "info"
    assert _in(found, "other/launchers/resume.py")[5]["NPU003"] == "error"     # the loader takes **kwargs


MAC_ENV = """\
name: rl
channels:
- pytorch
dependencies:
- python=3.5.2
- pytorch=0.4.1
- cudatoolkit=9.0
"""


def test_conda_environment_named_for_macos_under_any_name(tmp_path: Path) -> None:
    exported = MAC_ENV.replace("- pytorch=0.4.1", "- pytorch=0.4.1=py35_cuda9.0.176_cudnn7.1.2_1\n- libcxx=16.0.6=h4653b0c_0") + \
        "prefix: /Users/me/miniconda3/envs/rl\n"
    found = _tree(tmp_path, {"environment/mac-env.yml": MAC_ENV, "environment/linux-gpu-env.yml": MAC_ENV,
                             "envs/dev.yml": exported, "envs/gpu.yml": exported.replace("/Users/", "/home/")})
    # a Mac's environment, by its name or by its `conda env export` content: its facts stay, as info
    for mac in ("mac-env.yml", "envs/dev.yml"):
        assert _in(found, mac) and all(sev == "info" for codes in _in(found, mac).values() for sev in codes.values())
    assert any(sev != "info" for codes in _in(found, "linux-gpu-env.yml").values() for sev in codes.values())
    assert any(sev != "info" for codes in _in(found, "envs/gpu.yml").values() for sev in codes.values())


DYNAMIC_CONV = """\
import os

import torch
import torch.nn as nn


def DynamicConv(input_size, kernel_size=1, num_heads=1):
    if torch.cuda.is_available():
        try:
            from fairseq.modules.dynamicconv_layer import DynamicconvLayer

            return DynamicconvLayer(input_size, kernel_size=kernel_size, num_heads=num_heads)
        except ImportError as e:
            print(e)
    return DynamicConv1dTBC(input_size, kernel_size=kernel_size, num_heads=num_heads)


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    raise RuntimeError("no accelerator")


def default_num_workers():
    if torch.cuda.is_available():
        return torch.cuda.device_count()
    return os.cpu_count() or 1


def free_gpu():
    if torch.cuda.is_available():
        try:
            import pynvml

            pynvml.nvmlInit()
            free = [pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).free for i in range(8)]
            return torch.device(f"cuda:{free.index(max(free))}")
        except ImportError:
            pass
    return torch.device("cpu")


class DynamicConv1dTBC(nn.Module):
    def __init__(self, input_size, kernel_size=1, num_heads=1):
        super().__init__()
"""


def test_cuda_probe_that_falls_through_to_a_portable_return_is_info(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"fairseq/modules/dynamic_convolution.py": DYNAMIC_CONV}), "dynamic_convolution.py")
    assert found[8]["NPU002"] == "info"
    assert found[19]["NPU002"] != "info"        # no portable return after it: the function raises off CUDA
    assert found[25]["NPU002"] != "info"        # no kernel attempt: the other path silently differs (a worker count)
    assert found[31]["NPU002"] != "info"        # a device chosen with an imported helper: no kernel, the CPU runs


APP = """\
import gradio as gr

from ldm.encoders import BERTEmbedder


def build():
    return BERTEmbedder()


demo = gr.Interface(fn=build, inputs=[], outputs=[])
demo.launch()
"""

ENCODERS = """\
import torch


class BERTEmbedder:
    def __init__(self, device="cuda"):
        self.device = device

    def forward(self, x):
        y = x
\treturn y.to(self.device)
"""


def test_a_module_that_does_not_compile_runs_nothing(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"app.py": APP, "ldm/encoders.py": ENCODERS,
                             "ldm/good.py": ENCODERS.replace("\t", "        ")})
    encoders = _in(found, "ldm/encoders.py")
    assert encoders[5]["NPU003"] == "info"
    assert all(sev == "info" for codes in encoders.values() for sev in codes.values())
    # the same module compiling, imported by the app: its default keeps its finding
    found = _tree(tmp_path / "control", {"app.py": APP, "ldm/encoders.py": ENCODERS.replace(
        "\t", "        ")})
    assert _in(found, "ldm/encoders.py")[5]["NPU003"] != "info"
    # a newer release's syntax (a PEP 701 f-string, Python 3.12+) in a module the app imports: it runs there
    newer = ENCODERS.replace("\t", "        ").replace(
        "        return y.to(self.device)", '        print(f"mean {x["loss"]:.3f}")\n        return y.to(self.device)')
    found = _tree(tmp_path / "newer", {"app.py": APP, "ldm/encoders.py": newer})
    assert _in(found, "ldm/encoders.py")[5]["NPU003"] != "info"
    # the reach facts say which: Python 2 statements parse in no Python 3, a newer release's syntax parses there
    assert reach_facts(b"print 'x'\n") == {"unparsed": True} == reach_facts(b"try:\n    x\nexcept E, e:\n    x\n")
    assert reach_facts(newer.encode()) == {} == reach_facts(b"type Alias = int\n")
