"""Precision fixes of t21c (session 21, tuned on bench/precision/tuned_t21c, six ComfyUI packs and node suites).

1. A dtype's name formatted into a file name or URL chooses nothing: Video-Matting's RobustVideoMatting node
   downloads `rvm_{backbone}_{dtype}.torchscript` with `dtype="fp16" if fp16 else "fp32"`; the node's fp16 switch
   (`"fp16": ("BOOLEAN", {"default": True})`) and the `.half()` casts under it stay reported.
2. A float16 switch handed the answer of a per-device decision function chooses nothing on that line: the WAS node
   suite's diffusers loader passes `fp16=comfy.model_management.should_use_fp16()` (ComfyUI's model management
   decides per device and knows the NPU). `fp16=True` stays reported.
3. A method's host result followed into its caller: the WAS suite's vendored segment-anything builds a MaskData of
   device tensors, converts it in place (`data.to_numpy()`) before `return data`, and the automatic mask generator's
   record loop reads `mask_data["iou_preds"][idx].item()` on the numpy arrays (policy e); a static method that edits
   and returns its argument (`mask_data = self.postprocess_small_regions(mask_data, ...)`) keeps it a host value.
   A method that returns the device MaskData keeps the hint.

Code written afresh in the shape of those packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

PACK_INIT = """\
    from .matting import RobustVideoMatting

    NODE_CLASS_MAPPINGS = {"RobustVideoMatting": RobustVideoMatting}
"""

MATTING = """\
    import torch

    URL = "https://github.com/example/releases/download/v1.0.0/rvm_{backbone}_{dtype}.torchscript"


    class RobustVideoMatting:
        FUNCTION = "matting"

        @classmethod
        def INPUT_TYPES(s):
            return {"required": {
                "backbone": (["mobilenetv3", "resnet50"], {"default": "resnet50"}),
                "fp16": ("BOOLEAN", {"default": True}),
            }}

        def matting(self, frames, backbone, fp16):
            path = URL.format(backbone=backbone, dtype="fp16" if fp16 else "fp32")
            model = torch.jit.load(path)
            if fp16:
                model.half()
                frames = frames.half()
            return (model(frames),)
"""

LOADER = """\
    import comfy.diffusers_convert
    import comfy.model_management


    class DiffusersLoader:
        FUNCTION = "load_checkpoint"

        def load_checkpoint(self, model_path):
            out = comfy.diffusers_convert.load_diffusers(model_path, fp16=comfy.model_management.should_use_fp16())
            return out


    class ForcedHalfLoader:
        FUNCTION = "load_checkpoint"

        def load_checkpoint(self, model_path):
            return comfy.diffusers_convert.load_diffusers(model_path, fp16=True)
"""


def _findings(tmp_path, files: dict[str, str], path: str) -> list:
    root = write_tree(tmp_path / "pack", files)
    run = run_static([root], jobs=1)
    return [f for r in run.results if r.path == path for f in r.findings]


def test_a_dtype_name_formatted_into_a_url_is_not_a_choice(tmp_path):
    found = _findings(tmp_path, {"__init__.py": PACK_INIT, "matting.py": MATTING}, "matting.py")
    lines = {(f.line, f.code) for f in found}
    assert (_line(MATTING, "URL.format("), "NPU202") not in lines
    assert (_line(MATTING, '"fp16": ("BOOLEAN"'), "NPU247") in lines, "the node's fp16 switch is the choice"
    assert (_line(MATTING, "model.half()"), "NPU202") in lines
    assert (_line(MATTING, "frames = frames.half()"), "NPU202") in lines


def test_fp16_from_a_per_device_decision_is_not_a_switch(tmp_path):
    found = _findings(tmp_path, {"__init__.py": "", "loader.py": LOADER}, "loader.py")
    lines = {(f.line, f.code) for f in found}
    assert (_line(LOADER, "should_use_fp16()"), "NPU247") not in lines
    assert (_line(LOADER, "fp16=True"), "NPU247") in lines


AMG = """\
    import torch


    class MaskData:
        def __init__(self, **kwargs):
            self._stats = dict(kwargs)

        def __getitem__(self, key):
            return self._stats[key]

        def to_numpy(self):
            for k, v in self._stats.items():
                if isinstance(v, torch.Tensor):
                    self._stats[k] = v.detach().cpu().numpy()


    class MaskGenerator:
        def __init__(self, model, min_area=0):
            self.model = model
            self.min_area = min_area

        def generate(self, image):
            mask_data = self._generate_masks(image)
            if self.min_area > 0:
                mask_data = self.postprocess_small_regions(mask_data, self.min_area)
            records = []
            for idx in range(len(mask_data["iou_preds"])):
                records.append({
                    "predicted_iou": mask_data["iou_preds"][idx].item(),
                    "point_coords": [mask_data["points"][idx].tolist()],
                })
            return records

        def generate_on_device(self, image):
            mask_data = self._device_masks(image)
            scores = []
            for idx in range(4):
                scores.append(mask_data["iou_preds"][idx].item())
            return scores

        def _generate_masks(self, image):
            data = self._device_masks(image)
            data.to_numpy()
            return data

        def _device_masks(self, image):
            iou, points = self.model(image.to("npu"))
            return MaskData(iou_preds=iou, points=points)

        @staticmethod
        def postprocess_small_regions(mask_data, min_area):
            if min_area == 0:
                return mask_data
            return mask_data
"""


def test_a_mask_record_loop_over_a_method_s_numpy_result_is_on_the_host(tmp_path):
    found = _findings(tmp_path, {"__init__.py": "", "amg.py": AMG}, "amg.py")
    lines = {(f.line, f.code) for f in found}
    assert (_line(AMG, '"predicted_iou": mask_data'), "NPU703") not in lines
    assert (_line(AMG, '"point_coords": [mask_data'), "NPU703") not in lines
    assert (_line(AMG, "scores.append(mask_data"), "NPU703") in lines, "the device MaskData keeps its hint"
