"""Precision fixes of pd17 (session 20, tuned on heldout23 after its draw), in auditor/static/call_defaults.py:

- a parameter whose default is a false constant and that no call in the tree turns on: DepthCrafter's pipeline
  `__call__(..., track_time: bool = False)` times its stages with `torch.cuda.Event` / `torch.cuda.synchronize()`
  under `if track_time:`, and the node's one call passes `track_time=False`: the branch does not run in this tree,
  so its findings are info (context `flag-off`, policy (f)'s reasoning). A call that turns it on, or passes the
  flag's position, keeps the error;
- a construction passing a local (BrushNet's `IPAdapter(..., device=device)` with `device = mm.get_torch_device()`)
  or a name positionally (Sonic's `AlignImage(device, det_path=...)`) overrides the class's `device="cuda"` default;
- in a ComfyUI node pack, a `__main__` self-test (Sonic's yoloface.py `YoloFace(pt_path=...)`) is not a caller:
  ComfyUI runs no file of the pack as a script. Outside a node pack the same call lets the default through.

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

PACK_INIT = """\
    from .nodes import DepthNode

    NODE_CLASS_MAPPINGS = {"DepthNode": DepthNode}
"""

PIPELINE = """\
    import torch


    class DepthPipeline:
        def __init__(self, unet):
            self.unet = unet

        @torch.no_grad()
        def __call__(self, video, height=576, window_size=110, track_time: bool = False):
            if track_time:
                start_event = torch.cuda.Event(enable_timing=True)
                start_event.record()
            latents = self.unet(video)
            if track_time:
                torch.cuda.synchronize()
            return latents
"""

NODES = """\
    import torch
    import comfy.model_management as mm

    from .pipeline import DepthPipeline
    from .align import AlignImage


    class DepthNode:
        FUNCTION = "process"

        def process(self, unet, images, yolo_ckpt):
            device = mm.get_torch_device()
            face_det = AlignImage(device, det_path=yolo_ckpt)
            pipe = DepthPipeline(unet)
            with torch.inference_mode():
                return pipe(images.to(device), window_size=110, track_time={flag}), face_det
"""

ALIGN = """\
    from .yoloface import YoloFace


    class AlignImage(object):
        def __init__(self, device='cuda', det_path='checkpoints/yoloface_v5m.pt'):
            self.facedet = YoloFace(pt_path=det_path, confThreshold=0.5, device=device)
"""

YOLOFACE = """\
    import torch


    class YoloFace():
        def __init__(self, pt_path='checkpoints/yoloface_v5m.pt', confThreshold=0.5, device='cuda'):
            self.device = torch.device(device)
            self.model = torch.jit.load(pt_path).to(self.device)


    if __name__ == '__main__':
        yoloface = YoloFace(pt_path='../checkpoints/yoloface_v5m.pt')
"""


def _pack(root, flag="False", pack=True):
    files = {"nodes.py": NODES.replace("{flag}", flag), "pipeline.py": PIPELINE, "align.py": ALIGN,
             "yoloface.py": YOLOFACE}
    files["__init__.py"] = PACK_INIT if pack else ""
    return run_static([write_tree(root, files)], jobs=1)


def _at(run, rel, src, text):
    line = _line(src, text)
    r = next(r for r in run.results if r.path == rel)
    return [(f.severity, f.data.get("context")) for f in r.findings if f.line == line and f.category == "device"]


def test_a_timing_flag_no_call_turns_on_is_info(tmp_path):
    run = _pack(tmp_path / "off")
    for text in ("torch.cuda.Event(", "torch.cuda.synchronize()"):
        assert _at(run, "pipeline.py", PIPELINE, text) == [("info", "flag-off")], text
    finding = next(f for r in run.results if r.path == "pipeline.py" for f in r.findings)
    assert "track_time" in finding.message and "callers outside this tree" in finding.message
    # a call that turns the flag on: the branch runs, the error stays
    run = _pack(tmp_path / "on", flag="True")
    assert _at(run, "pipeline.py", PIPELINE, "torch.cuda.Event(") == [("error", None)]
    run = _pack(tmp_path / "user", flag="self.timing")
    assert _at(run, "pipeline.py", PIPELINE, "torch.cuda.synchronize()") == [("error", None)]


def test_a_module_function_flag_passed_by_position_stays(tmp_path):
    lib = """\
        import torch


        def denoise(model, x, profile=False):
            if profile:
                torch.cuda.synchronize()
            return model(x)
        """
    quiet = "from .lib import denoise\n\n\ndef run(model, x):\n    return denoise(model, x)\n"
    loud = "from .lib import denoise\n\n\ndef run(model, x):\n    return denoise(model, x, True)\n"
    for name, caller, severity in (("quiet", quiet, "info"), ("loud", loud, "error")):
        run = run_static([write_tree(tmp_path / name, {"pkg/__init__.py": "", "pkg/lib.py": lib,
                                                       "pkg/run.py": caller})], jobs=1)
        assert [s for s, _ in _at(run, "pkg/lib.py", lib, "torch.cuda.synchronize()")] == [severity], name


def test_locals_positional_names_and_a_node_packs_self_test_override_a_default(tmp_path):
    run = _pack(tmp_path / "pack")
    assert _at(run, "align.py", ALIGN, "def __init__(self, device='cuda'") == [("info", "overridden-default")]
    assert _at(run, "yoloface.py", YOLOFACE, "def __init__(self, pt_path") == [("info", "overridden-default")]
    # not a node pack: the file may run as a script, and its self-test lets the default through
    run = _pack(tmp_path / "lib", pack=False)
    assert _at(run, "yoloface.py", YOLOFACE, "def __init__(self, pt_path") == [("error", None)]


def test_a_gate_on_a_name_bound_to_the_cuda_device_count(tmp_path):
    """GPT-SoVITS's finetune.py (heldout23): `ngpu = torch.cuda.device_count()`, then `if torch.cuda.is_available()
    or ngpu != 0: for i in range(ngpu): torch.cuda.get_device_properties(i)`: both operands are 0 / False on Ascend,
    so the body is behind a CUDA gate (warning; the gate is the error). A parameter of the same name is not the
    device count."""
    src = """\
        import torch

        ngpu = torch.cuda.device_count()
        mem = []
        if torch.cuda.is_available() or ngpu != 0:
            for i in range(ngpu):
                mem.append(int(torch.cuda.get_device_properties(i).total_memory / 1024 ** 3))
        """
    param = """        import torch


        def report(ngpu):
            if torch.cuda.is_available() or ngpu != 0:
                print(torch.cuda.get_device_name(0))
        """
    run = run_static([write_tree(tmp_path / "t", {"finetune.py": src, "report.py": param})], jobs=1)

    def severities(rel):
        r = next(r for r in run.results if r.path == rel)
        return {f.line: f.severity for f in r.findings if f.code == "NPU002"}

    assert severities("finetune.py")[_line(src, "get_device_properties")] == "warning"
    assert severities("finetune.py")[_line(src, "if torch.cuda.is_available() or ngpu != 0:")] == "error"
    assert severities("report.py")[_line(param, "get_device_name")] == "error"


def test_a_branch_on_an_offload_hook_nothing_sets(tmp_path):
    """BrushNet's and PowerPaint's pipelines (heldout23): `torch.cuda.empty_cache()` under `if hasattr(self,
    "final_offload_hook") and self.final_offload_hook is not None:`, the hook older diffusers releases set; nothing
    in the pack sets it: info (context `unset-attribute`). A tree that sets the hook (a vendored older diffusers)
    keeps the error."""
    pipeline = """\
        import torch
        from diffusers import StableDiffusionPipeline


        class StableDiffusionBrushNetPipeline(StableDiffusionPipeline):
            def __call__(self, prompt, image):
                latents = self.unet(prompt, image)
                if hasattr(self, "final_offload_hook") and self.final_offload_hook is not None:
                    self.unet.to("cpu")
                    torch.cuda.empty_cache()
                return latents
        """
    setter = """\
        class OffloadMixin:
            def enable_model_cpu_offload(self, hook):
                self.final_offload_hook = hook
        """

    def severity(root, files):
        run = run_static([write_tree(root, files)], jobs=1)
        r = next(r for r in run.results if r.path == "pipeline.py")
        return [(f.severity, f.data.get("context")) for f in r.findings if f.line == _line(pipeline, "empty_cache")]

    assert severity(tmp_path / "unset", {"pipeline.py": pipeline}) == [("info", "unset-attribute")]
    assert severity(tmp_path / "set", {"pipeline.py": pipeline, "offload.py": setter}) == [("error", None)]


def test_uses_of_a_device_chosen_in_an_if_else_with_a_fallback(tmp_path):
    """GPT-SoVITS's inference_webui.py (heldout23): `if torch.cuda.is_available(): device = "cuda"` / `else: device =
    "cpu"`, then `vq_model.to(device)`: the choice with its fallback, like `"cuda" if ... else "cpu"` (t11y); the
    gate is reported, its uses are not the lines to port. Since lead decision 4 (session 21) a CUDA value set in an
    `if` with no fallback has no findings on its uses either."""
    src = """\
        import torch

        if torch.cuda.is_available():
            device = "cuda"
        else:
            device = "cpu"


        def load(model):
            return model.to(device)
        """
    no_fallback = """\
        import torch

        if torch.cuda.is_available():
            device = "cuda"


        def load(model):
            return model.to(device)
        """
    run = run_static([write_tree(tmp_path / "t", {"webui.py": src, "other.py": no_fallback})], jobs=1)

    def lines(rel):
        return {f.line for r in run.results if r.path == rel for f in r.findings if f.code == "NPU003"}

    assert _line(src, "model.to(device)") not in lines("webui.py")
    assert _line(src, 'device = "cuda"') in lines("webui.py")
    # lead decision 4 (session 21): with no fallback too, the use is not a finding of its own; the choice is
    assert _line(no_fallback, "model.to(device)") not in lines("other.py")
    assert _line(no_fallback, 'device = "cuda"') in lines("other.py")
