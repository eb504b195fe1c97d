"""tq40 (session 40, issue 11; TUNED on heldout43): `device="cuda"` defaults of functions under Streamlit's caches
that every caller overrides, jobs spawned behind `torch.cuda.device_count()` and test modules behind
`pytest.importorskip("transformer_engine")`, xformers imported only to show its version, FastAPI's `response_model=`
types, `hasattr(torch.cuda, "is_available")`, and CUDA checks whose body only sets speed switches (nested `if`s)."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _findings, _in, _tree

# -- defaults of cached Streamlit helpers that every caller overrides ------------------------------------------------

STREAMLIT_UTIL = '''import streamlit as st
import torch
from diffusers import StableDiffusionPipeline


@st.cache_resource
def load_stable_diffusion_pipeline(
    checkpoint: str = "riffusion/riffusion-model-v1",
    device: str = "cuda",
    dtype: torch.dtype = torch.float16,
) -> StableDiffusionPipeline:
    if device == "cpu" or device.lower().startswith("mps"):
        dtype = torch.float32
    return StableDiffusionPipeline.from_pretrained(checkpoint, torch_dtype=dtype).to(device)


@st.cache_data(persist=True)
def run_txt2img(prompt: str, seed: int, device: str = "cuda"):
    pipeline = load_stable_diffusion_pipeline(device=device)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return pipeline(prompt=prompt, generator=generator).images[0]


@st.cache_resource
def get_audio_splitter(device: str = "cuda"):
    return torch.nn.Identity().to(device)


def select_device(container=st.sidebar) -> str:
    default_device = "cpu"
    if torch.backends.mps.is_available():
        default_device = "mps"
    return container.selectbox("Device", options=["cuda", "cpu", "mps"], index=0 if default_device == "cuda" else 1)
'''

TEXT_TO_AUDIO = '''import streamlit as st

from app import util as streamlit_util


def render() -> None:
    device = streamlit_util.select_device(st.sidebar)
    prompt = st.text_input("Prompt")
    image = streamlit_util.run_txt2img(prompt=prompt, seed=42, device=device)
    st.image(image)
'''


def test_a_cached_streamlit_helper_whose_callers_pass_the_device_reports_its_default_at_info(tmp_path: Path):
    found = _in(_tree(tmp_path, {"app/__init__.py": "", "app/util.py": STREAMLIT_UTIL,
                                 "app/tasks/text_to_audio.py": TEXT_TO_AUDIO}), "app/util.py")
    assert found[9].get("NPU003") == "info"           # load_stable_diffusion_pipeline: run_txt2img passes device=
    assert found[18].get("NPU003") == "info"          # run_txt2img: the task passes device=device
    assert found[25].get("NPU003") == "error"         # get_audio_splitter: called from nowhere, an entry point


def test_a_helper_under_a_registering_decorator_keeps_its_default(tmp_path: Path):
    src = STREAMLIT_UTIL.replace("@st.cache_data(persist=True)", "@app.route('/txt2img')")
    found = _in(_tree(tmp_path, {"app/__init__.py": "", "app/util.py": src,
                                 "app/tasks/text_to_audio.py": TEXT_TO_AUDIO}), "app/util.py")
    assert found[18].get("NPU003") == "error"         # a route: called by the framework, not only by the task


# -- jobs spawned behind the CUDA count; modules skipped without Transformer Engine ---------------------------------

DEEPSPEED_TEST = '''from functools import partial

import pytest
import torch
from _test_utils.torch.distributed.utils import spawn_multiprocess_job


def _test_deepspeed_simple_linear(zero_stage, rank, size):
    model = torch.nn.Linear(16, 16).cuda()
    x = torch.randn(2, 16).cuda()
    return model(x)


def helper_for_users(rank, size):
    return torch.randn(2).cuda()


@pytest.mark.parametrize("zero_stage", [1, 2, 3])
def test_deepspeed_simple_linear(zero_stage):
    spawn_multiprocess_job(
        size=torch.cuda.device_count(),
        job=partial(_test_deepspeed_simple_linear, zero_stage),
        backend="nccl",
    )


def run_everywhere():
    spawn_multiprocess_job(size=4, job=helper_for_users, backend="nccl")
'''


def test_a_job_spawned_behind_the_cuda_count_is_gated_by_the_count(tmp_path: Path):
    found = _in(_tree(tmp_path, {"tests/gpu/test_deepspeed.py": DEEPSPEED_TEST}), "test_deepspeed.py")
    assert found[9].get("NPU001") == "warning" and found[10].get("NPU001") == "warning"   # the spawned job
    assert found[21].get("NPU002") == "error"         # the count is the finding
    assert found[23].get("NPU101") == "warning"       # backend="nccl" of a launch that starts nothing on Ascend
    assert found[15].get("NPU001") == "error"         # a job also spawned with a fixed count
    assert found[28].get("NPU101") == "error"


def test_a_job_of_a_helper_nothing_runs_is_not_gated(tmp_path: Path):
    src = DEEPSPEED_TEST.replace("def test_deepspeed_simple_linear", "def check_deepspeed_simple_linear")
    found = _in(_tree(tmp_path, {"tests/gpu/test_deepspeed.py": src}), "test_deepspeed.py")
    assert found[9].get("NPU001") == "error"          # not a collected test: the module's API


TE_TEST = b'''import pytest
import torch
import torch.nn as nn

te = pytest.importorskip("transformer_engine")


class TELinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = te.pytorch.Linear(16, 16)


def test_quantize():
    model = TELinear().cuda()
    x = torch.randn(2, 16, device="cuda")
    return model(x)
'''


def test_a_module_skipped_without_transformer_engine_is_gated():
    found = _findings(TE_TEST, "tests/gpu/test_transformer_engine.py")
    assert found[15].get("NPU001") == "warning" and found[16].get("NPU003") == "warning"
    plain = _findings(TE_TEST.replace(b'"transformer_engine"', b'"einops"'), "tests/gpu/test_transformer_engine.py")
    assert plain[15].get("NPU001") == "error"         # einops installs on Ascend: the test runs there


# -- a package imported only to show its version ---------------------------------------------------------------------

VERSIONS = b'''import sys

from modules import shared


def versions_html():
    import torch

    if shared.xformers_available:
        import xformers
        xformers_version = xformers.__version__
    else:
        xformers_version = "N/A"
    return f"torch: {torch.__version__} xformers: {xformers_version}"


def check_versions():
    from packaging import version

    if shared.xformers_available:
        import xformers

        if version.parse(xformers.__version__) < version.parse("0.0.23.post1"):
            print(f"""
You are running xformers {xformers.__version__}.
""".strip())


def attention(q, k, v):
    if shared.xformers_available:
        import xformers.ops
        return xformers.ops.memory_efficient_attention(q, k, v)
    return None
'''


def test_xformers_imported_only_to_show_its_version_is_info():
    found = _findings(VERSIONS, "modules/ui.py")
    for line in (9, 10, 20, 21, 23):
        assert set(found.get(line, {}).values()) <= {"info"}, (line, found.get(line))
    assert found[30].get("NPU391") == "warning"       # the same flag choosing the attention kernel
    assert found[31].get("NPU348") == "warning"


# -- FastAPI response types; hasattr of a query every torch build has ------------------------------------------------

API_SERVER = b'''from fastapi import FastAPI
from tensorrt_llm.serve.openai_protocol import CompletionRequest, CompletionResponse

app = FastAPI()


@app.post("/v1/completions", response_model=CompletionResponse)
async def create_completion(request: CompletionRequest):
    return CompletionResponse(id="1", model="m", choices=[])
'''


def test_a_fastapi_response_model_is_a_type_not_a_use():
    found = _findings(API_SERVER, "examples/api_server.py")
    assert not found.get(7), found.get(7)
    assert found[2].get("NPU409") == "error"          # the import carries the failure
    assert found[9].get("NPU409") == "error"          # a construction is a use


PROVIDER = b'''import torch


def pick_device():
    if hasattr(torch, "cuda") and hasattr(torch.cuda, "is_available") and torch.cuda.is_available():
        return torch.device("cuda")
    if hasattr(torch.cuda, "mem_get_info"):
        return torch.device("cpu")
    return torch.device("cpu")
'''


def test_hasattr_of_a_cuda_query_every_build_defines_is_not_a_finding():
    found = _findings(PROVIDER, "provider/gptqmodel.py")
    assert [c for c, _ in found[5].items()] == ["NPU002"] or found[5].get("NPU002") == "error"
    line5 = _findings(PROVIDER.replace(b" and torch.cuda.is_available()", b""), "provider/gptqmodel.py").get(5, {})
    assert "NPU002" not in line5, line5
    assert found[7].get("NPU002") == "warning"       # mem_get_info fails without CUDA: a probe at warning


# -- a CUDA check whose body only sets speed switches, nested ------------------------------------------------------

DEVICES = b'''import torch


def cuda_no_autocast():
    return False


def enable_tf32():
    if torch.cuda.is_available():
        if cuda_no_autocast():
            torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def pick():
    if torch.cuda.is_available():
        if cuda_no_autocast():
            torch.backends.cudnn.benchmark = True
        return "cuda"
    return "cpu"
'''


def test_a_cuda_check_that_only_sets_speed_switches_is_a_warning_even_nested():
    found = _findings(DEVICES, "modules/devices.py")
    assert found[9].get("NPU002") == "warning"
    assert found[17].get("NPU002") == "error"         # the check also picks the device


MAKE_MODEL = b'''import torch
import torch.nn as nn


class TransReID(nn.Module):
    def load_param(self, trained_path):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        param_dict = torch.load(trained_path, map_location=device)
        for i in param_dict:
            self.state_dict()[i.replace("module.", "")].copy_(param_dict[i])
        print(f"Loading pretrained model from {trained_path}")


def load_whole_model(path):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torch.load(path, map_location=device)
    return model.eval()
'''


def test_a_cuda_check_that_only_stages_a_checkpoint_copied_into_a_model_is_a_warning():
    found = _findings(MAKE_MODEL, "model/make_model.py")
    assert found[7].get("NPU002") == "warning"
    assert found[15].get("NPU002") == "error"         # the pickled model lives where map_location puts it
