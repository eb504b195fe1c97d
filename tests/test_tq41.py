"""tq41 (session 41, issue 11; TUNED on heldout44): "cuda" defaults of device options and parameters the code itself
sends to the CPU without CUDA (a script, a notebook's later cell), vendored helpers of an application with an empty
root `__init__.py` that nothing it runs reaches (the scripts of a vendored extension's build folder stay reached),
CUDA checks that only store a speed setting (`params["pin_memory"] = torch.cuda.is_available()`) or stage a
checkpoint (`torch.device(... if torch.cuda.is_available() ...)` as `map_location`, Lightning metadata read), and the
per-backend readings of Compose files spelled `.yml` / `.yaml` and of Dockerfile stages that build a CUDA member."""
from __future__ import annotations

import json
from pathlib import Path

from tests.test_tq38 import _findings, _in, _tree

# -- "cuda" defaults the script sends to the CPU itself ---------------------------------------------------------------

INFER = b'''import argparse

import torch


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/prompts/infer.yaml")
    parser.add_argument("--device", type=str, default="cuda")
    return parser.parse_args()


def main():
    args = parse_args()
    device = args.device
    if device.__contains__("cuda") and not torch.cuda.is_available():
        device = "cpu"
    model = torch.nn.Linear(4, 4).to(device)
    return model
'''

INFER_TERNARY = b'''import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda:0")
args = parser.parse_args()
args.device = args.device if torch.cuda.is_available() else "cpu"
model = torch.nn.Linear(4, 4).to(args.device)
'''

INFER_NO_FALLBACK = b'''import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
device = args.device
if args.cpu:
    device = "cpu"
model = torch.nn.Linear(4, 4).to(device)
'''

PARAMETER = b'''import torch


def load_model(path: str, device: str = "cuda"):
    if not torch.cuda.is_available():
        device = "cpu"
    return torch.load(path).to(device)


def load_other(path: str, device: str = "cuda"):
    return torch.load(path).to(device)
'''


def _line(src: bytes, needle: bytes) -> int:
    return src[:src.index(needle)].count(b"\n") + 1


def test_option_default_with_a_cpu_fallback_is_a_warning():
    found = _findings(INFER, "infer_acc.py")
    assert found[_line(INFER, b'default="cuda"')]["NPU003"] == "warning"
    found = _findings(INFER_TERNARY, "infer.py")
    assert found[_line(INFER_TERNARY, b'default="cuda:0"')]["NPU003"] == "warning"


def test_option_default_without_a_cuda_probe_keeps_its_error():
    found = _findings(INFER_NO_FALLBACK, "infer.py")
    assert found[_line(INFER_NO_FALLBACK, b'default="cuda"')]["NPU003"] == "error"


def test_parameter_default_with_a_cpu_fallback_is_a_warning():
    found = _findings(PARAMETER, "loader.py")
    first = PARAMETER.index(b'device: str = "cuda"')
    second = PARAMETER.index(b'device: str = "cuda"', first + 1)
    assert found[PARAMETER[:first].count(b"\n") + 1]["NPU003"] == "warning"
    assert found[PARAMETER[:second].count(b"\n") + 1]["NPU003"] == "error"


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_notebook_option_default_with_a_fallback_in_a_later_cell(tmp_path: Path):
    parse = ('import argparse\nimport torch\nparser = argparse.ArgumentParser()\n'
             'parser.add_argument("--device", type=str, default="cuda")\nargs, _ = parser.parse_known_args()\n')
    use = ('device = args.device\nif device.__contains__("cuda") and not torch.cuda.is_available():\n'
           '    device = "cpu"\nmodel = torch.nn.Linear(4, 4).to(device)\n')
    found = _in(_tree(tmp_path, {"demo.ipynb": _notebook(parse, use)}), "demo.ipynb")
    assert found[4]["NPU003"] == "warning"
    plain = _in(_tree(tmp_path / "plain", {"demo.ipynb": _notebook(parse, "model = torch.nn.Linear(4, 4)\n")}),
                "demo.ipynb")
    assert plain[4]["NPU003"] != "warning"


# -- an application's vendored helpers nothing it runs reaches ---------------------------------------------------------

APP = '''import gradio as gr

from src.pipeline import Pipeline


def main():
    pipe = Pipeline()
    gr.Interface(fn=pipe.run, inputs="image", outputs="image").launch()


if __name__ == "__main__":
    main()
'''
PIPELINE = '''import sys

sys.path.append("src/dependencies/XPose")
from util.misc import NestedTensor


class Pipeline:
    def run(self, image):
        return NestedTensor(image, None)
'''
MISC = '''import pickle

import torch
import torch.distributed as dist


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask


def all_gather(data):
    buffer = pickle.dumps(data)
    storage = torch.ByteStorage.from_buffer(buffer)
    tensor = torch.ByteTensor(storage).to("cuda")
    out = [torch.empty((1,), dtype=torch.uint8, device="cuda") for _ in range(dist.get_world_size())]
    dist.all_gather(out, tensor)
    return out


def init_distributed_mode(args):
    args.dist_backend = 'nccl'
    dist.init_process_group(backend=args.dist_backend)
'''
OPS_TEST = '''import torch

value = torch.rand(1, 2, 3).cuda()
print(value.sum())
'''
OPS_SETUP = '''from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="MultiScaleDeformableAttention",
      ext_modules=[CUDAExtension("MultiScaleDeformableAttention", ["src/vision.cpp", "src/cuda/ms_deform_attn_cuda.cu"])],
      cmdclass={"build_ext": BuildExtension})
'''


def _app_tree(root_init: str) -> dict[str, str]:
    return {"__init__.py": root_init, "app.py": APP, "src/__init__.py": "", "src/pipeline.py": PIPELINE,
            "src/dependencies/XPose/util/misc.py": MISC,
            "src/dependencies/XPose/ops/setup.py": OPS_SETUP, "src/dependencies/XPose/ops/test.py": OPS_TEST}


def test_uncalled_vendored_helpers_of_an_app_with_an_empty_root_init(tmp_path: Path):
    found = _tree(tmp_path, _app_tree(""))
    misc = _in(found, "util/misc.py")
    assert misc[_line(MISC.encode(), b'.to("cuda")')]["NPU003"] == "info"
    assert misc[_line(MISC.encode(), b"'nccl'")]["NPU101"] == "info"
    # the build folder's own test script is run by hand: its `.cuda()` keeps its error
    assert _in(found, "ops/test.py")[3]["NPU001"] == "error"


def test_root_init_with_code_keeps_the_tree_a_package(tmp_path: Path):
    found = _tree(tmp_path, _app_tree("from .src.pipeline import Pipeline\n"))
    assert _in(found, "util/misc.py")[_line(MISC.encode(), b'.to("cuda")')]["NPU003"] == "error"


# -- CUDA checks that only store a speed setting or stage a checkpoint -------------------------------------------------

DATA_CONFIG = b'''from pydantic import BaseModel, field_validator


class DataConfig(BaseModel):
    dataloader_params: dict = {}

    @field_validator("dataloader_params")
    @classmethod
    def set_default_pin_memory(cls, dataloader_params: dict) -> dict:
        if "pin_memory" not in dataloader_params:
            import torch

            dataloader_params["pin_memory"] = torch.cuda.is_available()
        return dataloader_params


def loader_kwargs():
    import torch

    return {"num_workers": 4, "pin_memory": torch.cuda.is_available()}


def device_kwargs():
    import torch

    params = {}
    params["device"] = torch.cuda.is_available()
    return params
'''


def test_speed_settings_stored_from_a_cuda_check_are_warnings():
    found = _findings(DATA_CONFIG, "careamics/config/data_config.py")
    assert found[_line(DATA_CONFIG, b'dataloader_params["pin_memory"] =')]["NPU002"] == "warning"
    assert found[_line(DATA_CONFIG, b'"pin_memory": torch.cuda')]["NPU002"] == "warning"
    assert found[_line(DATA_CONFIG, b'params["device"] =')]["NPU002"] == "error"


MODEL_IO = b'''from pathlib import Path

import torch


def load_pretrained(path: Path):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    checkpoint: dict = torch.load(path, map_location=device)
    try:
        cfg_dict = checkpoint["hyper_parameters"]
    except KeyError as e:
        raise ValueError(f"no hyper_parameters in {checkpoint.keys()}") from e
    model = build(cfg_dict)
    model.load_state_dict(checkpoint)
    return model


def load_module(path: Path):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    module = torch.load(path, map_location=device)
    return module(torch.ones(1, device=device))
'''


def test_checkpoint_staged_through_torch_device_is_a_warning():
    found = _findings(MODEL_IO, "model_io_utils.py")
    first = MODEL_IO.index(b"torch.cuda.is_available()")
    second = MODEL_IO.index(b"torch.cuda.is_available()", first + 1)
    assert found[MODEL_IO[:first].count(b"\n") + 1]["NPU002"] == "warning"
    assert found[MODEL_IO[:second].count(b"\n") + 1]["NPU002"] == "error"


# -- per-backend Compose files and Dockerfile stages ------------------------------------------------

COMPOSE_CUDA = '''services:
  studio:
    image: studio:cuda
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
'''
COMPOSE = '''services:
  studio:
    image: studio:cpu
'''
DOCKERFILE = '''FROM python:3.13-slim AS studio-base
RUN pip install uv

FROM studio-base AS studio-cpu
RUN uv sync --extra cpu

FROM studio-base AS studio-cuda-base
RUN apt-get update && apt-get install -y --no-install-recommends libcublas-13-1 libcurand-13-1

FROM studio-base AS studio-cuda
COPY --from=studio-cuda-base /usr/local/cuda /usr/local/cuda
RUN uv sync --extra cu126

FROM studio-base AS studio-xpu
RUN uv sync --extra xpu
'''
CUDA_ONLY_DOCKERFILE = '''FROM python:3.13-slim AS app-base
RUN pip install uv

FROM app-base AS app-cuda-base
RUN apt-get update && apt-get install -y --no-install-recommends libcublas-13-1 libcurand-13-1
'''


def test_compose_cuda_yaml_beside_compose_yml_is_a_per_backend_member(tmp_path: Path):
    found = _tree(tmp_path, {"docker/docker-compose.cuda.yaml": COMPOSE_CUDA, "docker/docker-compose.yml": COMPOSE})
    assert set(_in(found, "docker-compose.cuda.yaml")[8].values()) == {"info"}
    alone = _tree(tmp_path / "alone", {"docker/docker-compose.cuda.yaml": COMPOSE_CUDA})
    assert set(_in(alone, "docker-compose.cuda.yaml")[8].values()) != {"info"}


def test_stages_building_a_cuda_member_are_per_backend(tmp_path: Path):
    found = _in(_tree(tmp_path, {"Dockerfile": DOCKERFILE}), "Dockerfile")
    assert set(found[8].values()) == {"info"}
    alone = _in(_tree(tmp_path / "alone", {"Dockerfile": CUDA_ONLY_DOCKERFILE}), "Dockerfile")
    assert set(alone[5].values()) != {"info"}


# -- host values rebound just above the host-sync hint ----------------------------------------------------------------

SAMPLER = b'''import torch


def sample(model_gpu, input_ids, tokenizer_gpu, prompts):
    for prompt in prompts:
        out = model_gpu.generate(input_ids.cuda())
        out.sequences = out.sequences.cpu()
        torch.cuda.empty_cache()
        seq_ids = out.sequences[:, input_ids.shape[1]:].tolist()
        scores = out.scores[0].tolist()
        print(tokenizer_gpu.batch_decode(seq_ids), scores)
'''

PROCESS_FN = b'''import torch


def process_fn(model_inputs: dict, processor, max_length=None):
    input_ids, pixel_values = [], []
    for text, image in zip(model_inputs["text"], model_inputs["images"]):
        if image is None:
            inputs = processor(text, None, return_tensors="np", max_length=max_length, truncation=True)
            input_ids.append(inputs["input_ids"].squeeze().tolist())
        else:
            inputs = processor(text=text, images=[image], return_tensors="pt").to("cuda")
            input_ids.append(inputs["input_ids"].squeeze().tolist())
            pixel_values.append(inputs["pixel_values"])
    batch = processor.tokenizer.pad({"input_ids": input_ids}, return_tensors="pt")
    inputs = {"input_ids": batch["input_ids"].cuda(), "pixel_values": pixel_values}
    return inputs
'''


def test_host_sync_hint_after_a_cpu_rebind_is_dropped():
    found = _findings(SAMPLER, "sample/llada_sample.py")
    assert "NPU703" not in found.get(_line(SAMPLER, b"seq_ids ="), {})
    assert "NPU703" in found.get(_line(SAMPLER, b"scores ="), {})


def test_host_sync_hint_on_a_numpy_processor_output_rebound_later_is_dropped():
    found = _findings(PROCESS_FN, "src/model/processor.py")
    first = PROCESS_FN.index(b'input_ids.append(inputs["input_ids"]')
    second = PROCESS_FN.index(b'input_ids.append(inputs["input_ids"]', first + 1)
    assert "NPU703" not in found.get(PROCESS_FN[:first].count(b"\n") + 1, {})
    assert "NPU703" in found.get(PROCESS_FN[:second].count(b"\n") + 1, {})


# -- collectives on a gloo group ----------------------------------------------------------------------------------------

SCATTER = b'''import torch
import torch.distributed as dist


def _get_global_gloo_group():
    return dist.new_group(backend="gloo")


def scatter_dataset(tensors, world_size, rank):
    gloo_group = dist.new_group(backend='gloo')
    local = {k: torch.empty(v.shape) for k, v in tensors.items()}
    for key in tensors:
        dist.scatter(local[key], list(torch.chunk(tensors[key], world_size)) if rank == 0 else None, src=0,
                     group=gloo_group)
    dist.gather(local["x"], None, dst=0, group=_get_global_gloo_group())
    dist.scatter(local["y"], None, src=0)
    return local
'''


def test_collectives_on_a_gloo_group_are_not_hccl_findings():
    found = _findings(SCATTER, "train/train_policy.py")
    first = SCATTER.index(b"dist.scatter(")
    second = SCATTER.index(b"dist.scatter(", first + 1)
    assert "NPU108" not in found.get(SCATTER[:first].count(b"\n") + 1, {})
    assert "NPU108" not in found.get(_line(SCATTER, b"dist.gather("), {})
    assert found[SCATTER[:second].count(b"\n") + 1]["NPU108"] == "warning"


# -- a CUDA-named helper calling itself ---------------------------------------------------------------------------------

MOVE_TO_CUDA = b'''from collections.abc import Mapping

import torch


def move_to_cuda(sample):
    def _move_to_cuda(maybe_tensor):
        if torch.is_tensor(maybe_tensor):
            return maybe_tensor.cuda(non_blocking=True)
        elif isinstance(maybe_tensor, tuple):
            return tuple([_move_to_cuda(x) for x in maybe_tensor])
        elif isinstance(maybe_tensor, Mapping):
            return {k: _move_to_cuda(v) for k, v in maybe_tensor.items()}
        return maybe_tensor

    return _move_to_cuda(sample)


def evaluate(batch):
    return move_to_cuda(batch)
'''


def test_recursive_call_of_a_cuda_helper_is_no_finding():
    found = _findings(MOVE_TO_CUDA, "adhoc/eval_mteb/mteb_utils.py")
    assert "NPU039" not in found.get(_line(MOVE_TO_CUDA, b"return tuple([_move_to_cuda"), {})
    assert "NPU039" not in found.get(_line(MOVE_TO_CUDA, b"return {k: _move_to_cuda"), {})
    assert found[_line(MOVE_TO_CUDA, b"return _move_to_cuda(sample)")]["NPU039"] == "info"
    assert found[_line(MOVE_TO_CUDA, b"return move_to_cuda(batch)")]["NPU039"] == "info"


# -- the SDPA contiguity workaround behind a device-type check ----------------------------------------------------------

SDPA = b'''import torch
import torch.nn.functional as F


class Qwen2VLSdpaAttention(torch.nn.Module):
    def forward(self, query_states, key_states, value_states, attention_mask=None):
        # SDPA with memory-efficient backend is currently (torch==2.1.2) bugged with non-contiguous inputs with
        # custom attn_mask, Reference: https://github.com/pytorch/pytorch/issues/112577.
        if query_states.device.type == "cuda" and attention_mask is not None:
            query_states = query_states.contiguous()
            key_states = key_states.contiguous()
            value_states = value_states.contiguous()
        return F.scaled_dot_product_attention(query_states, key_states, value_states, attn_mask=attention_mask)


def pick(x):
    if x.device.type == "cuda":
        x = x.contiguous()
        torch.cuda.synchronize()
    return x
'''


def test_contiguity_workaround_check_is_info():
    found = _findings(SDPA, "src/model/vlm_backbone/qwen2_vl/modeling_qwen2_vl.py")
    assert found[_line(SDPA, b'if query_states.device.type == "cuda"')]["NPU003"] == "info"
    assert found[_line(SDPA, b'if x.device.type == "cuda"')]["NPU003"] == "error"


# -- a list of device names a value is checked against ------------------------------------------------------------------

INFERENCER = b'''import torch


class TorchInferencer:
    def __init__(self, path: str, device: str = "auto") -> None:
        self.device = self._get_device(device)
        self.model = torch.load(path, map_location=self.device)

    @staticmethod
    def _get_device(device: str) -> torch.device:
        allowed_devices = ("auto", "cpu", "cuda", "xpu")
        device = device.lower()
        if device not in allowed_devices:
            msg = f"Unknown device {device}. Allowed devices are {allowed_devices}"
            raise ValueError(msg)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        return torch.device(device)


def run(x):
    targets = ("cpu", "cuda")
    return [x.to(t) for t in targets]
'''


def test_allowed_device_list_is_an_option_list():
    found = _findings(INFERENCER, "deploy/inferencers/torch_inferencer.py")
    assert found[_line(INFERENCER, b"allowed_devices = (")]["NPU003"] == "info"
    assert found[_line(INFERENCER, b'targets = ("cpu", "cuda")')]["NPU003"] != "info"


# -- CLIP's patch of a traced archive's device constants ----------------------------------------------------------------

CLIP = b'''import torch


def load(name: str, device: str = "cuda" if torch.cuda.is_available() else "cpu", jit: bool = False):
    model = torch.jit.load(name, map_location=device if jit else "cpu").eval()
    device_holder = torch.jit.trace(lambda: torch.ones([]).to(torch.device(device)), example_inputs=[])
    device_node = [n for n in device_holder.graph.findAllNodes("prim::Constant") if "Device" in repr(n)][-1]

    def patch_device(module):
        graphs = [module.graph] if hasattr(module, "graph") else []
        for graph in graphs:
            for node in graph.findAllNodes("prim::Constant"):
                if "value" in node.attributeNames() and str(node["value"]).startswith("cuda"):
                    node.copyAttributes(device_node)

    model.apply(patch_device)
    if str(device) == "cuda":
        model.half()
    return model
'''


def test_device_constants_of_a_traced_graph_are_no_finding():
    found = _findings(CLIP, "clip/clip.py")
    assert "NPU003" not in found.get(_line(CLIP, b'.startswith("cuda")'), {})
    assert "NPU003" in found.get(_line(CLIP, b'if str(device) == "cuda"'), {})


ALL_TO_ALL = b'''import torch
import torch.distributed as dist


def get_global_gloo_group():
    return dist.new_group(backend="gloo")


def gather_list(data):
    group = get_global_gloo_group()
    out = [None] * dist.get_world_size(group)
    dist.all_gather_object(out, data, group=group)
    return out


def all_to_all(x, scatter_dim, gather_dim, group=None):
    inputs = [u.contiguous() for u in x.chunk(dist.get_world_size(group), dim=scatter_dim)]
    outputs = [torch.empty_like(u) for u in inputs]
    dist.all_to_all(outputs, inputs, group=group)
    return torch.cat(outputs, dim=gather_dim)
'''


def test_a_group_parameter_is_not_a_gloo_group():
    found = _findings(ALL_TO_ALL, "scepter/modules/utils/distribute.py")
    assert found[_line(ALL_TO_ALL, b"dist.all_to_all(")]["NPU108"] == "warning"


# -- dtype facts in code that only follows a dtype chosen elsewhere (policy (a2)) ---------------------------------------

FOLLOWING = b'''import torch


def transcribe(model, mel, dtype=torch.float32):
    segment = mel[:, :3000]
    if dtype == torch.float16:
        segment = segment.half()
    return model(segment)


def create_model(model, precision: str):
    if "fp16" in precision or "bf16" in precision:
        model = model.to(torch.bfloat16) if "bf16" in precision else model.to(torch.float16)
    return model


def dtype_name(dtype):
    if dtype == torch.bfloat16:
        name = "bf16"
    else:
        assert dtype == torch.float16
        name = "fp16"
    return name


def build(model, use_half: bool):
    if use_half:
        model = model.half()
    return model
'''


def test_dtype_facts_that_follow_a_tested_dtype_are_dropped():
    found = _findings(FOLLOWING, "whisper/transcribe.py")
    assert "NPU202" not in found.get(_line(FOLLOWING, b"segment = segment.half()"), {})
    assert not {"NPU201", "NPU202"} & set(found.get(_line(FOLLOWING, b"model = model.to(torch.bfloat16)"), {}))
    assert "NPU202" not in found.get(_line(FOLLOWING, b'name = "fp16"'), {})
    assert found[_line(FOLLOWING, b"model = model.half()")]["NPU202"] == "info"
