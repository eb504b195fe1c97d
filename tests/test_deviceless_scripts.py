"""Host-sync hints in a script that names no device and builds no model (t33c, session 33; heldout35's VideoMind
`videomind/eval/eval_auto.py`): its tensors come from `torch.Tensor(...)` of JSON predictions, so `.item()` in its
loops syncs nothing (policy (e)). A library module, a script that names a device, and a script that loads a model
(whose library may place it on the GPU by itself) keep the hint."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

EVAL = """\
    import argparse

    import nncore
    import torch
    from nncore.ops import temporal_iof, temporal_iou


    def compute_iou(pred, span):
        pred_tensor = torch.Tensor(pred)
        span_tensor = torch.Tensor(span)
        return temporal_iou(pred_tensor, span_tensor)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("pred_path")
        args = parser.parse_args()
        tab_iou = 0
        for sample in nncore.load(args.pred_path):
            iou = compute_iou(sample["pred"], sample["span"])
            top = iou[0].max().item()
            tab_iou += top
            iop = temporal_iof(torch.Tensor(sample["pred"]), torch.Tensor(sample["span"]))
            tab_iou += iop[0].max().item()
        print(tab_iou)
    """

LIBRARY = EVAL.split("    if __name__")[0] + """\
    def evaluate(samples):
        total = 0
        for sample in samples:
            iou = compute_iou(sample["pred"], sample["span"])
            total += iou[0].max().item()
        return total
    """

WITH_MODEL = """\
    import sys

    from ultralytics import YOLO

    if __name__ == "__main__":
        model = YOLO(sys.argv[1])
        for result in model(sys.argv[2:]):
            print(result.boxes.xyxy.tolist())
            print(result.boxes.conf.max().item())
    """

WITH_DEVICE = EVAL.replace('pred_tensor = torch.Tensor(pred)', 'pred_tensor = torch.Tensor(pred).to("cuda")')


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_a_deviceless_script_has_no_host_sync_hints(engine):
    found = codes_by_line(engine, EVAL, "videomind/eval/eval_auto.py")
    assert "NPU703" not in found.get(line_of(EVAL, "top = iou[0].max().item()"), set())
    assert "NPU703" not in found.get(line_of(EVAL, "tab_iou += iop[0].max().item()"), set())


def test_a_library_function_with_no_device_origin_has_no_hint(engine):
    # hq39: the hint needs a device origin in the function (device_values.py); `compute_iou` builds CPU tensors
    found = codes_by_line(engine, LIBRARY, "videomind/eval/eval_auto.py")
    assert "NPU703" not in found.get(line_of(LIBRARY, "total += iou[0].max().item()"), set())


@pytest.mark.parametrize("src, needle", [(WITH_MODEL, "result.boxes.conf.max().item()"),
                                         (WITH_DEVICE, "top = iou[0].max().item()")])
def test_libraries_models_and_devices_keep_the_hint(engine, src, needle):
    assert "NPU703" in codes_by_line(engine, src, "videomind/eval/eval_auto.py").get(line_of(src, needle), set())
