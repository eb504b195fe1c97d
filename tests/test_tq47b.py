"""Precision fixes of tq47b (session 47, tuned on heldout56's labels and the lead's policies (p)-(s)). Each family
has a positive case (the row the labellers called false, in code written afresh in the shape of its tree) and a
control that keeps its finding."""
from __future__ import annotations

import textwrap

from tests.static_snippets import code_severity_in_tree, dedented_tree, first_line_of, severity_at


# -- policy (q): uv's override / constraint entries install nothing by themselves ------------------------------------

PYPROJECT = """\
    [project]
    name = "agent-trainer"
    version = "0.4.0"
    dependencies = [
        "bitsandbytes>=0.45.2",
        "vllm==0.8.2",
        "xformers==0.0.29",
    ]

    [tool.uv]
    dev-dependencies = ["black>=25.1.0"]
    override-dependencies = [
        "bitsandbytes; sys_platform == 'linux'",
        "xformers==0.0.29",
    ]
    constraint-dependencies = ["flash-attn<2.8"]
"""


def test_uv_override_and_constraint_entries_are_info(tmp_path):
    found = dedented_tree(tmp_path, {"pyproject.toml": PYPROJECT})
    assert severity_at(found, "pyproject.toml", PYPROJECT, "\"bitsandbytes; sys_platform").get("NPU440") == "info"
    overrides = first_line_of(PYPROJECT, "override-dependencies")
    assert found.get(("pyproject.toml", overrides + 2), {}).get("NPU361") == "info"   # the same string as a dependency
    assert set(severity_at(found, "pyproject.toml", PYPROJECT, "flash-attn<2.8").values()) == {"info"}
    # the dependencies that install them keep their findings
    assert severity_at(found, "pyproject.toml", PYPROJECT, "\"bitsandbytes>=0.45.2\"").get("NPU440") == "warning"
    assert severity_at(found, "pyproject.toml", PYPROJECT, "\"vllm==0.8.2\"").get("NPU440") == "error"
    assert severity_at(found, "pyproject.toml", PYPROJECT, "    \"xformers==0.0.29\",").get("NPU361") == "error"


# -- policy (r): decision (l) for a full `conda env export` -----------------------------------------------------------

def _export(torch_lines: list[str]) -> str:
    pinned = [f"  - pkg{i}=1.{i}.0=h06a4308_0" for i in range(22)]
    lines = ["name: segmenter", "channels:", "  - pytorch", "  - nvidia", "  - defaults", "dependencies:",
             *pinned[:11], "  - cuda-cudart=12.4.127=0", "  - cuda-opencl=12.6.37=0", "  - libcufft=11.2.0.44=0",
             *torch_lines, *pinned[11:], "  - torchtriton=3.0.0=py39", "  - pip:", "    - opencv-python==4.8.1.78"]
    return "\n".join(lines) + "\n"


EXPORT = _export(["  - pytorch=2.4.0=py3.9_cuda12.4_cudnn9.1.0_0", "  - pytorch-cuda=12.4=hc786d27_6"])


def test_conda_export_runtime_packages_are_info(tmp_path):
    found = code_severity_in_tree(tmp_path, {"environment.yml": EXPORT})
    lines = EXPORT.splitlines()
    at = {text.strip(): found.get(("environment.yml", n), {}) for n, text in enumerate(lines, 1)}
    assert at["- cuda-opencl=12.6.37=0"] == {"NPU018": "info"}
    assert at["- libcufft=11.2.0.44=0"] == {"NPU018": "info"}
    assert at["- torchtriton=3.0.0=py39"] == {"NPU360": "info"}
    # the CUDA torch build and pytorch-cuda keep their errors
    assert at["- pytorch=2.4.0=py3.9_cuda12.4_cudnn9.1.0_0"] == {"NPU018": "error"}
    assert at["- pytorch-cuda=12.4=hc786d27_6"] == {"NPU018": "error"}


def test_hand_written_environment_keeps_its_runtime_errors(tmp_path):
    env = "name: seg\nchannels:\n  - nvidia\ndependencies:\n  - python=3.10\n  - pytorch-cuda=12.1\n" \
          "  - cuda-cudart\n  - libcufft\n"
    found = code_severity_in_tree(tmp_path, {"environment.yml": env})
    assert found.get(("environment.yml", 7), {}).get("NPU018") == "error"
    assert found.get(("environment.yml", 8), {}).get("NPU018") == "error"


# -- policy (p): a SkyPilot task pinned to NVIDIA accelerators reads like a CUDA CI job -----------------------------

SKY_TASK = """\
    # sky launch examples/grpo/skypilot-trainer.yaml --cluster=grpo --env-file=.env
    resources:
      image_id: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel
      cloud: runpod
      accelerators:
        - "{accelerator}"

    workdir: .

    setup: |
      curl -LsSf https://astral.sh/uv/install.sh | sh
      uv pip install --system \\
        unsloth==2025.3.19 \\
        vllm==0.8.2 \\
        bitsandbytes==0.45.4 \\
        datasets==3.3.2

    run: |
      uv run python examples/grpo/train.py
"""


def _sky(tmp_path, accelerator: str) -> tuple[dict, str]:
    src = SKY_TASK.replace("{accelerator}", accelerator)
    return dedented_tree(tmp_path, {"examples/grpo/skypilot-trainer.yaml": src}), textwrap.dedent(src)


def test_skypilot_task_on_nvidia_gpus_is_info(tmp_path):
    found, src = _sky(tmp_path, "H100-SXM")
    rel = "examples/grpo/skypilot-trainer.yaml"
    assert severity_at(found, rel, src, "vllm==0.8.2") == {"NPU440": "info"}
    assert severity_at(found, rel, src, "bitsandbytes==0.45.4") == {"NPU440": "info"}
    assert set(severity_at(found, rel, src, "image_id").values()) == {"info"}


def test_skypilot_task_on_a_variable_or_other_accelerator_keeps_its_findings(tmp_path):
    found, src = _sky(tmp_path / "tpu", "tpu-v5-8")
    assert severity_at(found, "examples/grpo/skypilot-trainer.yaml", src, "vllm==0.8.2") == {"NPU440": "error"}
    found, src = _sky(tmp_path / "var", "{{ gpu }}")
    assert severity_at(found, "examples/grpo/skypilot-trainer.yaml", src, "vllm==0.8.2") == {"NPU440": "error"}


# -- policy (s): a copied library's `__main__` (and its package modules below `scripts/`) run only where launched ------

APP = """\
    import gradio as gr
    from scripts.funcs import enhance_audio
    from scripts.tts_funcs import TTSWrapper


    with gr.Blocks() as demo:
        gr.Button("Enhance").click(enhance_audio)
    demo.launch()
"""
FUNCS = """\
    from scripts.enh.enhancer.inference import enhance


    def enhance_audio(wav, sr):
        return enhance(wav, sr, "cpu")
"""
TTS_FUNCS = """\
    class TTSWrapper:
        def __init__(self):
            self.available_model_versions = ["v2.0.3", "v2.0.2", "main"]
"""
INFERENCE = """\
    from .train import Enhancer


    def enhance(wav, sr, device):
        return Enhancer().to(device)(wav)
"""
TRAIN = """\
    import argparse

    import torch
    from torch import nn

    from ..hparams import HParams


    class Enhancer(nn.Module):
        def forward(self, x):
            return x


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", type=str, default="cuda")
        args = parser.parse_args()
        Enhancer().to(args.device)
        torch.cuda.synchronize()


    if __name__ == "__main__":
        main()
"""
MAIN = """\
    import argparse

    from .inference import enhance


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", type=str, default="cuda")
        args = parser.parse_args()
        enhance(None, 44100, args.device)


    if __name__ == "__main__":
        main()
"""
TOOL = """\
    import torch


    def main():
        torch.zeros(1).cuda()


    if __name__ == "__main__":
        main()
"""


def _webui(tmp_path, extra: dict[str, str] | None = None) -> dict:
    files = {"app.py": APP, "scripts/funcs.py": FUNCS, "scripts/tts_funcs.py": TTS_FUNCS,
             "scripts/convert.py": TOOL, "scripts/enh/__init__.py": "", "scripts/enh/hparams.py": "class HParams:\n    pass\n",
             "scripts/enh/enhancer/__init__.py": "", "scripts/enh/enhancer/inference.py": INFERENCE,
             "scripts/enh/enhancer/train.py": TRAIN, "scripts/enh/enhancer/__main__.py": MAIN, **(extra or {})}
    return dedented_tree(tmp_path, files)


def test_copied_library_main_and_training_entry_below_scripts_are_info(tmp_path):
    found = _webui(tmp_path)
    assert severity_at(found, "scripts/enh/enhancer/__main__.py", MAIN, "default=\"cuda\"") == {"NPU003": "info"}
    assert severity_at(found, "scripts/enh/enhancer/train.py", TRAIN, "default=\"cuda\"") == {"NPU003": "info"}
    assert severity_at(found, "scripts/enh/enhancer/train.py", TRAIN, "synchronize") == {"NPU002": "info"}
    # a plain script of the tools folder is a program a user runs: it keeps its error
    assert severity_at(found, "scripts/convert.py", TOOL, ".cuda()") == {"NPU001": "error"}


def test_copied_library_main_a_shell_script_runs_keeps_its_severity(tmp_path):
    found = _webui(tmp_path, {"enhance.sh": "#!/bin/bash\npython -m scripts.enh.enhancer in/ out/\n"})
    assert severity_at(found, "scripts/enh/enhancer/__main__.py", MAIN, "default=\"cuda\"").get("NPU003") in ("error", "warning")


VOICE_MODEL = """\
    import torch


    class Voice:
        def speak(self, text):
            return torch.zeros(16000)


    def load():
        return Voice()
"""
VOICE_MAIN = """\
    import argparse

    import torch

    from .model import load

    parser = argparse.ArgumentParser()
    parser.add_argument("text")
    args = parser.parse_args()
    voice = load()
    wav = voice.speak(args.text).to("cuda")
    torch.cuda.synchronize()
    print(wav.shape)
"""


def test_app_package_main_a_container_runs_keeps_its_severity(tmp_path):
    # review47 item 2: the app's own package, whose `__main__` the Dockerfile's exec-form CMD runs
    files = {"webui.py": "import gradio as gr\nfrom voiceapp.model import load\n\n\ndef run(text):\n    return load().speak(text)\n\n\n"
                         "gr.Interface(fn=run, inputs=\"text\", outputs=\"audio\").launch()\n",
             "voiceapp/__init__.py": "", "voiceapp/model.py": textwrap.dedent(VOICE_MODEL),
             "voiceapp/__main__.py": textwrap.dedent(VOICE_MAIN),
             "Dockerfile": 'FROM python:3.11-slim\nCOPY . /app\nCMD ["python", "-m", "voiceapp", "hello"]\n'}
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "voiceapp/__main__.py", VOICE_MAIN, ".to(\"cuda\")").get("NPU003") == "error"
    assert severity_at(found, "voiceapp/__main__.py", VOICE_MAIN, "synchronize").get("NPU002") == "error"
    # without the launch it is policy (s)'s library `__main__`: info
    del files["Dockerfile"]
    assert severity_at(dedented_tree(tmp_path / "bare", files), "voiceapp/__main__.py", VOICE_MAIN, "synchronize") == {"NPU002": "info"}


# -- vLLM started by code that selects Ascend devices itself -----------------------------------------------------------

SERVE_SH = """\
    export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
    export HCCL_OP_EXPANSION_MODE=AIV
    export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
    python -m vllm.entrypoints.openai.api_server --model /opt/models/dsv3 --tensor-parallel-size 8 --port 8999
"""
PD_DEMO = """\
    import os


    def run_prefill(model, visible_devices):
        os.environ["VLLM_USE_V1"] = "1"
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = visible_devices
        from vllm import LLM, SamplingParams

        llm = LLM(model=model, tensor_parallel_size=len(visible_devices.split(",")))
        return llm.generate(["hi"], SamplingParams(max_tokens=1))
"""
PD_DEMO_GATED = """\
    import os


    def run_prefill(model, visible_devices, device):
        if device == "npu":
            os.environ["ASCEND_RT_VISIBLE_DEVICES"] = visible_devices
        from vllm import LLM

        llm = LLM(model=model)
        return llm
"""


def test_vllm_started_after_selecting_ascend_devices_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"scripts/serve.sh": SERVE_SH, "examples/pd_demo.py": PD_DEMO})
    assert severity_at(found, "scripts/serve.sh", SERVE_SH, "vllm.entrypoints").get("NPU447") == "info"
    assert severity_at(found, "examples/pd_demo.py", PD_DEMO, "llm = LLM(").get("NPU487") == "info"


def test_vllm_start_beside_cuda_devices_or_a_gated_selection_keeps_its_warning(tmp_path):
    both = SERVE_SH.replace("export HCCL", "export CUDA_VISIBLE_DEVICES=0,1\n    export HCCL")
    found = dedented_tree(tmp_path, {"scripts/serve.sh": both, "examples/pd_demo.py": PD_DEMO_GATED})
    assert severity_at(found, "scripts/serve.sh", both, "vllm.entrypoints").get("NPU447") == "warning"
    assert severity_at(found, "examples/pd_demo.py", PD_DEMO_GATED, "llm = LLM(").get("NPU487") == "warning"


# -- imports under `if TYPE_CHECKING:` never run; a CUDA API saved only to be restored after a patch ------------------

SERVICE = """\
    from typing import TYPE_CHECKING

    import torch

    if TYPE_CHECKING:
        from unsloth_zoo.vllm_lora_request import LoRARequest
    else:
        from unsloth import FastLanguageModel


    def load(path) -> "LoRARequest":
        return FastLanguageModel.from_pretrained(path)
"""
STATE = """\
    import torch


    class ModelState:
        def __init__(self, config):
            # unsloth's engine start trips the allocator: a no-op empty_cache while it starts
            empty_cache = torch.cuda.empty_cache
            torch.cuda.empty_cache = lambda: None
            self.model = config.build()
            torch.cuda.empty_cache = empty_cache
            torch.cuda.empty_cache()


    def peak():
        probe = torch.cuda.max_memory_allocated
        return probe()
"""


def test_type_checking_imports_never_run(tmp_path):
    found = dedented_tree(tmp_path, {"src/pkg/service.py": SERVICE})
    assert severity_at(found, "src/pkg/service.py", SERVICE, "unsloth_zoo") == {}
    assert "NPU448" in severity_at(found, "src/pkg/service.py", SERVICE, "from unsloth import")    # the `else:` arm runs


def test_cuda_api_saved_to_restore_after_a_patch_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"src/pkg/state.py": STATE})
    assert severity_at(found, "src/pkg/state.py", STATE, "empty_cache = torch.cuda.empty_cache") == {"NPU002": "info"}
    assert severity_at(found, "src/pkg/state.py", STATE, "torch.cuda.empty_cache()") == {"NPU002": "error"}
    # a reference kept to call it later is a use
    assert severity_at(found, "src/pkg/state.py", STATE, "probe = torch.cuda").get("NPU002") == "error"


# -- the tree's own module named `nccl` is no dependency's NCCL binding (NPU950) -------------------------------------

RELAY = """\
    import torch.distributed as dist


    class NcclRelay:
        def __init__(self, rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
"""
RELAY_TEST = """\
    import omni_pipe.relay.nccl  # noqa: F401
    import omni_pipe.relay.shm  # noqa: F401
    from hfai.nccl import distributed as hdist
"""


def test_own_nccl_module_import_is_not_a_dependency(tmp_path):
    found = dedented_tree(tmp_path, {"omni_pipe/__init__.py": "", "omni_pipe/relay/__init__.py": "",
                             "omni_pipe/relay/nccl.py": RELAY, "omni_pipe/relay/shm.py": "X = 1\n",
                             "tests/test_relay.py": RELAY_TEST})
    assert "NPU950" not in severity_at(found, "tests/test_relay.py", RELAY_TEST, "omni_pipe.relay.nccl")
    assert severity_at(found, "tests/test_relay.py", RELAY_TEST, "hfai.nccl").get("NPU950") == "error"
    assert severity_at(found, "omni_pipe/relay/nccl.py", RELAY, '"nccl"').get("NPU101") == "error"


# -- policy (k): the CUDA member of a registry of sibling modules -----------------------------------------------------

BASE = """\
    RELAY_REGISTRY = {}


    def register_relay(name):
        def wrap(cls):
            RELAY_REGISTRY[name] = cls
            return cls
        return wrap


    def create_relay(relay_type, **kwargs):
        return RELAY_REGISTRY[relay_type](**kwargs)
"""
NCCL = """\
    import torch
    import torch.distributed as dist

    from .base import register_relay


    @register_relay("nccl")
    class NcclRelay:
        def __init__(self, rank, world_size):
            torch.cuda.set_device(rank % torch.cuda.device_count())
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
"""


def _member(name: str, cls: str) -> str:
    return f'from .base import register_relay\n\n\n@register_relay("{name}")\nclass {cls}:\n    pass\n'


def _relays(tmp_path, members: dict[str, str]) -> dict:
    files = {"pipe/__init__.py": "", "pipe/relay/__init__.py": "", "pipe/relay/base.py": BASE,
             "pipe/relay/nccl.py": NCCL, **{f"pipe/relay/{n}.py": _member(n, n.title() + "Relay") for n in members}}
    return dedented_tree(tmp_path, files)


def test_cuda_member_of_a_registered_set_is_info(tmp_path):
    found = _relays(tmp_path, {"nixl": "", "shm": "", "mooncake": ""})
    assert severity_at(found, "pipe/relay/nccl.py", NCCL, 'init_process_group("nccl"').get("NPU101") == "info"
    assert set(severity_at(found, "pipe/relay/nccl.py", NCCL, "set_device").values()) == {"info"}


def test_registered_cuda_module_with_one_sibling_keeps_its_error(tmp_path):
    found = _relays(tmp_path, {"shm": ""})
    assert severity_at(found, "pipe/relay/nccl.py", NCCL, 'init_process_group("nccl"').get("NPU101") == "error"
