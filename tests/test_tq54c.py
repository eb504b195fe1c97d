"""tq54c (session 54; TUNED on heldout68 / heldout69): defaults every caller overrides through a subclass's
`super().__init__(...)`, and the other shapes below. Each shape on code like the trees it came from, beside a control
that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

# a retrieval toolkit's CLIP encoders: the base's default is handed on by the subclass's own `__init__`
_CLIP = """
    import torch
    from transformers import CLIPModel


    class BaseClipEncoder:
        def __init__(self, model_name, device='cuda:0', l2_norm=True):
            self.device = device
            self.model = CLIPModel.from_pretrained(model_name).to(device)


    class ClipImageEncoder(BaseClipEncoder):
        def encode(self, pixels):
            return self.model.get_image_features(pixel_values=pixels.to(self.device))


    class ClipTextEncoder(BaseClipEncoder):
        def __init__(self, model_name, device='cuda:0', l2_norm=False, prefix=None):
            super().__init__(model_name, device, l2_norm)
            self.prefix = prefix


    class ClipDocumentEncoder:
        def __init__(self, model_name, device='cuda:0', multimodal=False):
            if multimodal:
                self.encoder = ClipImageEncoder(model_name, device)
            else:
                self.encoder = ClipTextEncoder(model_name, device)
"""
_CLIP_CLI = """
    from encoders.clip import ClipDocumentEncoder


    def main(args):
        return ClipDocumentEncoder(args.model, args.device)
"""


def test_base_default_handed_on_by_a_subclass_init_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"encoders/clip.py": _CLIP, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", _CLIP, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "info"


def test_base_default_a_subclass_init_lets_through_keeps_its_severity(tmp_path):
    src = _CLIP.replace("super().__init__(model_name, device, l2_norm)", "super().__init__(model_name)")
    found = dedented_tree(tmp_path, {"encoders/clip.py": src, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", src, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "error"


def test_base_called_through_super_outside_init_stays_unknown(tmp_path):
    src = _CLIP.replace("super().__init__(model_name, device, l2_norm)\n",
                        "self.reset(model_name, device)\n\n        def reset(self, model_name, device):\n"
                        "            super().__init__(model_name, device)\n")
    found = dedented_tree(tmp_path, {"encoders/clip.py": src, "encoders/cli.py": _CLIP_CLI})
    base = severity_at(found, "encoders/clip.py", src, "def __init__(self, model_name, device='cuda:0', l2_norm=True)")
    assert base["NPU003"] == "error"
