"""t36c (session 34, TUNED on heldout38): false families of the held-out draw, each on code shaped like the tree it
came from, with the nearest case that keeps its finding and severity."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _codes(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "code")


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- an application's own `is_cuda` setting (pyvideotrans' task config and recognition stage) ----------------------
TASK_CONFIG = """\
from dataclasses import dataclass


@dataclass
class TaskCfg:
    name: str = ""
    detect_language: str = "auto"
    is_cuda: bool = False  # use CUDA acceleration
    remove_noise: bool = False

    def summary(self):
        return f'{"CUDA on" if self.is_cuda else "CUDA off"}'
"""

RECOGN_STAGE = """\
import torch

from videotrans.recognition import run_recogn


class RecognStage:
    def __init__(self, cfg):
        self.cfg = cfg

    def recogn(self, audio_file):
        raw_subtitles = run_recogn(
            audio_file=audio_file,
            detect_language=self.cfg.detect_language,
            is_cuda=self.cfg.is_cuda,
        )
        kw = {"text_dict_file": audio_file, "is_cuda": self.cfg.is_cuda}
        return raw_subtitles, kw

    def check(self, feats, config):
        if config.is_cuda and not feats.is_cuda:
            feats = feats.cuda()
        if not feats.is_cuda:
            raise NotImplementedError("the fused kernel takes CUDA tensors only")
        return feats
"""


def test_an_applications_own_is_cuda_setting_is_no_tensor_read(tmp_path):
    files = {"videotrans/task/taskcfg.py": TASK_CONFIG, "videotrans/task/_stage_recogn.py": RECOGN_STAGE}
    stage = _codes(tmp_path, files, "videotrans/task/_stage_recogn.py")
    for needle in ("is_cuda=self.cfg.is_cuda", '"is_cuda": self.cfg.is_cuda'):
        assert "NPU005" not in stage.get(line_of(RECOGN_STAGE, needle), set()), needle
    cfg = _codes(tmp_path / "b", files, "videotrans/task/taskcfg.py")
    assert "NPU005" not in cfg.get(line_of(TASK_CONFIG, "if self.is_cuda"), set())
    # nearest: a tensor's is_cuda keeps its error, also on a line that reads a setting beside it
    sev = _severities(tmp_path / "c", files, "videotrans/task/_stage_recogn.py")
    assert "error" in sev[line_of(RECOGN_STAGE, "if config.is_cuda and not feats.is_cuda")]
    assert "error" in sev[line_of(RECOGN_STAGE, "if not feats.is_cuda:")]


MODULE_WRAPPER = """\
import torch


class FusedNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        if self.weight.is_cuda and x.is_cuda:
            return fused_norm(x, self.weight)
        return torch.nn.functional.layer_norm(x, x.shape[-1:], self.weight)


class Cache:
    def __init__(self, config, x):
        self.is_cuda = x.is_cuda
        self.config = config

    def step(self, y):
        if self.config.is_cuda:
            return y
        if not y.is_cuda:
            raise RuntimeError("CUDA tensor expected")
        return y
"""


def test_is_cuda_on_tensors_keeps_its_error_beside_a_class_that_binds_its_own(tmp_path):
    rel = "model/fused.py"
    sev = _severities(tmp_path, {rel: MODULE_WRAPPER}, rel)
    # `self.weight` is no settings holder; in a class that binds `self.is_cuda`, a parameter's is_cuda is a tensor's
    assert "error" in sev[line_of(MODULE_WRAPPER, "if self.weight.is_cuda and x.is_cuda")]
    assert "error" in sev[line_of(MODULE_WRAPPER, "self.is_cuda = x.is_cuda")]
    assert "error" in sev[line_of(MODULE_WRAPPER, "if not y.is_cuda:")]
    assert "NPU005" not in _codes(tmp_path / "b", {rel: MODULE_WRAPPER}, rel).get(
        line_of(MODULE_WRAPPER, "if self.config.is_cuda:"), set())


# -- Windows-only requirement lines (tabbyAPI's per-CUDA extras) -----------------------------------------------------
PYPROJECT = """\
[project]
name = "tabbyAPI"
version = "0.0.1"
dependencies = ["fastapi >= 0.110.0"]

[project.optional-dependencies]
cu12 = [
    "torch @ https://dl.example/cu128/torch-2.9.0%2Bcu128-cp312-cp312-win_amd64.whl ; platform_system == 'Windows' and python_version == '3.12'",
    "torch @ https://dl.example/cu128/torch-2.9.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl ; platform_system == 'Linux'",
    "triton ; platform_system == 'Linux' and platform_machine == 'x86_64'",
    "triton-windows ; platform_system == 'Windows'",
    "flash-linear-attention >= 0.5.0 ; (platform_system == 'Linux' and python_version >= '3.10') or platform_system == 'Windows'",
    "exllamav3 @ https://gh.example/v1.4.2/exllamav3-1.4.2+cu128.torch2.9.0-cp312-cp312-win_amd64.whl ; python_version == '3.12'",
    "exllamav3 @ https://gh.example/v1.4.2/exllamav3-1.4.2+cu128.torch2.9.0-cp312-cp312-linux_x86_64.whl ; platform_system == 'Linux'",
    "bitsandbytes==0.43.3 ; sys_platform == 'linux' or sys_platform == 'win32'",
]
"""


def test_windows_only_requirements_are_info(tmp_path):
    sev = _severities(tmp_path, {"pyproject.toml": PYPROJECT}, "pyproject.toml")
    for needle in ("cp312-win_amd64.whl ; platform_system == 'Windows'", '"triton-windows',
                   "exllamav3-1.4.2+cu128.torch2.9.0-cp312-cp312-win_amd64.whl"):
        assert sev[line_of(PYPROJECT, needle)] == {"info"}, needle
    # nearest: the Linux lines of the same extras, and a marker that holds on Linux too, keep their severity
    for needle in ("manylinux_2_28_x86_64.whl", '"triton ;', '"flash-linear-attention',
                   "cp312-cp312-linux_x86_64.whl", '"bitsandbytes'):
        assert sev[line_of(PYPROJECT, needle)] - {"info"}, needle


REQUIREMENTS = """\
gradio==4.44.1
https://example.org/dl/v0.50.0/llama_cpp_binaries-0.50.0+cu124-py3-none-win_amd64.whl
https://example.org/dl/v0.50.0/llama_cpp_binaries-0.50.0+cu124-py3-none-linux_x86_64.whl; platform_machine == "x86_64"
triton-windows==3.1.0.post17; sys_platform == 'win32'
triton==3.1.0; sys_platform == 'linux'
"""


def test_windows_wheels_and_markers_in_requirements_txt_are_info(tmp_path):
    rel = "requirements/requirements_cuda124.txt"
    sev = _severities(tmp_path, {rel: REQUIREMENTS}, rel)
    assert sev[2] == {"info"} and sev[4] == {"info"}, sev
    assert sev[3] - {"info"} and sev[5] - {"info"}, sev


def test_windows_only_reads_markers_and_wheel_tags():
    from auditor.project.requirements import read_requirement, windows_only

    assert windows_only(read_requirement("triton-windows ; platform_system == 'Windows'"))
    assert windows_only(read_requirement("torch==2.7.1; sys_platform == 'win32' and python_version >= '3.10'"))
    assert windows_only(read_requirement("x @ https://h/x-1.0+cu121-cp310-cp310-win_amd64.whl"))
    assert not windows_only(read_requirement("x @ https://h/x-1.0+cu121-cp310-cp310-linux_x86_64.whl"))
    assert not windows_only(read_requirement("torch==2.2.1; sys_platform != 'darwin'"))
    assert not windows_only(read_requirement('torch==2.3.1; sys_platform == "darwin"'))     # macOS: macos_only's
    assert not windows_only(read_requirement("flash-attn; extra == 'gpu' and sys_platform == 'win32'"))
    assert not windows_only(read_requirement("numpy"))


# -- another program's option values: ffmpeg's hardware decoder, CTranslate2's compute type (pyvideotrans) ----------
ASSEMBLE = """\
import subprocess

import ffmpeg
import torch


def encode(settings, codec, subtitles_file, source):
    global_args = []
    if settings.get("hw_decode"):
        global_args = ['-hwaccel', 'cuda', '-hwaccel_output_format', 'cuda']
    cmd = ["ffmpeg", *global_args, "-i", source, "-c:v", "h264_nvenc", "out.mp4"]
    subprocess.run(cmd, check=True)


def extract_frames(input_video, out_dir):
    ffmpeg.input(input_video, hwaccel='cuda').output(f"{out_dir}/%05d.jpg").run()


def launch(script):
    subprocess.run(["python", script, "--device", "cuda"], check=True)
    device = "cuda"
    return torch.zeros(1, device=device)
"""


def test_ffmpeg_hardware_decoder_names_no_torch_device(tmp_path):
    rel = "videotrans/task/_stage_assemble.py"
    codes = _codes(tmp_path, {rel: ASSEMBLE}, rel)
    assert "NPU003" not in codes.get(line_of(ASSEMBLE, "['-hwaccel', 'cuda'"), set())
    assert "NPU003" not in codes.get(line_of(ASSEMBLE, "hwaccel='cuda'"), set())
    # nearest: a device option of a launched torch script, and a device string the code uses, keep theirs
    assert "NPU003" in codes[line_of(ASSEMBLE, '"--device", "cuda"')]
    assert "NPU003" in codes[line_of(ASSEMBLE, 'device = "cuda"')]


ALIGN = """\
import torch
from faster_whisper import WhisperModel


def align(audio_path, model_size, use_cuda):
    device = "cuda" if use_cuda else "cpu"
    compute_type = "float16" if device == "cuda" else "float32"
    model = WhisperModel(model_size, device=device, compute_type=compute_type)
    fallback = WhisperModel(model_size, device="cpu", compute_type="float16")
    return model.transcribe(audio_path), fallback


def load_torch_model(name, device):
    dtype = "float16" if device == "cuda" else "float32"
    torch_dtype = torch.float16 if device == "cuda" else torch.float32
    return name, dtype, torch_dtype
"""


def test_ctranslate2_compute_type_is_no_torch_dtype(tmp_path):
    rel = "videotrans/component/textmatching.py"
    codes = _codes(tmp_path, {rel: ALIGN}, rel)
    assert "NPU202" not in codes.get(line_of(ALIGN, 'compute_type = "float16"'), set())
    assert "NPU202" not in codes.get(line_of(ALIGN, 'compute_type="float16")'), set())
    # nearest: the same conditional bound to a dtype name or to a torch dtype keeps its fp16 hint
    assert "NPU202" in codes[line_of(ALIGN, 'dtype = "float16" if')]
    assert "NPU202" in codes[line_of(ALIGN, "torch_dtype = torch.float16")]


# -- the truth of a CUDA device count as a gate (moshi's scripts/mimi_streaming_test.py) ------------------------------
STREAMING_TEST = """\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=str, default="cuda" if torch.cuda.device_count() else "cpu")
parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
args = parser.parse_args()
model = torch.nn.Linear(4, 4).to(args.device)
n_gpus = torch.cuda.device_count()
workers = "cuda:0" if n_gpus else "cpu"
if torch.cuda.device_count():
    torch.cuda.synchronize()
torch.cuda.synchronize()
"""


def _code_severities(tmp_path, files, rel):
    from auditor.runner import run_static
    from tests.static_snippets import write_tree

    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return {(f.line, f.code, f.severity) for r in run.results if r.path == rel for f in r.findings}


def test_a_cuda_device_counts_truth_is_a_cuda_gate(tmp_path):
    rel = "scripts/mimi_streaming_test.py"
    got = _code_severities(tmp_path, {rel: STREAMING_TEST}, rel)
    assert (line_of(STREAMING_TEST, 'default="cuda" if torch.cuda.device_count()'), "NPU003", "warning") in got
    assert (line_of(STREAMING_TEST, '"cuda:0" if n_gpus'), "NPU003", "warning") in got
    assert (line_of(STREAMING_TEST, "    torch.cuda.synchronize()"), "NPU002", "warning") in got
    # nearest: the probes themselves, and the same call outside the gate, keep their error
    assert (line_of(STREAMING_TEST, "n_gpus = torch.cuda.device_count()"), "NPU002", "error") in got
    assert (len(STREAMING_TEST.splitlines()), "NPU002", "error") in got, sorted(got)


# -- adapter mergers and weight importers that load, merge and save on the host (alpaca-lora, moshi) ----------------
MERGE_WEIGHTS = """\
import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(base_model, lora_model, output_dir):
    base = AutoModelForCausalLM.from_pretrained(
        base_model,
        torch_dtype=torch.float16,
        trust_remote_code=True,
        # device_map='auto'
    )
    model = PeftModel.from_pretrained(base, lora_model, torch_dtype=torch.float16)
    model = model.merge_and_unload()
    model.save_pretrained(output_dir)
    AutoTokenizer.from_pretrained(base_model).save_pretrained(output_dir)
"""

IMPORT_LORA = """\
import argparse

import torch
from safetensors.torch import save_file

from moshi.models import loaders


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="model.safetensors")
    args = parser.parse_args()
    checkpoint_info = loaders.CheckpointInfo.from_hf_repo("kyutai/moshiko-pytorch-bf16")
    lm = checkpoint_info.get_moshi(device="cpu", dtype=torch.bfloat16, fuse_lora=True)
    save_file(lm.state_dict(), args.out)


if __name__ == "__main__":
    main()
"""


def test_merge_and_import_scripts_that_save_on_the_host_have_no_dtype_hints(tmp_path):
    files = {"finetune/alpaca-lora/utils/merge_weights.py": MERGE_WEIGHTS, "scripts/import_rust_lora.py": IMPORT_LORA}
    merged = _codes(tmp_path, files, "finetune/alpaca-lora/utils/merge_weights.py")
    assert not [c for codes in merged.values() for c in codes if c in ("NPU201", "NPU202")], merged
    imported = _codes(tmp_path / "b", files, "scripts/import_rust_lora.py")
    assert "NPU201" not in imported.get(line_of(IMPORT_LORA, "dtype=torch.bfloat16"), set())


def test_a_merge_script_that_places_the_model_or_saves_nothing_keeps_its_hints(tmp_path):
    placed = MERGE_WEIGHTS.replace("# device_map='auto'", "device_map='auto',")
    unsaved = MERGE_WEIGHTS.replace("    model.save_pretrained(output_dir)\n", "").replace(
        ".save_pretrained(output_dir)", "")
    rel = "utils/merge_weights.py"
    for i, src in enumerate((placed, unsaved)):
        codes = _codes(tmp_path / str(i), {rel: src}, rel)
        assert "NPU202" in codes[line_of(src, "torch_dtype=torch.float16,")], i
