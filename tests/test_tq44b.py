"""Precision fixes of tq44b (session 44, tuned on heldout50's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

# -- a remote service's settings under the NVIDIA_ prefix (llama-stack's NeMo providers) -----------------------------

PROVIDER_CONFIG = """\
import os

from pydantic import BaseModel, Field


class NvidiaEvalConfig(BaseModel):
    evaluator_url: str = Field(default_factory=lambda: os.getenv("NVIDIA_EVALUATOR_URL", "http://0.0.0.0:7331"))
    project_id: str = Field(default_factory=lambda: os.getenv("NVIDIA_PROJECT_ID", "test-project"))
    dataset_namespace: str = Field(default_factory=lambda: os.getenv("NVIDIA_DATASET_NAMESPACE", "default"))
    output_model_dir: str = Field(default_factory=lambda: os.getenv("NVIDIA_OUTPUT_MODEL_DIR", "test-model"))

    @classmethod
    def sample_run_config(cls, **kwargs):
        if os.getenv("NVIDIA_DATASET_NAMESPACE") is None:
            return {"evaluator_url": "${env.NVIDIA_EVALUATOR_URL:=http://localhost:7331}"}
        return {}
"""

# control: what the NVIDIA container runtime and cuBLAS read keeps its finding
CONTAINER_SETUP = """\
import os

os.environ["NVIDIA_VISIBLE_DEVICES"] = "0,1"
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"
os.environ["NVIDIA_GUARDRAILS_URL"] = "http://nemo.test"
"""


def test_service_settings_under_nvidia_prefix_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"providers/eval/nvidia/config.py": PROVIDER_CONFIG}), "config.py")
    assert not any("NPU004" in codes for codes in found.values()), found


def test_container_runtime_variables_kept(tmp_path: Path):
    found = _in(_tree(tmp_path, {"setup_env.py": CONTAINER_SETUP}), "setup_env.py")
    assert "NPU004" in found.get(3, {}) and "NPU004" in found.get(4, {})
    assert "NPU004" not in found.get(5, {})


# -- OneFlow files, which import OneFlow under torch's name (CodeGeeX's OneFlow port) --------------------------------

ONEFLOW_MODEL = """\
import math
import oneflow as torch
import oneflow.nn.functional as F


class CodeGeeXModel(torch.nn.Module):
    def __init__(self, language_model):
        super().__init__()
        self.language_model = language_model

    def forward(self, input_ids):
        lm_output = self.language_model(input_ids)
        return F.linear(lm_output, self.language_model.embedding.word_embeddings.weight.half())
"""

TORCH_MODEL = ONEFLOW_MODEL.replace("import oneflow as torch", "import torch").replace("oneflow.nn", "torch.nn")


def test_oneflow_file_is_another_framework(tmp_path: Path):
    from tests.static_snippets import findings_on_line, write_tree

    root = write_tree(tmp_path, {"codegeex/oneflow/codegeex_model.py": ONEFLOW_MODEL,
                                 "codegeex/torch/codegeex_model.py": TORCH_MODEL})
    oneflow = findings_on_line(root, "codegeex/oneflow/codegeex_model.py", 13)
    torch_side = findings_on_line(root, "codegeex/torch/codegeex_model.py", 13)
    assert oneflow and all(ctx == "other-framework" for _, _, ctx in oneflow), oneflow
    assert torch_side and not any(ctx == "other-framework" for _, _, ctx in torch_side), torch_side


# -- a script named for another framework that runs a PyTorch program --------------------------------------------

CONVERT_SCRIPT = """\
# This script is used to convert mindspore checkpoint to the megatron format.
NPY_CKPT_PATH=$1
GPU=$2
SCRIPT_DIR=$(dirname "$(realpath "$0")")
MAIN_DIR=$(dirname "$SCRIPT_DIR")
export CUDA_VISIBLE_DEVICES=$GPU
python $MAIN_DIR/codegeex/megatron/mindspore_to_megatron.py --npy-ckpt-path $NPY_CKPT_PATH
"""

MEGATRON_CONVERTER = """\
import numpy as np
import torch

from codegeex.megatron import get_args


def main():
    args = get_args()
    torch.save({"model": np.load(args.npy_ckpt_path)}, "out.pt")
"""

MINDSPORE_TRAIN = """\
import mindspore

def main():
    mindspore.set_context(device_target="Ascend")
"""

MINDSPORE_SCRIPT = """\
export CUDA_VISIBLE_DEVICES=0
python codegeex/mindspore/train.py
"""


def test_script_named_for_mindspore_running_pytorch_keeps_severity(tmp_path: Path):
    found = _tree(tmp_path, {"scripts/convert_mindspore_to_megatron.sh": CONVERT_SCRIPT,
                             "codegeex/megatron/mindspore_to_megatron.py": MEGATRON_CONVERTER,
                             "codegeex/mindspore/train.py": MINDSPORE_TRAIN,
                             "scripts/train_mindspore.sh": MINDSPORE_SCRIPT})
    assert _in(found, "convert_mindspore_to_megatron.sh")[6].get("NPU004") == "warning"
    assert _in(found, "train_mindspore.sh")[1].get("NPU004") == "info"      # runs MindSpore: another framework


# -- flag-to-dtype conversions (open_clip's create_model, timm's PrefetchLoader and resolve_precision, Megatron) -----

OPEN_CLIP_FACTORY = """\
import torch


def create_model(model, precision="fp32", device="cpu"):
    if precision in ("fp16", "bf16"):
        dtype = torch.float16 if 'fp16' in precision else torch.bfloat16
        model.to(device=device, dtype=dtype)
    elif precision in ("pure_fp16", "pure_bf16"):
        dtype = torch.float16 if 'fp16' in precision else torch.bfloat16
        model.to(device=device, dtype=dtype)
    return model


def get_input_dtype(precision: str):
    input_dtype = None
    if precision in ('bf16', 'pure_bf16'):
        input_dtype = torch.bfloat16
    elif precision in ('fp16', 'pure_fp16'):
        input_dtype = torch.float16
    return input_dtype


def resolve_precision(precision: str):
    amp_dtype = None
    if precision == 'amp':
        amp_dtype = torch.float16
    elif precision == 'amp_bfloat16':
        amp_dtype = torch.bfloat16
    return amp_dtype


class PrefetchLoader:
    def __init__(self, loader, img_dtype=torch.float32, fp16=False):
        if fp16:
            img_dtype = torch.float16
        self.img_dtype = img_dtype


def activations_buffer(args):
    dtype = torch.half
    if not args.fp16:
        dtype = torch.float
    return dtype
"""

# controls: a cast under a flag, a choice the code makes itself, an arm no name picks
CONTROLS = """\
import torch


def prepare(model, args, x):
    if args.fp16:
        model.half()
    dtype = torch.float16 if x.is_cuda else torch.float32
    buffer = torch.bfloat16
    if not args.verbose:
        buffer = torch.float
    return model, dtype, buffer
"""


def test_flag_to_dtype_conversions_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"open_clip/factory.py": OPEN_CLIP_FACTORY}), "factory.py")
    dtype_codes = {"NPU201", "NPU202"}
    for line in (6, 9, 17, 19, 28, 35, 40):
        assert not dtype_codes & set(found.get(line, {})), (line, found.get(line))
    assert dtype_codes & set(found.get(26, {}))       # 'amp' names no dtype: timm's own choice of float16


def test_flag_casts_and_own_choices_kept(tmp_path: Path):
    found = _in(_tree(tmp_path, {"train/prepare.py": CONTROLS}), "prepare.py")
    assert "NPU202" in found.get(6, {})               # model.half() under --fp16: the line a port changes
    assert "NPU202" in found.get(7, {})               # chosen by the device, not by a name
    assert "NPU201" in found.get(8, {})               # reset by a flag that names no dtype


# -- a copied checkout's top-level programs run only when the tree launches them (VisRAG's timm_modified/train.py) ---

COPY_TRAIN = """\
import torch
from dinov2.distributed import enable


def main():
    enable()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
"""

COPY_LAUNCHER = "torchrun --nproc_per_node=8 train.py \"$@\"\n"


def test_a_checkouts_own_program_nothing_launches_is_info(tmp_path: Path):
    from tests.test_tq42 import DINO, _hub_tree, _line

    files = {**_hub_tree(), DINO + "train.py": COPY_TRAIN, DINO + "distributed_train.sh": COPY_LAUNCHER}
    found = _tree(tmp_path, files)
    assert _in(found, DINO + "train.py")[_line(COPY_TRAIN, "synchronize")]["NPU002"] == "info"


def test_a_checkouts_program_the_tree_launches_keeps_its_severity(tmp_path: Path):
    from tests.test_tq42 import DINO, _hub_tree, _line

    files = {**_hub_tree(), DINO + "train.py": COPY_TRAIN,
             "scripts/pretrain.sh": f"python {DINO}train.py --config configs/vitb.yaml\n"}
    found = _tree(tmp_path, files)
    assert _in(found, DINO + "train.py")[_line(COPY_TRAIN, "synchronize")]["NPU002"] != "info"


# -- names read without running what they hold: type tests, docstring decorators (SAM2, transformers' SigLIP) ------

ROPE_ATTENTION = """\
import torch
import torch.nn.functional as F


class RoPEAttention(torch.nn.Module):
    def forward(self, q, k, v):
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):
            return F.scaled_dot_product_attention(q, k, v)
"""

MEMORY_ATTENTION = """\
import torch

from .transformer import RoPEAttention


class MemoryAttention(torch.nn.Module):
    def forward(self, layers, curr, memory, num_obj_ptr_tokens):
        for layer in layers:
            kwds = {}
            if isinstance(layer.cross_attn_image, RoPEAttention):
                kwds = {"num_k_exclude_rope": num_obj_ptr_tokens}
            curr = layer(curr, memory, **kwds)
        return curr


def build(dim):
    return RoPEAttention()
"""


def test_a_type_test_is_no_use_of_the_class(tmp_path: Path):
    found = _tree(tmp_path, {"sam2/__init__.py": "", "sam2/transformer.py": ROPE_ATTENTION,
                             "sam2/memory_attention.py": MEMORY_ATTENTION})
    memory = _in(found, "memory_attention.py")
    assert "NPU321" not in memory.get(10, {}), memory
    assert "NPU321" in memory.get(17, {}), memory          # a construction is a use


# -- an nvidia-smi GPU count that becomes a launcher's process count (TokLIP's train scripts) ----------------------

TRAIN_SCRIPT = """\
if [ -z "$MASTER_ADDR" ]; then
    export MASTER_ADDR="127.0.0.1"
    CUR_GPU_NUM=$(nvidia-smi --query-gpu=gpu_name --format=csv,noheader | wc -l)
    export NPROC_PER_NODE="$CUR_GPU_NUM"
fi
torchrun --nproc_per_node=$NPROC_PER_NODE --master_addr=$MASTER_ADDR -m open_clip_train.main --lr 1e-5
"""

# control: a count only printed differs, it stops nothing
REPORT_SCRIPT = """\
GPUS=$(nvidia-smi --query-gpu=gpu_name --format=csv,noheader | wc -l)
echo "found $GPUS GPUs"
python train.py --workers 8
"""


def test_gpu_count_fed_to_torchrun_is_an_error(tmp_path: Path):
    found = _tree(tmp_path, {"src/train_toklip_256.sh": TRAIN_SCRIPT, "src/report.sh": REPORT_SCRIPT})
    assert _in(found, "train_toklip_256.sh")[3]["NPU017"] == "error"
    assert _in(found, "report.sh")[1]["NPU017"] == "warning"


# -- a process-group backend chosen with its fallback in one conditional expression (tensordict's transport bench) --

TRANSPORT_BENCH = """\
import os

import torch
import torch.distributed as dist


def setup(rank, world_size, master_ip):
    os.environ["MASTER_ADDR"] = master_ip
    backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
    print(f"[rank {rank}] Initializing process group ({backend})...", flush=True)
    dist.init_process_group(
        backend=backend,
        rank=rank,
        world_size=world_size,
    )
"""

# control: a backend set without a fallback keeps the error at its use
PLAIN_BACKEND = TRANSPORT_BENCH.replace('"cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"', '"nccl"')


def test_backend_chosen_with_fallback_is_reported_where_chosen(tmp_path: Path):
    found = _tree(tmp_path, {"benchmarks/bench_transport.py": TRANSPORT_BENCH, "benchmarks/plain.py": PLAIN_BACKEND})
    bench = _in(found, "bench_transport.py")
    assert bench[9]["NPU101"] == "warning" and "NPU101" not in bench.get(12, {}), bench
    assert _in(found, "plain.py")[12]["NPU101"] == "error"


# -- a host read assigned only for the progress line of an every-N branch (the PyTorch quickstart's train loop) ------

QUICKSTART = """\
import torch


def train(dataloader, model, loss_fn, optimizer, device):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        loss = loss_fn(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch % 100 == 0:
            loss, current = loss.item(), batch * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
        if batch % 10 == 0:
            total = loss.item()
            scheduler_step(total)
"""


def test_progress_read_every_n_batches_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"tutorials/quickstart.py": QUICKSTART}), "quickstart.py")
    assert "NPU703" not in found.get(14, {}), found
    assert "NPU703" in found.get(17, {}), found        # read for a computation, not for the progress line


# -- autocast bound off with functools.partial (vector-quantize-pytorch's LFQ, copied in ILLUME+'s tokenizer) --------

LFQ = """\
from contextlib import nullcontext
from functools import partial

import torch
from torch.amp import autocast


class LFQ(torch.nn.Module):
    def forward(self, x, force_f32=True):
        quantization_context = partial(autocast, 'cuda', enabled=False) if force_f32 else nullcontext
        with quantization_context():
            return x.float()


mixed = partial(autocast, 'cuda', dtype=torch.bfloat16)
"""


def test_autocast_bound_off_has_no_precision_hint(tmp_path: Path):
    found = _in(_tree(tmp_path, {"tokenizer/lookup_free_quantization.py": LFQ}), "lookup_free_quantization.py")
    assert "NPU204" not in found.get(10, {}) and "NPU003" in found.get(10, {}), found
    assert "NPU204" not in found.get(5, {}), found       # the import: its one use above turns autocast off
    assert "NPU204" in found.get(15, {})                 # bound on: the region's dtype is worth checking


# -- a version read only for a report dict (diffusers' `diffusers-cli env`) --------------------------------------------

ENV_COMMAND = """\
import platform

from ..utils import is_xformers_available, is_torch_available


class EnvironmentCommand:
    def run(self) -> dict:
        pt_version = "not installed"
        pt_cuda_available = "NA"
        if is_torch_available():
            import torch

            pt_version = torch.__version__
            pt_cuda_available = torch.cuda.is_available()

        xformers_version = "not installed"
        if is_xformers_available():
            import xformers

            xformers_version = xformers.__version__

        info = {
            "Diffusers version": "0.32.0",
            "Platform": platform.platform(),
            "Python version": platform.python_version(),
            "PyTorch version (GPU?)": f"{pt_version} ({pt_cuda_available})",
            "Huggingface_hub version": "0.26",
            "Transformers version": "4.47",
            "Accelerate version": "1.2",
            "xFormers version": xformers_version,
            "Using GPU in script?": "<fill in>",
        }
        print(info)
        return info
"""


def test_version_shown_in_a_report_dict_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"diffusers/commands/env.py": ENV_COMMAND}), "env.py")
    assert not found.get(20), found
    assert "NPU002" in found.get(14, {})     # a CUDA call stays a finding (decision 48)


# -- Horovod's object collectives run over its CPU controller (open_clip's training distributed helpers) ------------

HOROVOD_HELPERS = """\
import torch
import horovod.torch as hvd


def broadcast_object(args, obj, src=0):
    if args.horovod:
        return hvd.broadcast_object(obj, root_rank=src)
    objects = [obj]
    torch.distributed.broadcast_object_list(objects, src=src)
    return objects[0]


def all_reduce(args, tensor):
    return hvd.allreduce(tensor)
"""


def test_horovod_object_collective_is_info(tmp_path: Path):
    found = _in(_tree(tmp_path, {"open_clip_train/distributed.py": HOROVOD_HELPERS}), "distributed.py")
    assert found[7]["NPU144"] == "info"
    assert found[14]["NPU144"] == "error"


# -- a gloo group's world size is none of HCCL's concern (tensordict's distributed tests) ---------------------------

GLOO_SERVER = """\
import os

import torch.distributed as dist


def server(queue):
    os.environ["MASTER_ADDR"] = "localhost"
    dist.init_process_group(
        "gloo",
        rank=0,
        world_size=3,
    )


def nccl_server(queue):
    dist.init_process_group("nccl", rank=0, world_size=3)
"""


def test_gloo_world_size_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"test/distributed/test_distributed.py": GLOO_SERVER}), "test_distributed.py")
    assert "NPU110" not in found.get(8, {}), found
    assert "NPU110" in found.get(16, {}), found


# -- a test for the CPU build of a CUDA-version variable (pytorch's packaging helpers) -------------------------------

PKG_HELPERS = """\
setup_pip_pytorch_version() {
  if [[ "$CUDA_VERSION" == "cpu" ]]; then
    export PYTORCH_VERSION="$(pip show torch | grep ^Version: | sed 's/Version:  *//')"
  fi
  if [[ "$CUDA_VERSION" == "cu121" ]]; then
    export WHEEL_DIR="cu121/"
  fi
}
"""


def test_cpu_build_test_quiet(tmp_path: Path):
    found = _in(_tree(tmp_path, {"packaging/pkg_helpers.bash": PKG_HELPERS}), "pkg_helpers.bash")
    assert "NPU018" not in found.get(2, {}), found
    assert found.get(5), found          # the CUDA build's branch keeps its finding


# -- the `else` arm of a test for a parameter's own default, no caller passing another value (llama-stack) -----------

CHECKPOINT = """\
import torch


def maybe_reshard_state_dict(ckpt_paths, n_kv_heads, map_location="cpu", mmap=True):
    if str(map_location) == "cpu":
        torch.set_default_tensor_type(torch.BFloat16Tensor)
    else:
        torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)
    return [torch.load(p, map_location=map_location, mmap=mmap) for p in ckpt_paths]
"""

GENERATION = """\
from .checkpoint import maybe_reshard_state_dict


def build(ckpt_paths, params):
    return maybe_reshard_state_dict(ckpt_paths, n_kv_heads=params.n_kv_heads)
"""


def test_else_of_the_defaults_own_value_unreached(tmp_path: Path):
    files = {"llama/__init__.py": "", "llama/checkpoint.py": CHECKPOINT, "llama/generation.py": GENERATION}
    found = _in(_tree(tmp_path, files), "checkpoint.py")
    assert found[8]["NPU032"] == "info", found


def test_else_of_the_defaults_own_value_reached_by_a_caller(tmp_path: Path):
    files = {"llama/__init__.py": "", "llama/checkpoint.py": CHECKPOINT,
             "llama/generation.py": GENERATION.replace("n_kv_heads=params.n_kv_heads", "params.n_kv_heads, 'cuda'")}
    found = _in(_tree(tmp_path, files), "checkpoint.py")
    assert found[8]["NPU032"] == "error", found


# control: a type test of a class built on a package that may be missing keeps its pointer (PEFT's GPU tests)
PEFT_LORA = """\
import bitsandbytes as bnb


class Linear8bitLt(bnb.nn.Linear8bitLt):
    def forward(self, x):
        return super().forward(x)
"""

PEFT_GPU_TEST = """\
from peft.lora import Linear8bitLt


def check(model):
    assert isinstance(model.q_proj, Linear8bitLt)
"""


def test_a_type_test_of_a_package_class_keeps_its_pointer(tmp_path: Path):
    found = _tree(tmp_path, {"peft/__init__.py": "", "peft/lora.py": PEFT_LORA, "tests/test_gpu.py": PEFT_GPU_TEST})
    assert "NPU417" in _in(found, "test_gpu.py").get(5, {}), _in(found, "test_gpu.py")
