"""r2b (session 36, issue 14; TUNED on test71 / test73 / test75): DeepSpeed's API used beyond the import and through
transformers' integration (NPU418, info), GPTQ through transformers / optimum (NPU443, warning), faiss's whole GPU
surface (NPU412), ONNX-TensorRT (NPU409), BMTrain in the CUDA-only package table (NPU462), an autocast switch whose
function opens a CUDA and a CPU autocast (NPU215 kept), and an attention-implementation default in a dataclass field
nothing reads (NPU386 dropped by the tree pass)."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from static_snippets import codes_by_line

ENGINE = StaticEngine(load_rules())


def _codes(src: bytes, path: str = "main.py") -> dict[int, set[str]]:
    return codes_by_line(ENGINE, src, path)


def _count(src: bytes, code: str, path: str = "main.py") -> dict[int, int]:
    found: dict[int, int] = {}
    for f in ENGINE.analyze_bytes(src, path).findings:
        if f.code == code:
            found[f.line] = found.get(f.line, 0) + 1
    return found


# EAGLE's traineagle3/main.py shape: DeepSpeed's comm API and engine spelled through the module
EAGLE = b"""import deepspeed
import torch


def train(args, model_engine, acc_i, loss_i, epoch):
    global_rank = deepspeed.comm.get_rank()
    rank = deepspeed.comm.get_local_rank()
    world_size = deepspeed.comm.get_world_size()
    deepspeed.comm.all_reduce(acc_i, op=deepspeed.comm.ReduceOp.AVG)
    deepspeed.comm.all_reduce(loss_i, op=deepspeed.comm.ReduceOp.AVG)
    # deepspeed.comm.barrier() is not needed here
    print("saving with deepspeed.DeepSpeedEngine.save_checkpoint")
    deepspeed.DeepSpeedEngine.save_checkpoint(model_engine, save_dir=f"{args.savedir}/state_{epoch}")
"""


def test_deepspeed_api_uses_are_one_info_finding_per_line():
    counts = _count(EAGLE, "NPU418")
    assert counts.get(1) == 1                                   # the import, as before
    for line in (6, 7, 8, 13):
        assert counts.get(line) == 1, line
    # the call and its ReduceOp member: one finding on the line, not two
    assert counts.get(9) == 1 and counts.get(10) == 1
    # a comment and a message naming the API are not uses
    assert 11 not in counts and 12 not in counts
    findings = [f for f in ENGINE.analyze_bytes(EAGLE, "main.py").findings if f.code == "NPU418"]
    assert {f.severity for f in findings} == {"info"}


# mPLUG-DocOwl's llava_trainer.py and Monkey's finetune_multitask.py shapes
ZERO3 = b"""from deepspeed import zero
from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus
from deepspeed.moe.utils import split_params_into_different_moe_groups_for_optimizer
from transformers import Trainer, GPTQConfig, deepspeed


def maybe_zero_3(param):
    if hasattr(param, "ds_id"):
        with zero.GatheredParameters([param]):
            param = param.data.detach().cpu().clone()
    return param


def build(groups, training_args):
    if deepspeed.is_deepspeed_zero3_enabled():
        groups = split_params_into_different_moe_groups_for_optimizer(groups)
    if len(training_args.fsdp) > 0 or deepspeed.is_deepspeed_zero3_enabled():
        pass
    return groups
"""


def test_zero3_gathering_moe_groups_and_transformers_integration():
    codes = _codes(ZERO3, "train/llava_trainer.py")
    for line in (1, 3, 9, 15, 16, 17):
        assert "NPU418" in codes.get(line, set()), line
    assert "NPU418" in codes[4] and "NPU443" in codes[4]      # `deepspeed` and `GPTQConfig` on one import line


ACCELERATOR = b"""from deepspeed.accelerator import get_accelerator
from deepspeed.utils import logger


def device():
    logger.info("picking the device")
    name = get_accelerator().device_name()
    return get_accelerator().current_device_name()
"""


def test_deepspeed_accelerator_api_and_logger_calls_stay_quiet():
    codes = _codes(ACCELERATOR)
    assert "NPU418" not in codes.get(1, set())       # the accelerator abstraction: the port-friendly API
    for line in (6, 7, 8):
        assert "NPU418" not in codes.get(line, set()), line
    assert "NPU418" in codes[2]                      # a DeepSpeed import all the same


CONSTANTS = b"""import deepspeed
from deepspeed.checkpoint.constants import OPTIMIZER_STATE_DICT


def load(sd):
    return sd[OPTIMIZER_STATE_DICT]
"""


def test_deepspeed_constants_read_are_no_use():
    assert "NPU418" not in _codes(CONSTANTS).get(6, set())


GPTQ = b"""import transformers
from transformers import GPTQConfig


def load(model_args, lora_args, compute_dtype):
    model = transformers.AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        torch_dtype=compute_dtype,
        quantization_config=GPTQConfig(
            bits=4, disable_exllama=True
        ) if lora_args.q_lora else None,
    )
    return model
"""


def test_gptq_config_is_a_warning():
    findings = [f for f in ENGINE.analyze_bytes(GPTQ, "finetune.py").findings if f.code == "NPU443"]
    assert {f.line for f in findings} == {2, 9}
    assert {f.severity for f in findings} == {"warning"}
    assert "NPU443" not in _codes(b"quantization_config = None  # GPTQConfig(bits=4) not used\n").get(1, set())


DRHARD = b"""import faiss


def convert_index_to_gpu(index, faiss_gpu_index, useFloat16=False):
    if type(faiss_gpu_index) == list and len(faiss_gpu_index) == 1:
        faiss_gpu_index = faiss_gpu_index[0]
    if isinstance(faiss_gpu_index, int):
        res = faiss.StandardGpuResources()
        res.setTempMemory(512 * 1024 * 1024)
        co = faiss.GpuClonerOptions()
        co.useFloat16 = useFloat16
        index = faiss.index_cpu_to_gpu(res, faiss_gpu_index, index, co)
    else:
        gpu_resources = []
        for i in range(len(faiss_gpu_index)):
            res = faiss.StandardGpuResources()
            gpu_resources.append(res)
        co = faiss.GpuMultipleClonerOptions()
        vres = faiss.GpuResourcesVector()
        vdev = faiss.Int32Vector()
        for i in range(0, len(faiss_gpu_index)):
            vdev.push_back(faiss_gpu_index[i])
            vres.push_back(gpu_resources[i])
        index = faiss.index_cpu_to_gpu_multiple(vres, vdev, index, co)
    return index


def search(index, queries):
    flat = faiss.IndexFlatIP(768)
    return index.search(queries, 10)
"""


def test_faiss_gpu_surface():
    codes = _codes(DRHARD, "retrieve_utils.py")
    for line in (8, 10, 12, 16, 18, 19, 24):
        assert "NPU412" in codes.get(line, set()), line
    for line in (1, 20, 29, 30):                       # faiss itself, a CPU vector, a CPU index, a search
        assert "NPU412" not in codes.get(line, set()), line
    binary = b"import faiss\nidx = faiss.index_binary_cpu_to_gpu(res, 0, bidx)\nd, i = faiss.knn_gpu(res, xq, xb, 10)\n"
    codes = _codes(binary)
    assert "NPU412" in codes[2] and "NPU412" in codes[3]
    # the CPU build defines these as no-ops (swigfaiss.swig): no finding
    assert "NPU412" not in _codes(b"import faiss\nfaiss.gpu_sync_all_devices()\n").get(2, set())


ONNX_TRT = b"""import tensorrt as trt
from onnx_tensorrt import tensorrt_engine


def load(path):
    with open(path, "rb") as f:
        engine = trt.Runtime(trt.Logger(trt.Logger.WARNING)).deserialize_cuda_engine(f.read())
    engine = tensorrt_engine.Engine(engine)
    return engine
"""


def test_onnx_tensorrt_engine_wrapper():
    codes = _codes(ONNX_TRT, "scripts/run_demo_tensorrt.py")
    assert "NPU409" in codes[2] and "NPU409" in codes[8]
    assert "NPU409" not in _codes(b"import onnx\nmodel = onnx.load('m.onnx')\n").get(2, set())


INFLLM = b"""import os


def get_model(config, model_name):
    if model_name == "cpm":
        import bmtrain as bmt
        bmt.init_distributed(seed=233)
        from model_center.model import CPM
        model = CPM(config)
        bmt.load(model, os.path.join(config.path, "pytorch_model.pt"), strict=False)
        return model
    # bmtrain is only for the CPM model
    return None
"""


def test_bmtrain_is_a_cuda_only_package_row():
    findings = [f for f in ENGINE.analyze_bytes(INFLLM, "benchmark/pred.py").findings if f.code == "NPU462"]
    assert {f.line for f in findings} == {6, 7, 10}
    assert all("nvidia-nccl-cu11" in f.message for f in findings)
    # under `if model_name == "cpm":` the code has a path without it: the severity policy's `guarded` clause
    assert {f.severity for f in findings} == {"warning"}
    top = b"import bmtrain as bmt\n\nbmt.init_distributed(seed=1)\n"
    findings = [f for f in ENGINE.analyze_bytes(top, "train.py").findings if f.code == "NPU462"]
    assert {(f.line, f.severity) for f in findings} == {(1, "error"), (3, "error")}


# tapnet's tapnextpp votsp2026/model.py: the switch picks between a CUDA autocast and a disabled CPU one
TAPNET = b"""import torch


class Tracker:
  def track_frame(
      self,
      frame,
      autocast: bool = True,
  ):
    dtype = torch.float16 if self.device.type == "cuda" else torch.float32
    ctx = (
        torch.amp.autocast("cuda", dtype=dtype)
        if (autocast and self.device.type == "cuda")
        else torch.amp.autocast("cpu", enabled=False)
    )
    with ctx:
      return self._model(frame)


def cpu_forward(model, x):
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        return model(x)
"""


def test_autocast_switch_in_a_function_that_opens_a_cuda_and_a_cpu_autocast():
    codes = _codes(TAPNET, "tapnet/model.py")
    assert "NPU215" in codes[8]                     # `autocast: bool = True`
    assert "NPU202" in codes[10]                    # the fp16 dtype of the CUDA arm
    assert "NPU204" in codes[12]                    # the CUDA autocast region
    # a function that opens only a CPU autocast is still a host path: no precision finding
    assert not any(c.startswith("NPU2") for c in codes.get(21, set()))


DEEPSEEK_MOE = """from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    trainable: Optional[str] = field(default="q_proj,v_proj")
    model_name_or_path: Optional[str] = field(default="deepseek-ai/deepseek-moe-16b")
    attn_implementation : Optional[str] = field(default="flash_attention_2")


def train():
    parser = transformers.HfArgumentParser((ModelArguments,))
    model_args, = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    return model
"""

READ_FIELD = DEEPSEEK_MOE.replace(
    "from_pretrained(model_args.model_name_or_path)",
    "from_pretrained(model_args.model_name_or_path, attn_implementation=model_args.attn_implementation)")


def _tree_codes(tmp_path: Path, files: dict[str, str]) -> dict[tuple[str, int], set[str]]:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    run = run_static([tmp_path], jobs=1)
    found: dict[tuple[str, int], set[str]] = {}
    for r in run.results:
        for f in r.findings:
            found.setdefault((Path(r.path).name, f.line), set()).add(f.code)
    return found


def test_unread_attention_field_default_is_dropped(tmp_path):
    found = _tree_codes(tmp_path / "a", {"finetune/finetune.py": DEEPSEEK_MOE})
    assert "NPU386" not in found.get(("finetune.py", 11), set())


def test_attention_field_read_by_the_code_keeps_its_finding(tmp_path):
    found = _tree_codes(tmp_path / "b", {"finetune/finetune.py": READ_FIELD})
    assert "NPU386" in found.get(("finetune.py", 11), set())
    # read from another file of the tree
    found = _tree_codes(tmp_path / "c", {"finetune/finetune.py": DEEPSEEK_MOE,
                                         "finetune/load.py": "def load(m, a):\n    return m(a.attn_implementation)\n"})
    assert "NPU386" in found.get(("finetune.py", 11), set())
    # handed on whole
    unpacked = DEEPSEEK_MOE.replace("from_pretrained(model_args.model_name_or_path)",
                                    "from_pretrained(**dataclasses.asdict(model_args))")
    found = _tree_codes(tmp_path / "d", {"finetune/finetune.py": unpacked})
    assert "NPU386" in found.get(("finetune.py", 11), set())


# mPLUG-DocOwl's / LLaVA's maybe_zero_3: the ZeRO-3 status enum compared (lead decision 40: an enum constant)
ZERO_STATUS = b"""from deepspeed import zero
from deepspeed.runtime.zero.partition_parameters import ZeroParamStatus


def maybe_zero_3(param, ignore_status=False, name=None):
    if hasattr(param, "ds_id"):
        if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:
            if not ignore_status:
                print(name, "no ignore status")
        with zero.GatheredParameters([param]):
            param = param.data.detach().cpu().clone()
    return param
"""


def test_compared_enum_member_of_deepspeed_is_no_use():
    codes = _codes(ZERO_STATUS, "llava_trainer.py")
    assert "NPU418" not in codes.get(7, set())
    assert "NPU418" in codes[10] and "NPU418" in codes[2]


def test_tensorrt_enum_member_compared_keeps_its_finding():
    # TensorRT's rule does not take `compared_members_quiet` (test45 labels a compared TensorRT dtype)
    src = b"""import tensorrt as trt


def build(network, config, dtype):
    if dtype == trt.DataType.HALF:
        config.set_flag(trt.BuilderFlag.FP16)
"""
    codes = _codes(src, "export_trt.py")
    assert "NPU409" in codes[5] and "NPU409" in codes[6]
