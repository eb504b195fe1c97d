"""t11a: the judgement policy of docs/precision.md ("Judgement policy") on code shaped like the heldout3 trees
(FlagGems' Triton-Ascend backend, torchchat's and opencompass' CUDA CI jobs)."""
from __future__ import annotations

from tests.static_snippets import findings_in_tree, write_source

_GENERIC_KERNEL = """
import torch
import triton
import triton.language as tl

from flag_gems.utils import libentry


@libentry()
@triton.jit(do_not_specialize=["eps"])
def layer_norm_kernel(X, Y, W, B, M, N, eps, BLOCK_ROW_SIZE: tl.constexpr, BLOCK_COL_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    row = pid * BLOCK_ROW_SIZE + tl.arange(0, BLOCK_ROW_SIZE)[:, None]
    x = tl.load(X + row * N, mask=row < M, other=0.0).to(tl.float32)
    tl.store(Y + row * N, x, mask=row < M)


def layer_norm(x, weight, bias, eps=1e-5):
    M, N = x.shape[0], x.shape[-1]
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_ROW_SIZE"]), 1, 1)
    layer_norm_kernel[grid](x, y, weight, bias, M, N, eps, BLOCK_ROW_SIZE=4, BLOCK_COL_SIZE=1024)
    return y
"""

_ASCEND_OVERRIDE = """
import triton
import triton.language as tl


@triton.jit
def max_kernel(inp, out, M, BLOCK_SIZE: tl.constexpr):
    offset = tl.arange(0, BLOCK_SIZE)
    tl.store(out, tl.max(tl.load(inp + offset, mask=offset < M, other=-float("inf")), axis=0))
"""

_PTX = """
import triton
import triton.language as tl


@triton.jit
def fast_exp(x):
    return tl.inline_asm_elementwise("ex2.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
"""


def _triton_tree(root, with_ascend: bool):
    write_source(root, "src/flag_gems/__init__.py", "from .ops import *\n")
    write_source(root, "src/flag_gems/ops/layernorm.py", _GENERIC_KERNEL)
    write_source(root, "src/flag_gems/ops/exp2.py", _PTX)
    if with_ascend:
        write_source(root, "src/flag_gems/runtime/backend/_ascend/__init__.py", "vendor_name = 'ascend'\n")
        write_source(root, "src/flag_gems/runtime/backend/_ascend/ops/max.py", _ASCEND_OVERRIDE)


def _severities(found, path, code):
    return {sev for (p, _line, c), sev in found.items() if p == path and c == code}


def test_generic_triton_is_info_where_the_package_runs_triton_on_ascend(tmp_path):
    _triton_tree(tmp_path, with_ascend=True)
    found = findings_in_tree(tmp_path)
    assert _severities(found, "src/flag_gems/ops/layernorm.py", "NPU373") == {"info"}
    # CUDA-only Triton pieces (inline PTX) have no Triton-Ascend form: they keep their severity
    ptx = {sev for (p, _line, _c), sev in found.items() if p == "src/flag_gems/ops/exp2.py"}
    assert "error" in ptx


def test_generic_triton_is_reported_without_an_ascend_backend(tmp_path):
    _triton_tree(tmp_path, with_ascend=False)
    found = findings_in_tree(tmp_path)
    assert _severities(found, "src/flag_gems/ops/layernorm.py", "NPU373") == {"warning"}


def test_an_ascend_folder_without_triton_is_no_triton_ascend_backend(tmp_path):
    _triton_tree(tmp_path, with_ascend=False)
    write_source(tmp_path, "src/flag_gems/runtime/backend/_ascend/__init__.py",
                 "import torch_npu\n\nvendor_name = 'ascend'\ndevice_name = 'npu'\n")
    found = findings_in_tree(tmp_path)
    assert _severities(found, "src/flag_gems/ops/layernorm.py", "NPU373") == {"warning"}


_TORCHCHAT_WORKFLOW = """
name: Run the README instructions - with stories

on:
  pull_request:
  push:
    branches:
      - main

jobs:
  gather-models-cpu:
    runs-on: ubuntu-22.04
    steps:
      - name: Run on CPU
        run: |
          python3 torchchat.py generate stories15M --device cuda
  test-quantization-any:
    permissions:
      id-token: write
      contents: read
    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main
    with:
      runner: linux.g5.4xlarge.nvidia.gpu
      gpu-arch-type: cuda
      gpu-arch-version: "12.4"
      timeout: 60
      script: |
        echo "::group::Print machine info"
        nvidia-smi
        echo "::endgroup::"
        python3 torchchat.py generate stories15M --device cuda --dtype bf16
  test-rocm:
    runs-on: linux.rocm.gpu.2
    steps:
      - name: Print machine info
        run: |
          nvidia-smi || rocm-smi
          python3 torchchat.py generate stories15M --device cuda
"""

_OPENCOMPASS_WORKFLOW = """
name: pr_stage_test

on:
  pull_request:

jobs:
  build_cu131:
    runs-on: ubuntu-latest
    container:
      image: nvidia/cuda:13.1.1-cudnn-runtime-ubuntu24.04
    steps:
      - uses: actions/checkout@v3
      - name: Install PyTorch
        run: pip install torch==2.9.0 --index-url https://download.pytorch.org/whl/cu130
"""


def _lines(found, path):
    return {line: sev for (p, line, _c), sev in found.items() if p == path}


def test_findings_in_a_cuda_ci_job_on_nvidia_runners_are_info(tmp_path):
    write_source(tmp_path, ".github/workflows/run-readme-pr.yml", _TORCHCHAT_WORKFLOW)
    write_source(tmp_path, ".github/workflows/pr-stage-check.yml", _OPENCOMPASS_WORKFLOW)
    found = findings_in_tree(tmp_path)
    readme = _lines(found, ".github/workflows/run-readme-pr.yml")
    text = _TORCHCHAT_WORKFLOW.splitlines()

    def line_of(needle: str) -> int:
        return next(n for n, t in enumerate(text, 1) if t.endswith(needle))

    assert readme[line_of("stories15M --device cuda")] == "error"   # a CPU runner told to use cuda: not a CUDA job
    assert readme[line_of("gpu-arch-type: cuda")] == "info"
    assert readme[line_of("        nvidia-smi")] == "info"
    assert readme[line_of("nvidia-smi || rocm-smi")] != "info"     # a ROCm runner: not a CUDA-only job
    stage = _lines(found, ".github/workflows/pr-stage-check.yml")
    assert stage and set(stage.values()) == {"info"}       # a CUDA container image: the job tests the CUDA build


_PADDLE_CONFIG = """
# PaddleNLP GPT-3 13B on 8 cards
fp16 = True
fp16_opt_level = "O2"
use_cuda = True
dist_backend = "nccl"
"""

_TORCH_CONFIG = """
import torch

fp16 = True
fp16_opt_level = "O2"
dist_backend = "nccl"
"""


def test_paddle_code_in_a_pytorch_tree_is_another_frameworks(tmp_path):
    write_source(tmp_path, "training/benchmarks/gpt3_13B/paddle/config/_base.py", _PADDLE_CONFIG)
    write_source(tmp_path, "training/benchmarks/gpt3_13B/pytorch/config/_base.py", _TORCH_CONFIG)
    write_source(tmp_path, "training/run_benchmarks/paddle/start_paddle_task.py",
                 "import os\nimport paddle\n\nos.environ['NCCL_ALGO'] = 'Ring'\npaddle.set_device('gpu')\n")
    found = findings_in_tree(tmp_path)
    paddle = {(line, code): sev for (p, line, code), sev in found.items() if "/paddle/" in p}
    assert paddle and set(paddle.values()) == {"info"}
    assert not any(code == "NPU317" for (_line, code) in paddle)     # Paddle's AMP level, not apex's
    torch_side = {code: sev for (p, _line, code), sev in found.items() if "/pytorch/" in p}
    assert torch_side.get("NPU317") == "warning"
    assert torch_side.get("NPU101") == "error"


def test_a_paddle_converter_that_imports_torch_stays_pytorch(tmp_path):
    write_source(tmp_path, "tools/paddle_to_torch.py",
                 "import paddle\nimport torch\n\nstate = paddle.load('m.pdparams')\nmodel.cuda()\n")
    found = findings_in_tree(tmp_path)
    assert "error" in {sev for (p, _line, _code), sev in found.items() if p == "tools/paddle_to_torch.py"}


def test_accelerator_key_of_another_tool_is_not_lightnings(tmp_path):
    write_source(tmp_path, "torchchat/quant_config/cuda.json",
                 '{\n    "executor": {"accelerator": "cuda"},\n    "precision": {"dtype": "bf16"}\n}\n')
    write_source(tmp_path, "configs/trainer/gpu.yaml", "accelerator: gpu\ndevices: 8\n")
    write_source(tmp_path, "configs/train.yaml", "trainer:\n  accelerator: gpu\n  max_epochs: 3\n")
    found = findings_in_tree(tmp_path)
    profile = {code for (p, _line, code) in found if p == "torchchat/quant_config/cuda.json"}
    assert "NPU020" not in profile and "NPU019" in profile      # a CUDA device setting of torchchat's executor
    assert ("configs/trainer/gpu.yaml", 1, "NPU020") in found
    assert ("configs/train.yaml", 2, "NPU020") in found


_DTYPE_TABLES = """
import torch

dtype_map = {'torch.bfloat16': torch.bfloat16, 'torch.float16': torch.float16, 'torch.half': torch.float16,
             'bfloat16': torch.bfloat16, 'float16': torch.float16, 'auto': 'auto'}
PRECISION_STR_TO_DTYPE = {"fp16": lambda: torch.float16, "bf16": lambda: torch.bfloat16}


def _convert_dtype(model_dtype):
    if model_dtype == 'torch.float16':
        return torch.float16
    elif model_dtype == 'torch.bfloat16':
        return torch.bfloat16
    raise NotImplementedError(model_dtype)


def build(cfg):
    compute_dtype = torch.bfloat16 if cfg.mixed_precision else torch.float32
    model = AutoModel.from_pretrained(cfg.path, torch_dtype=torch.float16)
    return model, compute_dtype
"""


def test_tables_of_dtype_names_choose_nothing(tmp_path):
    write_source(tmp_path, "opencompass/models/huggingface.py", _DTYPE_TABLES)
    found = findings_in_tree(tmp_path)
    lines = {line for (p, line, code) in found if code in ("NPU201", "NPU202")}
    assert lines == {18, 19}      # the choices in build(); the tables and the conversion branches are quiet


_OMEGAFOLD_DEVICE = """
import torch


def _get_device(device):
    if device is None:
        if torch.cuda.is_available():
            return 'cuda'
        return 'cpu'
    elif device == 'cpu':
        return device
    elif device.startswith('cuda'):
        if torch.cuda.is_available():
            return device
        raise ValueError('Device cuda is not available')
    raise ValueError(f'Device type {device} is not available')


def on_gpu(x):
    return str(x.device).startswith('cuda')
"""


def test_a_user_device_that_startswith_cuda_is_a_gate(tmp_path):
    write_source(tmp_path, "omegafold/pipeline.py", _OMEGAFOLD_DEVICE)
    found = findings_in_tree(tmp_path)
    assert found[("omegafold/pipeline.py", 12, "NPU003")] == "warning"    # the user's device: the other branch runs
    assert found[("omegafold/pipeline.py", 13, "NPU002")] == "warning"    # behind that gate
    assert found[("omegafold/pipeline.py", 7, "NPU002")] == "error"       # the gate of the default device
    assert found[("omegafold/pipeline.py", 20, "NPU003")] == "error"      # the runtime's device text


def test_a_signing_key_is_no_cuda_install(tmp_path):
    write_source(tmp_path, "ci/install.sh",
                 "apt-key adv --fetch-keys https://developer.download.nvidia.com/compute/machine-learning/repos/"
                 "ubuntu1804/x86_64/7fa2af80.pub\napt-get install -y cuda-toolkit-12-4\n")
    found = findings_in_tree(tmp_path)
    # the key installs nothing (no error), but the line only serves NVIDIA's repository: info (t22c; tuned_t15s,
    # tuned_t15u and tuned_t22c label it device)
    assert {sev for (p, line, _c), sev in found.items() if p == "ci/install.sh" and line == 1} == {"info"}
    assert any(p == "ci/install.sh" and line == 2 for (p, line, _c) in found)


_DIFFSYNTH_FP8 = """
import torch

FP8_WEIGHT_DTYPE = torch.float8_e4m3fn


class Fp8Linear(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(
            torch.empty(out_features, in_features, dtype=FP8_WEIGHT_DTYPE, device="meta"),
            requires_grad=False,
        )


def compute_dtype(cfg):
    dtype = torch.bfloat16
    return torch.zeros(1, dtype=dtype)
"""


def test_a_dtype_is_reported_where_it_is_written_not_at_each_use_of_its_constant(tmp_path):
    write_source(tmp_path, "diffsynth/models/ideogram4_dit.py", _DIFFSYNTH_FP8)
    found = findings_in_tree(tmp_path)
    fp8 = sorted(line for (p, line, code) in found if code == "NPU203")
    assert fp8 == [4]                                      # the constant's line, not line 11
    assert ("diffsynth/models/ideogram4_dit.py", 17, "NPU201") in found    # a local value is written there


_TORCHCHAT_BUILDER = """
import torch
from torch.nn.attention import SDPBackend

attention_backends = {
    "math": torch.nn.attention.SDPBackend.MATH,
    "flash_attention": torch.nn.attention.SDPBackend.FLASH_ATTENTION,
    "efficient_attention": torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
}


def pick(args):
    fallback = {"default": SDPBackend.FLASH_ATTENTION}
    with torch.nn.attention.sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        return attention_backends[args.attention_backend], fallback
"""


def test_an_entry_of_a_table_of_option_names_is_info(tmp_path):
    write_source(tmp_path, "torchchat/cli/builder.py", _TORCHCHAT_BUILDER)
    found = findings_in_tree(tmp_path)
    assert found[("torchchat/cli/builder.py", 7, "NPU350")] == "info"
    assert found[("torchchat/cli/builder.py", 8, "NPU350")] == "info"
    assert found[("torchchat/cli/builder.py", 13, "NPU350")] == "error"    # the key does not name it: a choice
    assert found[("torchchat/cli/builder.py", 14, "NPU350")] == "error"    # chosen in code


_COLLATOR = """
from dataclasses import dataclass

import torch


@dataclass
class DataCollatorWithPaddingAndCuda:
    tokenizer: object
    device: object = None

    def __call__(self, features):
        batch = self.tokenizer.pad(features, padding=True, return_tensors="pt")
        if self.device:
            batch = batch.to(self.device)
        return batch


def reset_cuda_peak_stats(device):
    torch.cuda.reset_peak_memory_stats(device)


def encode(tokenizer, device):
    collate = DataCollatorWithPaddingAndCuda(tokenizer=tokenizer, device=device)
    reset_cuda_peak_stats(device)
    return collate
"""


def test_a_helper_named_for_cuda_with_nothing_cuda_inside_is_not_reported(tmp_path):
    write_source(tmp_path, "opencompass/openicl/icl_retriever/icl_topk_retriever.py", _COLLATOR)
    found = findings_in_tree(tmp_path)
    helpers = sorted(line for (_p, line, code) in found if code == "NPU039")
    assert helpers == [25]        # reset_cuda_peak_stats holds a CUDA call; the collator only moves to its device


_DLLOGGER_ENV = """
import os

import dllogger


def get_framework_env_vars():
    return {
        'NVIDIA_PYTORCH_VERSION': os.environ.get('NVIDIA_PYTORCH_VERSION'),
        'CUDA_VERSION': os.environ.get('CUDA_VERSION'),
        'CUDNN_VERSION': os.environ.get('CUDNN_VERSION'),
        'NVIDIA_TF32_OVERRIDE': os.environ.get('NVIDIA_TF32_OVERRIDE'),
    }


def setup_logger(args):
    dllogger.log(step='PARAMETER', data=get_framework_env_vars())
    child_env = {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"), "PATH": os.environ["PATH"]}
    return child_env
"""


def test_a_record_of_the_environment_sets_nothing(tmp_path):
    write_source(tmp_path, "fairseq/log_helper.py", _DLLOGGER_ENV)
    found = findings_in_tree(tmp_path)
    assert not any(line in range(8, 14) for (_p, line, _code) in found)
    assert ("fairseq/log_helper.py", 18, "NPU004") in found      # two variables handed on: maybe a child's env


def test_a_dtypes_limits_read_with_finfo_choose_nothing(tmp_path):
    # AngelSlim / neural-compressor quantisers: the limits of fp8 and fp16 are module constants read on the host;
    # the tensor actually made in float8 is where the port decides
    write_source(tmp_path, "quant/fp8_utils.py", """\
        import torch

        FP8_E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max
        FP16_MIN = torch.finfo(torch.float16).min
        INT8_MAX = torch.iinfo(torch.int8).max


        def quantize(x, scale):
            q = (x / scale).clamp(-FP8_E4M3_MAX, FP8_E4M3_MAX)
            return q.to(torch.float8_e4m3fn)
        """)
    found = findings_in_tree(tmp_path)
    lines = {line for (path, line, code) in found if code in ("NPU202", "NPU203")}
    assert lines == {10}      # the cast, not the finfo constants


def test_jax_code_in_a_pytorch_tree_is_another_frameworks(tmp_path):
    # AngelSlim / neural-compressor keep JAX examples beside their PyTorch code: torch_npu does not apply there
    write_source(tmp_path, "examples/jax/train_mnist.py", """\
        import os

        import jax
        import jax.numpy as jnp

        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        os.environ["NCCL_DEBUG"] = "INFO"
        x = jnp.ones((4, 4), dtype=jnp.bfloat16)
        print(jax.devices("gpu"))
        """)
    write_source(tmp_path, "examples/torch/train_mnist.py", """\
        import os

        import torch

        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        x = torch.ones(4, device="cuda")
        """)
    found = findings_in_tree(tmp_path)
    jax_side = {sev for (p, _line, _code), sev in found.items() if p == "examples/jax/train_mnist.py"}
    torch_side = {sev for (p, _line, _code), sev in found.items() if p == "examples/torch/train_mnist.py"}
    assert jax_side == {"info"}
    assert "error" in torch_side
