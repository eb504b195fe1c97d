"""tk42 (session 42; TUNED on test98, test99, test101, test102): DeepSpeed's NPU note dropped only from the files an
NPU path of the tree covers (auditor/static/ported.py), a file holding a pasted diff's `+` / `-` marks audited as the
patch meant it (tt-pytorch), environment variables read only to be shown in a message (decision 49), IST-DASLab's
source-built optimizer kernels (NPU878). Each family with its nearest negatives."""
from __future__ import annotations

from pathlib import Path

from tests.test_tk38 import _at, _codes, _line, _tree_findings


# FasterCache (trimmed): fastercache/models/cogvideox/arguments.py uses DeepSpeed; only the vendored diffusers
# attention processors of another model (fastercache/models/vchitect/attention.py) import torch_npu
FASTERCACHE_ARGUMENTS = '''
import argparse


def get_args():
    parser = argparse.ArgumentParser()
    import deepspeed
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()
'''
VCHITECT_ATTENTION = '''
import torch
from diffusers.utils.import_utils import is_torch_npu_available

if is_torch_npu_available():
    import torch_npu


class Attention(torch.nn.Module):
    pass
'''
# align-anything-shaped (trimmed): the trainer reaches the device helper that has the NPU path
DEVICE_UTILS = '''
from transformers.utils import is_torch_npu_available


def get_current_device():
    return "npu" if is_torch_npu_available() else "cuda"
'''
TRAINER = '''
import deepspeed
from proj.utils.device_utils import get_current_device


def init_engine(model, ds_config):
    engine, *_ = deepspeed.initialize(model=model, config=ds_config)
    return engine.to(get_current_device())
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _npu418(root: Path) -> set[tuple[str, int]]:
    return {(rel, line) for rel, found in _tree_findings(root).items() for line, code, _ in found if code == "NPU418"}


def test_deepspeed_note_stays_where_only_an_unrelated_vendored_module_imports_torch_npu(tmp_path):
    _write(tmp_path, {"fastercache/__init__.py": "", "fastercache/models/__init__.py": "",
                      "fastercache/models/cogvideox/__init__.py": "",
                      "fastercache/models/cogvideox/arguments.py": FASTERCACHE_ARGUMENTS,
                      "fastercache/models/vchitect/__init__.py": "",
                      "fastercache/models/vchitect/attention.py": VCHITECT_ATTENTION})
    rel = "fastercache/models/cogvideox/arguments.py"
    assert {(rel, _line(FASTERCACHE_ARGUMENTS, "import deepspeed")),
            (rel, _line(FASTERCACHE_ARGUMENTS, "deepspeed.add_config_arguments"))} <= _npu418(tmp_path)


def test_deepspeed_note_is_dropped_where_the_file_reaches_the_npu_path(tmp_path):
    _write(tmp_path, {"proj/__init__.py": "", "proj/utils/__init__.py": "",
                      "proj/utils/device_utils.py": DEVICE_UTILS, "proj/trainers/__init__.py": "",
                      "proj/trainers/trainer.py": TRAINER})
    assert _npu418(tmp_path) == set()


def test_deepspeed_note_is_dropped_beside_an_npu_module_and_through_a_package_init(tmp_path):
    # the NPU path in the package's __init__.py: every importer of the package runs it
    _write(tmp_path, {"proj/__init__.py": "import torch_npu  # noqa: F401\n", "proj/model.py": "x = 1\n",
                      "scripts/train.py": "import deepspeed\nfrom proj.model import x\n",
                      "proj/engine.py": "import deepspeed\n"})
    assert _npu418(tmp_path) == set()
    # a script that imports nothing of the ported package keeps its note
    _write(tmp_path, {"tools/launch.py": "import deepspeed\n"})
    assert _npu418(tmp_path) == {("tools/launch.py", 1)}


# tt-pytorch sentiment/train.py (trimmed): a diff's added lines pasted with their `+` marks
TT_TRAIN = '''
import os
os.environ['CUDA_VISIBLE_DEVICES'] = '0'
import torch
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
for epoch in range(3):
    if epoch == 0:
+        print('Compression rate:', 0.5)
-        print('old line')
'''


def test_a_pasted_diff_is_audited_as_the_patch_meant_it():
    from tests.test_tk38 import ENGINE
    import textwrap

    result = ENGINE.analyze_bytes(textwrap.dedent(TT_TRAIN).encode(), "train.py")
    assert result.error is not None and "diff" in result.error.message      # still an error: Python rejects it
    codes = {(f.line, f.code) for f in result.findings}
    assert (_line(TT_TRAIN, "CUDA_VISIBLE_DEVICES"), "NPU004") in codes
    assert {c for line, c in codes if line == _line(TT_TRAIN, "device = torch.device")} >= {"NPU002", "NPU003"}
    assert not {c for line, c in codes if line >= _line(TT_TRAIN, "Compression rate")}
    # a syntax error of another kind stays unaudited
    broken = ENGINE.analyze_bytes(b"import torch\nx = torch.cuda.is_available(\n", "broken.py")
    assert broken.error is not None and not broken.findings


# ViDiT-Q t2i/tools/extract_features.py; rtdl's and the NCCL tests' messages (trimmed)
MESSAGES = '''
import os
import torch

count, total = 1, 2
print(f"CUDA: {os.environ['CUDA_VISIBLE_DEVICES']}, processed: {count}/{total}")
raise RuntimeError(f"Got {os.environ['CUDA_VISIBLE_DEVICES']}, expected to include 0. ")
os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'
devices = os.environ['CUDA_VISIBLE_DEVICES'].split(',')
'''


def test_environment_variables_shown_in_messages_are_message_lines():
    codes = _codes(MESSAGES, "extract_features.py")
    assert not [c for c in codes if c[0] == _line(MESSAGES, "print(f")]
    assert not [c for c in codes if c[0] == _line(MESSAGES, "raise RuntimeError")]
    # the code that sets the variable, or reads it for its value, stays
    assert _at(codes, _line(MESSAGES, "= '0,1'"), "NPU004")
    assert _at(codes, _line(MESSAGES, "devices = os.environ"), "NPU004")


# MicroAdam huggingface_glue_mnli/galore_adamw_ef.py (trimmed)
MICROADAM = '''
import torch
import ista_daslab_micro_adam


class GaLoreAdamWEF(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        for p in self.param_groups[0]['params']:
            st = self.state[p]
            ista_daslab_micro_adam.asymm_block_quant(p.grad, 100, st['error'], st['min_vals'], st['max_vals'], p.grad)
        # ista_daslab_micro_adam.asymm_block_quant_inv(...) is the inverse
        print("ista_daslab_micro_adam kernels loaded")
'''


def test_ista_daslab_kernels_are_source_built_cuda_libraries():
    codes = _codes(MICROADAM, "galore_adamw_ef.py")
    assert _at(codes, _line(MICROADAM, "import ista_daslab_micro_adam"), "NPU878")
    assert _at(codes, _line(MICROADAM, "ista_daslab_micro_adam.asymm_block_quant("), "NPU878")
    assert not [c for c in codes if c[0] in (_line(MICROADAM, "# ista_daslab"), _line(MICROADAM, "print("))]
    # the Python package that wraps them is not one of the compiled modules
    assert not _codes("from ista_daslab_optimizers import MicroAdam\n", "train.py")


# rtdl-revisiting-models lib/util.py (trimmed): the environment a run records beside its output
RTDL_ENVIRONMENT = '''
import os
import torch
import pynvml


def start(output_dir):
    environment = {}
    if torch.cuda.is_available():
        cvd = os.environ.get('CUDA_VISIBLE_DEVICES')
        pynvml.nvmlInit()
        environment['devices'] = {
            'CUDA_VISIBLE_DEVICES': cvd,
            'torch.version.cuda': torch.version.cuda,
            'torch.backends.cudnn.version()': torch.backends.cudnn.version(),
            'torch.cuda.nccl.version()': torch.cuda.nccl.version(),
            'driver': str(pynvml.nvmlSystemGetDriverVersion(), 'utf-8'),
        }
    child_env = {'CUDA_VISIBLE_DEVICES': cvd}
    versions = {'torch.version.cuda': torch.version.cuda}
    return environment, child_env, versions
'''


def test_a_recorded_environment_shows_values_and_keeps_its_calls():
    codes = _codes(RTDL_ENVIRONMENT, "util.py")
    for needle in ("'CUDA_VISIBLE_DEVICES': cvd,", "'torch.version.cuda': torch.version.cuda,"):
        assert not [c for c in codes if c[0] == _line(RTDL_ENVIRONMENT, needle)], needle
    assert _at(codes, _line(RTDL_ENVIRONMENT, "cvd = os.environ.get"), "NPU004")
    assert [c for c in codes if c[0] == _line(RTDL_ENVIRONMENT, "torch.backends.cudnn.version(),")]
    assert [c for c in codes if c[0] == _line(RTDL_ENVIRONMENT, "torch.cuda.nccl.version(),")]
    # one or two entries are no record: an environment handed to a child, a version pinned in a config
    assert _at(codes, _line(RTDL_ENVIRONMENT, "child_env = "), "NPU004")
    assert _at(codes, _line(RTDL_ENVIRONMENT, "versions = "), "NPU008")


# DenseCL (trimmed): configs/selfsup/moco/r50_v1_fp16.py and openselfsup's apis/train.py, hooks/optimizer_hook.py
DENSECL_CONFIG = '''
optimizer_config = dict(update_interval=1, grad_clip=None)
use_fp16 = True
'''
DENSECL_TRAIN = '''
import apex


def _dist_train(model, optimizer, cfg):
    if 'use_fp16' in cfg and cfg.use_fp16:
        model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level="O1")
    return model, optimizer
'''
DENSECL_HOOK = '''
import apex


class DistOptimizerHook:
    def __init__(self, update_interval=1, use_fp16=False):
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        if self.use_fp16:
            with apex.amp.scale_loss(runner.outputs['loss'], runner.optimizer) as scaled_loss:
                scaled_loss.backward()
'''
# a trainer whose switch goes to a library: the value is the finding there
HF_TRAIN = '''
from transformers import TrainingArguments

use_fp16 = True
args = TrainingArguments(output_dir="out", fp16=use_fp16)
'''


def test_fp16_settings_that_only_choose_the_trees_own_apex_calls_are_dropped(tmp_path):
    _write(tmp_path, {"configs/r50_v1_fp16.py": DENSECL_CONFIG, "openselfsup/apis/train.py": DENSECL_TRAIN,
                      "openselfsup/hooks/optimizer_hook.py": DENSECL_HOOK})
    found = _tree_findings(tmp_path)
    assert not [c for c in found["configs/r50_v1_fp16.py"] if c[1] == "NPU247"]
    # the Apex calls keep their findings
    assert [c for c in found["openselfsup/apis/train.py"] if c[0] == _line(DENSECL_TRAIN, "apex.amp.initialize")]
    other = tmp_path / "other"
    _write(other, {"train.py": HF_TRAIN})
    assert [c for c in _tree_findings(other)["train.py"] if c[1] == "NPU247"]


# PrefixQuant eval.py (trimmed): a model built on the meta device, then loaded by accelerate's loader
PREFIXQUANT_EVAL = '''
import torch
from accelerate import init_empty_weights, infer_auto_device_map, load_checkpoint_in_model
from transformers import AutoConfig, AutoModelForCausalLM


def load(path):
    config = AutoConfig.from_pretrained(path, trust_remote_code=True)
    with init_empty_weights():
        model = AutoModelForCausalLM.from_pretrained(path, config=config, device_map='cpu',torch_dtype=torch.float16,trust_remote_code=True)
    device_map = infer_auto_device_map(model)
    load_checkpoint_in_model(model, checkpoint=path, device_map=device_map, dtype=torch.float16)
    return model
'''
# a meta skeleton that is never given storage: only its shapes are read
META_ONLY = '''
import torch
from accelerate import init_empty_weights
from transformers import AutoModelForCausalLM


def count_params(config):
    with init_empty_weights():
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float16)
    return sum(p.numel() for p in model.parameters())
'''


def test_meta_built_models_loaded_by_accelerate_keep_their_dtype():
    codes = _codes(PREFIXQUANT_EVAL, "eval.py")
    assert _at(codes, _line(PREFIXQUANT_EVAL, "from_pretrained(path, config"), "NPU202")
    assert not [c for c in _codes(META_ONLY, "count.py") if c[1] == "NPU202"]


# MicroAdam huggingface_glue_mnli/helpers.py (trimmed)
MICROADAM_HELPERS = '''
import torch
from importlib import import_module


def import_correct_cuda_cadam():
    cc = torch.cuda.get_device_capability()
    module = import_module(f'cuda_cadam_sm{cc[0] * 10 + cc[1]}')
    return module


def import_plugin(name):
    return import_module(f'plugins.{name}_sm_utils')
'''


def test_per_architecture_cuda_extension_imports():
    codes = _codes(MICROADAM_HELPERS, "helpers.py")
    assert _at(codes, _line(MICROADAM_HELPERS, "import_module(f'cuda_cadam_sm"), "NPU368")
    assert not [c for c in codes if c[0] == _line(MICROADAM_HELPERS, "plugins.")]
