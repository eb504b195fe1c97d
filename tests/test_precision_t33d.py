"""Severity fixes of t33d (session 33, issue 11: error rows of the held-out precision splits whose reasons name a
lower severity; tuned on heldout30..heldout35 and dev30..dev32).

- call_defaults: the `else` of `if device is not None:` is the value a `device=None` default stands for, like the
  body of `if device is None:` (MatAnyone's `get_matanyone_model(ckpt_path, device=None)`, whose else arm does
  `.cuda()`; every caller passes the device): info when every caller in the tree passes the device (policy (f)); a
  class built through `__new__` (Pororo's `Pororo(task=..., device=...)` factory) is read like one built through
  `__init__`.
- gates: `if n_gpus < 2: print(...)` / `else: mp.spawn(demo, ...)` with `n_gpus = torch.cuda.device_count()` is a
  CUDA gate like `if torch.cuda.device_count() < 2:` (PyTorch's tensor-parallel example scripts, copied into
  llm-action): in a script, the spawned function runs only behind it (warning; the count is the error).
- gates: a device option in a `try` body that a handler (no re-raise) runs again by the same first call without it
  (MedSAM2's `try: ffmpeg.input(video, hwaccel='cuda')...run()` / `except: ffmpeg.input(video)...run()`, an ONNX
  Runtime session made with the CUDA provider first) is an attempt with a fallback: warning.

Code written afresh in the shape of those code bases, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import device_findings_at, write_tree

LOADER = """\
    import torch

    from mypkg.model import Matter


    def get_matter_model(ckpt_path, device=None) -> Matter:
        cfg = {"weights": ckpt_path}
        if device is not None:
            model = Matter(cfg).to(device).eval()
            weights = torch.load(cfg["weights"], map_location=device)
        else:  # no device given: `.cuda()` by default
            model = Matter(cfg).cuda().eval()
            weights = torch.load(cfg["weights"])
        model.load_state_dict(weights)
        return model
"""

APP = """\
    import argparse

    from mypkg.loader import get_matter_model


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cpu")
        args = parser.parse_args()
        model = get_matter_model("ckpt.pth", {arg})
        return model


    if __name__ == "__main__":
        main()
"""


def _loader_tree(root, arg: str):
    return write_tree(root, {"mypkg/__init__.py": "", "mypkg/model.py": "class Matter:\n    pass\n",
                             "mypkg/loader.py": LOADER, "app.py": APP.replace("{arg}", arg)})


def test_the_else_of_a_not_none_test_is_the_default_every_caller_overrides(tmp_path):
    run = run_static([_loader_tree(tmp_path / "pass", "args.device")], jobs=1)
    assert device_findings_at(run, "mypkg/loader.py", LOADER, "Matter(cfg).cuda()") == [("info", "overridden-default")]
    # the caller hands the device on by keyword too
    run = run_static([_loader_tree(tmp_path / "kw", "device=args.device")], jobs=1)
    assert device_findings_at(run, "mypkg/loader.py", LOADER, "Matter(cfg).cuda()") == [("info", "overridden-default")]


def test_a_caller_that_leaves_the_device_out_keeps_the_else_arm_an_error(tmp_path):
    # `get_matter_model("ckpt.pth")`: the `.cuda()` arm runs, and fails on Ascend as written
    run = run_static([write_tree(tmp_path / "omit", {
        "mypkg/__init__.py": "", "mypkg/model.py": "class Matter:\n    pass\n", "mypkg/loader.py": LOADER,
        "app.py": APP.replace("get_matter_model(\"ckpt.pth\", {arg})", "get_matter_model(\"ckpt.pth\")")})], jobs=1)
    assert device_findings_at(run, "mypkg/loader.py", LOADER, "Matter(cfg).cuda()") == [("error", None)]


def test_the_body_of_a_not_none_test_is_not_the_fallback(tmp_path):
    # the arm a passed device takes is no default: a CUDA line there keeps its severity
    loader = LOADER.replace("Matter(cfg).to(device).eval()", "Matter(cfg).to(device).eval().cuda()")
    run = run_static([write_tree(tmp_path / "body", {
        "mypkg/__init__.py": "", "mypkg/model.py": "class Matter:\n    pass\n", "mypkg/loader.py": loader,
        "app.py": APP.replace("{arg}", "args.device")})], jobs=1)
    assert device_findings_at(run, "mypkg/loader.py", loader, ".eval().cuda()") == [("error", None)]


FACTORY = """\
    from typing import Optional

    import torch


    class Reader:
        def __new__(cls, task: str, lang: str, device: Optional[str] = None, **kwargs):
            if device is not None:
                torch_device = torch.device(device)
            else:
                torch_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return TASKS[task](lang, torch_device)


    TASKS = {}
"""

WRAPPER = """\
    from .reader import Reader


    class ReaderOcr:
        def __init__(self, lang: str = "ko", device: str = "cpu", **kwargs):
            self.device = device
            self._ocr = Reader(task="ocr", lang=lang, device={device}, **kwargs)
"""


def test_a_class_built_through_new_reads_its_defaults_like_init(tmp_path):
    run = run_static([write_tree(tmp_path / "pass", {"ocr/__init__.py": "", "ocr/reader.py": FACTORY,
                                                     "ocr/main.py": WRAPPER.replace("{device}", "device")})], jobs=1)
    # (the "cuda" string and the probe: both info)
    assert set(device_findings_at(run, "ocr/reader.py", FACTORY, 'torch.device("cuda" if')) == \
        {("info", "overridden-default")}
    # a construction that leaves the device to the default: the probe's warning stays (the choice runs)
    run = run_static([write_tree(tmp_path / "omit", {"ocr/__init__.py": "", "ocr/reader.py": FACTORY,
                                                     "ocr/main.py": WRAPPER.replace(", device={device}", "")})], jobs=1)
    assert ("info", "overridden-default") not in device_findings_at(run, "ocr/reader.py", FACTORY,
                                                                    'torch.device("cuda" if')


SPAWNED = """\
    import argparse

    import torch
    import torch.multiprocessing as mp
    from torch.distributed._tensor import DeviceMesh
    from torch.distributed.tensor.parallel import parallelize_module, SequenceParallel

    from utils import cleanup, setup, ToyModel


    def demo_sp(rank, args):
        print(f"Running SP example on rank {rank}.")
        setup(rank, args.world_size)
        device_mesh = DeviceMesh("cuda", torch.arange(0, args.world_size))
        model = ToyModel().cuda(rank)
        model = parallelize_module(model, device_mesh, SequenceParallel())
        for _ in range(args.iter_nums):
            inp = torch.rand(20, 10).cuda(rank)
            model(inp).sum().backward()
        cleanup()


    if __name__ == "__main__":
        n_gpus = {count}
        parser = argparse.ArgumentParser()
        parser.add_argument("--world_size", type=int, default=n_gpus)
        parser.add_argument("--iter_nums", type=int, default=10)
        args = parser.parse_args()
        if n_gpus < 2:
            print("Requires at least 2 GPUs to run.")
        else:
            mp.spawn(demo_sp, args=(args,), nprocs=args.world_size, join=True)
"""


def test_a_function_spawned_only_when_the_named_cuda_count_suffices_is_behind_a_gate(tmp_path):
    src = SPAWNED.replace("{count}", "torch.cuda.device_count()")
    run = run_static([write_tree(tmp_path / "count", {"sp_example.py": src})], jobs=1)
    for needle in ('DeviceMesh("cuda"', "ToyModel().cuda(rank)", "torch.rand(20, 10).cuda(rank)"):
        assert device_findings_at(run, "sp_example.py", src, needle) == [("warning", "cuda-available-branch")], needle
    # the count is the line that answers differently on Ascend: it keeps its error
    assert ("error", None) in device_findings_at(run, "sp_example.py", src, "n_gpus = torch.cuda.device_count()")


def test_a_count_the_user_gives_is_no_cuda_gate(tmp_path):
    # `n_gpus` from the environment: the spawned function runs on Ascend with the count the user gives
    src = SPAWNED.replace("{count}", 'int(__import__("os").environ.get("WORLD_SIZE", "2"))')
    run = run_static([write_tree(tmp_path / "env", {"sp_example.py": src})], jobs=1)
    assert device_findings_at(run, "sp_example.py", src, 'DeviceMesh("cuda"') == [("error", None)]
    # a name bound to the count once and to something else elsewhere is no count either
    src = SPAWNED.replace("{count}", "torch.cuda.device_count()").replace(
        "        args = parser.parse_args()\n", "        args = parser.parse_args()\n        n_gpus = args.world_size\n")
    run = run_static([write_tree(tmp_path / "rebound", {"sp_example.py": src})], jobs=1)
    assert device_findings_at(run, "sp_example.py", src, 'DeviceMesh("cuda"') == [("error", None)]


RETRY = """\
    import os

    import ffmpeg
    import onnxruntime as ort
    import torch


    def extract_frames(input_video, output_dir, frame_interval):
        try:
            ffmpeg.input(input_video, hwaccel='cuda').output(
                os.path.join(output_dir, '%07d.jpg'), q=2, start_number=0,
                vf=rf'select=not(mod(n\\,{frame_interval}))', vsync='vfr'
            ).run()
        except:
            print(f"ffmpeg cuda err")
            ffmpeg.input(input_video).output(
                os.path.join(output_dir, '%07d.jpg'), q=2, start_number=0,
                vf=rf'select=not(mod(n\\,{frame_interval}))', vsync='vfr'
            ).run()


    def load_weights(path):
        try:
            state = torch.load(path, map_location="cuda:0")
        except RuntimeError:
            state = torch.load(path, map_location="cpu")
        return state


    def load_logged(path):
        try:
            loaded = torch.load(path, map_location="cuda:0")
        except RuntimeError as err:
            print(f"could not load {path} on the GPU: {err}")
            raise
        return loaded


    def pick_device(rank):
        try:
            torch.cuda.set_device(rank)
        except RuntimeError:
            torch.cuda.set_device(0)


    def load_other(path, model):
        try:
            model.load_state_dict(torch.load(path, map_location="cuda"))
        except KeyError:
            print("torch.load failed")
        return model
"""



def test_a_cuda_attempt_whose_handler_retries_the_same_call_is_a_warning(tmp_path):
    run = run_static([write_tree(tmp_path / "retry", {"frames.py": RETRY})], jobs=1)
    # (ffmpeg's `hwaccel='cuda'` names its NVDEC decoder, no torch device: no finding since t36c, heldout38)
    assert device_findings_at(run, "frames.py", RETRY, "hwaccel='cuda'") == []
    assert device_findings_at(run, "frames.py", RETRY, 'state = torch.load(path, map_location="cuda:0")') == \
        [("warning", "retried-attempt")]


def test_an_attempt_whose_handler_reraises_or_does_something_else_keeps_its_error(tmp_path):
    run = run_static([write_tree(tmp_path / "retry", {"frames.py": RETRY})], jobs=1)
    # the handler logs and re-raises: nothing falls back
    assert device_findings_at(run, "frames.py", RETRY, 'loaded = torch.load(path, map_location="cuda:0")') == \
        [("error", None)]
    # the retry is CUDA's too: on Ascend both fail, so the attempt keeps its error
    assert device_findings_at(run, "frames.py", RETRY, "torch.cuda.set_device(rank)") == [("error", None)]
    # the handler only prints (a message is no retry): the CUDA load keeps its error
    assert device_findings_at(run, "frames.py", RETRY, 'torch.load(path, map_location="cuda"))') == [("error", None)]
