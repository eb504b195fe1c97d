"""tq37 (session 37, issue 11; TUNED on heldout40): per-backend sets a file or folder name makes with the same name
without the CUDA word (`requirements.dev_gpu.txt` beside `requirements.dev.txt`, `alias_free_cuda/` beside
`alias_free_torch/`), torch's CUDA runtime wheels in a requirements file of a tree whose Ascend install is its own
NPU requirements file, host syncs in logging branches (a logging interval's whole branch, a dict-of-losses loop in
it, a first-turn-only warning), a function's local variable named like a module-level import (FlagAI's `checkpoint =
torch.load(...)` beside DeepSpeed's `checkpoint`), and a `self.` attribute bound more than once that is no package
object (FlagAI's `self.model = bmt.BMTrainModelWrapper(self.model)` in one branch)."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import code_severity_by_line, code_severity_in_tree

ENGINE = StaticEngine(load_rules())


def _findings(src: bytes, path: str = "main.py") -> dict[int, dict[str, str]]:
    return code_severity_by_line(ENGINE, src, path)


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, int], dict[str, str]]:
    return code_severity_in_tree(tmp_path, files)


# -- per-backend sets named by dropping the CUDA word -------------------------------------------------------------

FREEZE = "aiohttp==3.9.5\nnvidia-cuda-runtime-cu12==12.1.105\nnvidia-curand-cu12==10.3.2.106\ntorch==2.3.1\n"


def test_gpu_requirements_beside_the_same_file_without_the_word_is_the_cuda_member(tmp_path):
    found = _tree(tmp_path / "a", {"requirements.dev_gpu.txt": FREEZE, "requirements.dev.txt": "aiohttp==3.9.5\n"})
    gpu = {line: codes for (path, line), codes in found.items() if path.endswith("requirements.dev_gpu.txt")}
    assert gpu[2] == {"NPU440": "info"} and gpu[3] == {"NPU440": "info"}


def test_gpu_requirements_alone_keep_their_error(tmp_path):
    # no sibling that drops the word (`requirements.txt` is another file's name here: `requirements.dev_gpu.txt`)
    found = _tree(tmp_path / "b", {"requirements.dev_gpu.txt": FREEZE, "requirements.txt": "aiohttp==3.9.5\n"})
    gpu = {line: codes for (path, line), codes in found.items() if path.endswith("requirements.dev_gpu.txt")}
    assert gpu[2] == {"NPU440": "error"}


BIGVGAN_LOAD = """import os
from torch.utils import cpp_extension


def load():
    cc_flag = []
    cc_flag.append("-gencode")
    cc_flag.append("arch=compute_80,code=sm_80")
    return cpp_extension.load(name="anti_alias_activation_cuda", sources=["anti_alias_activation.cpp"],
                              extra_cuda_cflags=["-O3", "--use_fast_math"] + cc_flag)
"""


def test_cuda_folder_beside_its_torch_twin_is_a_per_backend_member(tmp_path):
    found = _tree(tmp_path / "c", {"bigvgan/alias_free_cuda/load.py": BIGVGAN_LOAD,
                                   "bigvgan/alias_free_torch/act.py": "import torch\n"})
    load = {line: codes for (path, line), codes in found.items() if path.endswith("load.py")}
    assert load and all(set(codes.values()) == {"info"} for codes in load.values())


def test_cuda_folder_beside_an_unrelated_folder_keeps_its_errors(tmp_path):
    found = _tree(tmp_path / "d", {"bigvgan/alias_free_cuda/load.py": BIGVGAN_LOAD,
                                   "bigvgan/resample_torch/act.py": "import torch\n"})
    load = {line: codes for (path, line), codes in found.items() if path.endswith("load.py")}
    assert "error" in {s for codes in load.values() for s in codes.values()}


# -- torch's CUDA runtime wheels where the project's Ascend install is its own requirements file -----------------

RAW_FREEZE = "accelerate==1.12.0\nflash-attn==2.8.3\nnvidia-cudnn-cu12==9.10.2.21\nnvidia-nccl-cu12==2.27.3\n" \
             "nvidia-nvshmem-cu12==3.3.20\n"


def test_torch_cuda_wheels_under_an_npu_requirements_file_are_info(tmp_path):
    found = _tree(tmp_path / "e", {"requirements_npu.txt": "torch==2.6.0\ntorch_npu==2.6.0\n",
                                   "tools/requirements_raw.txt": RAW_FREEZE})
    raw = {line: codes for (path, line), codes in found.items() if path.endswith("requirements_raw.txt")}
    assert raw[3] == {"NPU440": "info"} and raw[4] == {"NPU440": "info"} and raw[5] == {"NPU440": "info"}
    assert raw[2]["NPU361"] == "error"           # flash-attn is no runtime wheel of torch: kept


def test_torch_cuda_wheels_without_an_npu_install_keep_their_error(tmp_path):
    found = _tree(tmp_path / "f", {"requirements.txt": "torch==2.6.0\n", "tools/requirements_raw.txt": RAW_FREEZE})
    raw = {line: codes for (path, line), codes in found.items() if path.endswith("requirements_raw.txt")}
    assert raw[3] == {"NPU440": "error"}


def test_npu_requirements_in_a_sibling_folder_do_not_cover_another_folder(tmp_path):
    found = _tree(tmp_path / "g", {"npu/requirements_npu.txt": "torch_npu==2.6.0\n",
                                   "tools/requirements_raw.txt": RAW_FREEZE})
    raw = {line: codes for (path, line), codes in found.items() if path.endswith("requirements_raw.txt")}
    assert raw[3] == {"NPU440": "error"}


# -- host syncs in logging branches -------------------------------------------------------------------------------

TRAINER = b"""import logging
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def train(model, loader, optimizer, training_args, device):
    for curr_step, batch in enumerate(loader):
        loss_dict = model(batch.to(device))
        loss = sum(loss_dict.values())
        loss.backward()
        optimizer.step()
        if curr_step % training_args.log_every == 0:
            message = f"(step={curr_step:07d}) "
            for key, value in loss_dict.items():
                avg_loss = torch.tensor(value.item(), device=device)
                dist.all_reduce(avg_loss, op=dist.ReduceOp.SUM)
                message += f"Train Loss {key}: {avg_loss.item():.4f}, "
            total_norm = loss.detach().item()
            logger.info(message + str(total_norm))
        if curr_step % training_args.update_interval == 0:
            total = loss.item()
            for key, value in loss_dict.items():
                total += value.item()
        running = loss.item()
"""


def test_syncs_in_a_logging_interval_branch_are_throttled():
    found = {line for line, codes in _findings(TRAINER, "train.py").items() if "NPU703" in codes}
    assert not found & {17, 19, 20}              # the logging branch, its loss-dict loop included
    assert {23, 25, 26} <= found                 # an update interval's branch and the per-step sync keep the hint


GENERATE = b"""import logging
import torch

logger = logging.getLogger(__name__)


def generate(model, inputs_ids, max_new_token, eos_token):
    finish = torch.zeros(inputs_ids.shape[0], device=inputs_ids.device).bool()
    for i in range(max_new_token):
        logits = model(inputs_ids)
        idx_next = torch.multinomial(torch.softmax(logits, -1), 1)
        finish.logical_or_(idx_next.eq(eos_token).any(1))
        if i == 0 and finish.any():
            logger.warning(
                "unexpected end at index %s",
                str([unexpected_idx.item() for unexpected_idx in finish.nonzero()]),
            )
        for j in range(4):
            if i == 0:
                logger.info("inner %s", idx_next[j].item())
        if finish.all():
            logger.info("all done at %s", finish.sum().item())
    return inputs_ids
"""


def test_a_first_turn_warning_is_no_sync_per_turn():
    found = {line for line, codes in _findings(GENERATE, "gpt.py").items() if "NPU703" in codes}
    assert 16 not in found                       # `if i == 0 and ...`: the first turn only
    assert 20 in found                           # inside an inner loop: each of its turns
    assert 22 in found                           # another condition: any turn


# -- a function's local variable named like a module-level import ------------------------------------------------

FLAGAI = b"""import os
import torch

if os.getenv('ENV_TYPE') == 'deepspeed':
    from deepspeed.runtime.activation_checkpointing.checkpointing import checkpoint
else:
    from torch.utils.checkpoint import checkpoint


class GPT2Model(torch.nn.Module):

    def forward(self, hidden_states, layer):
        if self.checkpoint_activations:
            return checkpoint(layer, hidden_states)
        return layer(hidden_states)

    def load_weights(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location=torch.device('cpu'))
        if "module" in checkpoint:
            checkpoint = checkpoint["module"]
        checkpoint = self.transpose_weight(checkpoint)
        self.load_state_dict(checkpoint.copy(), strict=False)
        return checkpoint

    def load_global(self, path):
        global checkpoint
        checkpoint = torch.load(path)
        return checkpoint(self, path)

    def load_again(self, path):
        from deepspeed.runtime.activation_checkpointing.checkpointing import checkpoint
        state = torch.load(path)
        checkpoint = state
        return checkpoint(self, path)
"""


def test_local_variable_is_not_the_imported_module():
    found = {line for line, codes in _findings(FLAGAI, "gpt2_model.py").items() if "NPU418" in codes}
    assert {5, 14} <= found                      # the import and the activation-checkpointing call
    assert not found & {19, 20, 21, 22, 23}      # `checkpoint = torch.load(...)`: the function's own local
    assert 28 in found                           # `global checkpoint`: the module's name
    assert 31 in found                           # an import inside the function rebinds the module


# -- a `self.` attribute bound more than once ---------------------------------------------------------------------

TRAINER_V1 = b"""import torch
import bmtrain as bmt
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:

    def __init__(self, env_type, local_rank):
        self.env_type = env_type
        self.local_rank = local_rank
        self.wrapper = bmt.BMTrainModelWrapper(None)

    def prepare(self, model):
        self.model = model
        if self.env_type == 'pytorchDDP':
            self.model.to(torch.device('cuda', self.local_rank))
            self.model = DDP(self.model, device_ids=[self.local_rank])
        elif self.env_type == 'bmtrain':
            self.model = bmt.BMTrainModelWrapper(self.model)
        else:
            self.model.cuda(torch.device('cuda', self.local_rank))
        self.model.train()
        self.wrapper.train()
"""


def test_self_attribute_bound_more_than_once_is_no_package_object():
    found = _findings(TRAINER_V1, "trainer_v1.py")
    assert "NPU462" in found[19]                 # the wrapper itself
    assert "NPU462" not in found.get(21, {}) and "NPU001" in found[21]     # `.cuda(...)` of the plain model
    assert "NPU462" not in found.get(22, {})
    assert "NPU462" in found[23]                 # bound once: BMTrain's object wherever it is used


# -- a notebook whose metadata pins it to a Colab GPU runtime (decision 8) ---------------------------------------

def _notebook(metadata: dict) -> str:
    import json

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["!git clone https://github.com/lenML/ChatTTS-Forge\n", "%cd ChatTTS-Forge\n",
                       "!pip3 install torch torchvision torchaudio --extra-index-url "
                       "https://download.pytorch.org/whl/cu113\n"]}
    return json.dumps({"cells": [cell], "metadata": metadata, "nbformat": 4, "nbformat_minor": 0})


def test_colab_gpu_runtime_metadata_is_a_colab_tie(tmp_path):
    meta = {"accelerator": "GPU", "colab": {"gpuType": "T4", "provenance": []},
            "kernelspec": {"display_name": "Python 3", "name": "python3"}}
    found = _tree(tmp_path / "h", {"colab.en.ipynb": _notebook(meta)})
    assert found[("colab.en.ipynb", 3)]["NPU018"] == "info"


def test_notebook_without_colab_metadata_keeps_its_error(tmp_path):
    meta = {"kernelspec": {"display_name": "Python 3", "name": "python3"}}
    found = _tree(tmp_path / "i", {"setup.ipynb": _notebook(meta)})
    assert found[("setup.ipynb", 3)]["NPU018"] == "error"


def test_colab_metadata_without_a_gpu_runtime_is_no_tie(tmp_path):
    meta = {"colab": {"provenance": []}}      # saved in Colab, no GPU runtime chosen
    found = _tree(tmp_path / "j", {"cpu.ipynb": _notebook(meta)})
    assert found[("cpu.ipynb", 3)]["NPU018"] == "error"


# -- a tensor's strides and sizes are host ints -------------------------------------------------------------------

CORRELATION = b"""import re
import torch


def kernel(strKernel, objVariables):
    while True:
        objMatch = re.search(r"(VALUE_)([0-4])(\\()([^\\)]+)(\\))", strKernel)
        if objMatch is None:
            break
        intArgs = int(objMatch.group(2))
        strArgs = objMatch.group(4).split(",")
        intStrides = objVariables[strArgs[0]].stride()
        strIndex = [
            "((" + strArgs[intArg + 1].strip() + ")*"
            + str(intStrides[intArg] if not torch.is_tensor(intStrides[intArg]) else intStrides[intArg].item())
            + ")"
            for intArg in range(intArgs)
        ]
        values = objVariables[strArgs[0]].sum(0)
        strKernel = strKernel.replace(objMatch.group(0), str(values[0].item()) + "".join(strIndex))
    return strKernel
"""


def test_item_on_strides_is_no_device_sync():
    found = {line for line, codes in _findings(CORRELATION, "correlation.py").items() if "NPU703" in codes}
    assert 15 not in found                       # `intStrides = t.stride()`: Python ints
    # a reduction of a parameter's tensor: nothing in `kernel` shows a device origin, no hint since hq39
    # (device_values.py); the same reduction of a tensor the function moves keeps it
    assert 20 not in found
    moved = CORRELATION.replace(b"values = objVariables[strArgs[0]].sum(0)", b"values = objVariables[strArgs[0]].cuda().sum(0)")
    assert "NPU703" in _findings(moved, "correlation.py").get(20, {})


# -- autocast imported only to turn it off ------------------------------------------------------------------------

LOSSES = b"""import torch
from torch.cuda.amp import autocast


def loss_fn(a, b):
    with autocast(enabled=False):
        return torch.nn.functional.l1_loss(a.float(), b.float())
"""

AMP_FLAG = b"""import torch
from torch.cuda.amp import autocast


def loss_fn(a, b, half):
    with autocast(enabled=False):
        loss = torch.nn.functional.l1_loss(a.float(), b.float())
    with autocast(enabled=half):
        return loss + torch.nn.functional.mse_loss(a, b)
"""


def test_autocast_imported_only_to_turn_it_off_is_no_region():
    found = _findings(LOSSES, "train.py")
    assert "NPU204" not in found[2] and "NPU012" in found[2]     # the CUDA spelling stays NPU012's


def test_autocast_imported_and_enabled_by_a_flag_keeps_its_hint():
    found = _findings(AMP_FLAG, "train.py")
    assert "NPU204" in found[8]


# -- a dtype copied into a flag -----------------------------------------------------------------------------------

VIDEOALIGN = b"""import torch
from trainer import TrainingConfig


def load(dtype, args):
    training_args = TrainingConfig(
        fp16=True if dtype == torch.float16 else False,
        output_dir="",
    )
    fixed = TrainingConfig(fp16=True)
    return training_args, fixed
"""


def test_dtype_copied_into_a_flag_is_no_choice():
    found = _findings(VIDEOALIGN, "inference.py")
    assert "NPU247" not in found.get(7, {})
    assert "NPU247" in found[10]


# -- a DataParallel type test beside a DistributedDataParallel one ------------------------------------------------

CHECKPOINT = b"""import torch


def load_pretrained_model(model, state):
    if isinstance(model, torch.nn.DataParallel):
        model.module.load_state_dict(state)
    elif isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model.module.load_state_dict(state)
    else:
        model.load_state_dict(state)


def unwrap(model):
    if isinstance(model, torch.nn.DataParallel):
        return model.module
    return model


def wrap(model):
    return torch.nn.DataParallel(model)
"""


def test_dataparallel_test_beside_a_ddp_test_is_dropped_where_nothing_wraps(tmp_path):
    loader = CHECKPOINT.decode().split("\n\n\ndef wrap")[0] + "\n"
    found = _tree(tmp_path / "k", {"wesep/utils/checkpoint.py": loader})
    lines = {line: codes for (path, line), codes in found.items() if path.endswith("checkpoint.py")}
    assert "NPU112" not in lines.get(5, {})
    assert lines[14]["NPU112"] == "info"         # a lone type test: info, as before


def test_dataparallel_test_beside_a_ddp_test_stays_info_where_the_tree_wraps(tmp_path):
    found = _tree(tmp_path / "l", {"wesep/utils/checkpoint.py": CHECKPOINT.decode()})
    lines = {line: codes for (path, line), codes in found.items() if path.endswith("checkpoint.py")}
    assert lines[5]["NPU112"] == "info"
    assert lines[20]["NPU112"] == "error"        # the wrap


# -- a branch that only reports an anomaly ------------------------------------------------------------------------

EXPERIENCE = b"""import logging
import torch

logger = logging.getLogger(__name__)


def make_experiences(samples_list, model):
    experiences = []
    for samples in samples_list:
        ratio = model(samples)
        if ratio is not None and torch.any(ratio < 0.9):
            logger.warning(
                "KD teacher coverage is low in this batch: min_teacher_cov_ratio=%.4f",
                ratio.min().item(),
            )
        if torch.any(ratio > 0.5):
            logger.info("high ratio %.4f", ratio.max().item())
        if torch.any(ratio > 0.99):
            logger.warning("saturated %.4f", ratio.max().item())
            experiences.append(ratio.sum().item())
        experiences.append(ratio)
    return experiences
"""


def test_a_warning_only_branch_is_no_sync_per_turn():
    found = {line for line, codes in _findings(EXPERIENCE, "experience_maker.py").items() if "NPU703" in codes}
    assert 14 not in found                       # only reports the anomaly its test found
    assert 17 in found                           # an info report: may run on every turn
    assert {19, 20} <= found                     # the branch does more than report


KOBOLD = b"""import torch

try:
    from exllamav2.generator import ExLlamaV2StreamingGenerator
except ImportError:
    load_failed = True


class model_backend:

    def __init__(self):
        self.generator = None

    def load(self, model, cache, tokenizer):
        self.generator = ExLlamaV2StreamingGenerator(model, cache, tokenizer)

    def unload(self):
        self.generator = None

    def generate(self, gen_in):
        self.generator._gen_begin_reuse(gen_in, None)
"""


def test_self_attribute_set_to_none_besides_one_object_stays_that_object():
    found = _findings(KOBOLD, "class.py")
    assert "NPU416" in found[21]                 # `self.generator = None` before load / after unload: no other value
