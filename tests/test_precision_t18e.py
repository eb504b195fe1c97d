"""Precision fix of t18e (session 18; heldout21 is TUNED ON): ComfyUI imports a custom-node pack and runs none of its
`if __name__ == "__main__":` blocks, so in a node pack a definition only such a block calls is unreached (info,
context `unreached`) unless the pack runs that file as a script: `install.py` (ComfyUI-Manager runs it on install)
or a file a string of the pack names (`[sys.executable, "scripts/train.py", ...]`). heldout21's shape: a vendored
DDP launcher whose `__main__` calls its own `setup_dist` (torch.cuda.set_device, the NCCL process group) and runs
a module it loads by a command-line name. Code written afresh in the shape of a vendored launcher, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree, findings_on_line

PACK_INIT = """\
    from .nodes import VideoSampler

    NODE_CLASS_MAPPINGS = {"VideoSampler": VideoSampler}
"""

NODES = """\
    import os
    import subprocess
    import sys

    import comfy.model_management as mm


    class VideoSampler:
        FUNCTION = "sample"

        def sample(self, model, latents):
            return (model(latents.to(mm.get_torch_device())),)
    {extra}
"""

LAUNCH = """\

    def run_launcher(config):
        here = os.path.dirname(__file__)
        subprocess.run([sys.executable, os.path.join(here, "scripts", "ddp_launcher.py"), "--config", config])
"""

LAUNCHER = """\
    import argparse
    import importlib

    import torch
    import torch.distributed as dist


    def setup_dist(local_rank):
        if dist.is_initialized():
            return
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", init_method="env://")


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--module", type=str, default="sample_video")
        parser.add_argument("--local_rank", type=int, default=0)
        args, _ = parser.parse_known_args()
        runner = importlib.import_module(args.module)
        setup_dist(args.local_rank)
        runner.run(args)
"""

INSTALL = """\
    import subprocess
    import sys

    import torch


    def check_device():
        if torch.cuda.is_available():
            torch.cuda.set_device(0)


    if __name__ == "__main__":
        check_device()
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-r", "requirements.txt"])
"""


def _findings(tmp_path, files: dict[str, str], rel: str, text: str, snippet: str) -> set[tuple[str, str, str]]:
    root = write_tree(tmp_path / "pack", {"__init__.py": PACK_INIT, **files})
    line = _line(text, snippet)
    return findings_on_line(root, rel, line)


def test_a_main_block_the_pack_never_runs_reaches_nothing(tmp_path):
    found = _findings(tmp_path, {"nodes.py": NODES.format(extra=""), "scripts/ddp_launcher.py": LAUNCHER},
                      "scripts/ddp_launcher.py", LAUNCHER, 'dist.init_process_group("nccl"')
    assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), found


def test_a_main_block_the_pack_launches_still_reaches(tmp_path):
    found = _findings(tmp_path, {"nodes.py": NODES.format(extra=LAUNCH), "scripts/ddp_launcher.py": LAUNCHER},
                      "scripts/ddp_launcher.py", LAUNCHER, 'dist.init_process_group("nccl"')
    assert any(sev == "error" for _, sev, _ in found), found


def test_install_py_main_block_still_reaches(tmp_path):
    found = _findings(tmp_path, {"nodes.py": NODES.format(extra=""), "install.py": INSTALL},
                      "install.py", INSTALL, "torch.cuda.set_device(0)")
    assert found and not any(ctx == "unreached" for _, _, ctx in found), found


# heldout21's ADMotionDirector LoRA saver, in the same shape (written afresh): the fp16 cast only sets the file's
# storage dtype
SAVER = """\
    import torch
    from safetensors.torch import save_file


    def save_lora_for_webui(unet, text_encoder, save_path, metadata=None):
        lora_dict_fp16 = unet_dict_converter(lora_state_dict(unet), strict_mapping=True)
        lora_dict_fp16.update(text_dict_converter(lora_state_dict(text_encoder)))
        for k, v in lora_dict_fp16.items():
            lora_dict_fp16[k] = v.to(dtype=torch.float16)
        save_file(lora_dict_fp16, save_path, metadata=metadata)


    def save_half_copy(state_dict, path):
        torch.save({k: v.half() for k, v in state_dict.items()}, path)


    def save_half_model(model, path):
        torch.save(model.half().state_dict(), path)


    def cast_callers_dict(state_dict, path):
        for k, v in state_dict.items():
            state_dict[k] = v.half()
        save_file(state_dict, path)
"""


def _fp16_lines(tmp_path) -> set[int]:
    root = write_tree(tmp_path / "proj", {"lora_saver.py": SAVER})
    run = run_static([root], jobs=1)
    return {f.line for r in run.results for f in r.findings if f.code == "NPU202"}


def test_fp16_casts_only_written_to_a_file_are_dropped(tmp_path):
    lines = _fp16_lines(tmp_path)
    assert _line(SAVER, "v.to(dtype=torch.float16)") not in lines
    assert _line(SAVER, "v.half() for k, v") not in lines


def test_fp16_casts_of_the_model_or_the_callers_dict_stay(tmp_path):
    lines = _fp16_lines(tmp_path)
    # `model.half()` casts the model itself; `state_dict[k] = v.half()` changes the caller's dict, which it may use
    assert {_line(SAVER, "model.half().state_dict()"), _line(SAVER, "state_dict[k] = v.half()")} <= lines


def test_a_main_block_run_as_a_module_still_reaches(tmp_path):
    launch = LAUNCH.replace('os.path.join(here, "scripts", "ddp_launcher.py")', '"-m", "scripts.ddp_launcher"')
    found = _findings(tmp_path, {"nodes.py": NODES.format(extra=launch), "scripts/ddp_launcher.py": LAUNCHER},
                      "scripts/ddp_launcher.py", LAUNCHER, 'dist.init_process_group("nccl"')
    assert any(sev == "error" for _, sev, _ in found), found
