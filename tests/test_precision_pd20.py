"""Precision fixes of pd20 (session 21, tuned on heldout24 after its draw).

- call_defaults: a `device=None` parameter whose CUDA choice is made in the body (`if device is None:
  self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')`, Hallo2's vendored CodeFormer
  FaceRestoreHelper) is a default like `device="cuda"`: when every caller passes the device (Hallo2's
  `pre_u_loader(..., device, ...)` hands on its own), the branch never runs here (policy (f), info).

Code written afresh in the shape of those node packs, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

HELPER = """\
    import torch


    class FaceRestoreHelper(object):
        def __init__(self, upscale_factor, face_size=512, det_model='retinaface_resnet50', device=None):
            self.upscale_factor = int(upscale_factor)
            if device is None:
                self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
            else:
                self.device = device
            self.face_size = face_size


    def load_net(path, device=None):
        device = device or torch.device("cuda")
        return torch.load(path, map_location=device)
"""

LOADER = """\
    from .helper import FaceRestoreHelper, load_net


    def pre_loader(upscale, device, model_path):
        net = load_net(model_path, device=device)
        return net, FaceRestoreHelper(upscale, face_size=512, det_model='retinaface_resnet50', device={device})
"""

PACK_INIT = """\
    from .loader import pre_loader

    NODE_CLASS_MAPPINGS = {"Loader": pre_loader}
"""


def _at(run, rel, src, text):
    line = _line(src, text)
    r = next(r for r in run.results if r.path == rel)
    return sorted((f.severity, f.data.get("context")) for f in r.findings if f.line == line and f.category == "device")


def test_a_none_default_chosen_in_the_body_is_overridden_by_every_caller(tmp_path):
    run = run_static([write_tree(tmp_path / "pass", {"__init__.py": PACK_INIT, "helper.py": HELPER,
                                                     "loader.py": LOADER.replace("{device}", "device")})], jobs=1)
    assert {s for s in _at(run, "helper.py", HELPER, "torch.device('cuda' if")} == {("info", "overridden-default")}
    assert {s for s in _at(run, "helper.py", HELPER, 'device or torch.device("cuda")')} \
        == {("info", "overridden-default")}
    # a caller that leaves the device out lets the CUDA choice through: it keeps its severity
    run = run_static([write_tree(tmp_path / "omit", {"__init__.py": PACK_INIT, "helper.py": HELPER,
                                                     "loader.py": LOADER.replace(", device={device}", "")})], jobs=1)
    assert ("warning", "cuda-available-branch") in _at(run, "helper.py", HELPER, "torch.device('cuda' if")
