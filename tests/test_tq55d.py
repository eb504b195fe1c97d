"""tq55d (session 55; TUNED on heldout73's trees 5-8): folders of programs sorted by the hardware they need
(`gpu_pipelines/` beside `cpu_pipelines/` holding other pipelines) are no per-backend set. Each shape on code like
the trees it came from, beside a control that keeps its reading."""
from __future__ import annotations

import pytest

from tests.static_snippets import dedented_tree, severity_at

# a data-curation tree's example pipelines, each a program run as `__main__`
_ASR = """
    from curation.operators.audio import CTCForcedAlignmentSampleEvaluator


    class Pipeline:
        def __init__(self):
            self.evaluator = CTCForcedAlignmentSampleEvaluator(
                model_path="MahmoudAshraf/mms-300m-1130-forced-aligner",
                device=["cuda:3"],
                num_workers=1,
            )

        def forward(self):
            self.evaluator.run(input_key="audio")


    if __name__ == "__main__":
        Pipeline().forward()
"""
_CPU = """
    from curation.operators.image import ImageAestheticFilter


    class Pipeline:
        def __init__(self):
            self.filter = ImageAestheticFilter(threshold=0.5)

        def forward(self):
            self.filter.run(input_key="image")


    if __name__ == "__main__":
        Pipeline().forward()
"""


def test_gpu_programs_beside_other_cpu_programs_keep_their_severity(tmp_path):
    found = dedented_tree(tmp_path, {"curation/pipelines/gpu_pipelines/audio_asr_pipeline.py": _ASR,
                                     "curation/pipelines/cpu_pipelines/image_filter_aesthetic.py": _CPU})
    at = severity_at(found, "curation/pipelines/gpu_pipelines/audio_asr_pipeline.py", _ASR, '"cuda:3"')
    assert at.get("NPU003") == "error"


def test_gpu_program_beside_its_cpu_form_is_a_per_backend_member(tmp_path):
    found = dedented_tree(tmp_path, {"curation/pipelines/gpu_pipelines/audio_asr_pipeline.py": _ASR,
                                     "curation/pipelines/cpu_pipelines/audio_asr_pipeline.py": _CPU})
    at = severity_at(found, "curation/pipelines/gpu_pipelines/audio_asr_pipeline.py", _ASR, '"cuda:3"')
    assert at.get("NPU003") == "info"


# DINOv2's layers (`dinov2/layers/block.py`), copied into many trees
_DINOV2_BLOCK = """
    import os

    XFORMERS_ENABLED = os.environ.get("XFORMERS_DISABLED") is None
    try:
        if XFORMERS_ENABLED:
            from xformers.ops import fmha, scaled_index_add, index_select_cat

            XFORMERS_AVAILABLE = True
        else:
            raise ImportError
    except ImportError:
        XFORMERS_AVAILABLE = False
"""


def test_a_flag_read_from_an_attention_library_switch_is_reported_where_it_is_read(tmp_path):
    found = dedented_tree(tmp_path, {"dinov2/layers/block.py": _DINOV2_BLOCK})
    assert "NPU392" in severity_at(found, "dinov2/layers/block.py", _DINOV2_BLOCK, "os.environ.get")
    assert "NPU392" not in severity_at(found, "dinov2/layers/block.py", _DINOV2_BLOCK, "if XFORMERS_ENABLED")


# ctc-forced-aligner's `load_alignment_model` (copied by ASR / data-curation trees) and an operator that calls it
_ALIGNER = """
    import torch
    from transformers import AutoModelForCTC, AutoTokenizer
    from transformers.utils import is_flash_attn_2_available


    def load_alignment_model(
        device: str,
        model_path: str = "MahmoudAshraf/mms-300m-1130-forced-aligner",
        attn_implementation: str = None,
        dtype: torch.dtype = torch.float32,
    ):
        if attn_implementation is None:
            if (
                is_flash_attn_2_available()
                and device.startswith("cuda")
                and dtype in [torch.float16, torch.bfloat16]
            ):
                attn_implementation = "flash_attention_2"
            else:
                attn_implementation = "sdpa"
        model = AutoModelForCTC.from_pretrained(
            model_path, attn_implementation=attn_implementation, torch_dtype=dtype
        ).to(device)
        return model, AutoTokenizer.from_pretrained(model_path)
"""
_EVALUATOR = """
    import torch

    from curation.audio.alignment import load_alignment_model


    class AlignmentEvaluator:
        def __init__(self, model_path, device):
            self.model, self.tokenizer = load_alignment_model(model_path=model_path, device=device{extra})
"""


def _aligner_tree(tmp_path, extra: str) -> dict:
    return dedented_tree(tmp_path, {"curation/__init__.py": "", "curation/audio/__init__.py": "",
                                    "curation/audio/alignment.py": _ALIGNER,
                                    "curation/audio/evaluator.py": _EVALUATOR.format(extra=extra)})


def test_a_flash_attention_choice_no_caller_s_dtype_takes_is_info(tmp_path):
    found = _aligner_tree(tmp_path, "")
    assert severity_at(found, "curation/audio/alignment.py", _ALIGNER, "is_flash_attn_2_available()") \
        .get("NPU391") == "info"
    assert severity_at(found, "curation/audio/alignment.py", _ALIGNER, 'startswith("cuda")').get("NPU003") == "info"


def test_a_flash_attention_choice_a_caller_s_dtype_takes_keeps_its_warning(tmp_path):
    found = _aligner_tree(tmp_path, ", dtype=torch.float16")
    assert severity_at(found, "curation/audio/alignment.py", _ALIGNER, "is_flash_attn_2_available()") \
        .get("NPU391") == "warning"


# SAM / SAM2's automatic mask generator: the records are built from numpy fields (`data.to_numpy()`)
_MASK_GENERATOR = """
    import numpy as np
    import torch

    from sam2.utils.amg import MaskData, box_xyxy_to_xywh


    class SAM2AutomaticMaskGenerator:
        def generate(self, image: np.ndarray):
            mask_data = self._generate_masks(image)
            curr_anns = []
            for idx in range(len(mask_data["rles"])):
                ann = {
                    "bbox": box_xyxy_to_xywh(mask_data["boxes"][idx]).tolist(),
                    "predicted_iou": mask_data["iou_preds"][idx].item(),
                }
                curr_anns.append(ann)
            return curr_anns

        def predict_boxes(self, image):
            boxes = self.model(torch.as_tensor(image, device=self.device))
            out = []
            for idx in range(len(boxes)):
                out.append(box_xyxy_to_xywh(boxes[idx]).tolist())
                out.append(to_device(np.asarray(image)).tolist())
            return out

        def _generate_masks(self, image: np.ndarray) -> MaskData:
            data = MaskData()
            data.cat(self._process_crop(image))
            data.to_numpy()
            return data
"""


def test_a_helper_applied_to_a_host_array_is_a_host_value(tmp_path):
    found = dedented_tree(tmp_path, {"sam2/automatic_mask_generator.py": _MASK_GENERATOR})
    at = severity_at(found, "sam2/automatic_mask_generator.py", _MASK_GENERATOR, '"bbox"')
    assert "NPU703" not in at


def test_a_helper_applied_to_a_model_output_or_a_moving_helper_keeps_the_host_sync(tmp_path):
    found = dedented_tree(tmp_path, {"sam2/automatic_mask_generator.py": _MASK_GENERATOR})
    assert "NPU703" in severity_at(found, "sam2/automatic_mask_generator.py", _MASK_GENERATOR, "(boxes[idx])")
    assert "NPU703" in severity_at(found, "sam2/automatic_mask_generator.py", _MASK_GENERATOR, "to_device(")


# an evaluation script that shards samples over ranks and gathers result lists (its model is not torch's)
_SCORER = """
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler


    def gather_list(obj):
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, obj)
        return [x for part in gathered for x in part]


    def evaluate(dataset, ocr, distributed=True):
        if distributed and not dist.is_initialized():
            dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
        rank = dist.get_rank() if dist.is_initialized() else 0
        sampler = DistributedSampler(dataset, rank=rank, shuffle=False) if dist.is_initialized() else None
        results = [ocr.predict(sample) for sample in DataLoader(dataset, sampler=sampler, batch_size=None)]
        {extra}
        return gather_list(results)
"""


@pytest.mark.parametrize("extra, severity", [
    ("pass", "info"),                                                   # only object collectives
    ("dist.all_reduce(torch.tensor([len(results)]))", "error"),         # control: a tensor collective
])
def test_a_backend_probe_for_a_group_of_object_collectives(tmp_path, extra, severity):
    src = _SCORER.replace("{extra}", extra)
    found = dedented_tree(tmp_path, {"eval/ocr_scorer.py": src})
    assert severity_at(found, "eval/ocr_scorer.py", src, "init_process_group").get("NPU002") == severity
