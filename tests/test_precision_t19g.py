"""Precision fix of t19g (session 19, tuned on bench/precision/tuned_t19g): in a ComfyUI node pack, the body of
`if self.DEBUG_MODE:` in a node class whose body sets `DEBUG_MODE = False` (and nothing else in the file sets it) never
runs: ComfyUI builds the node class and sets none of its attributes (Inpaint-CropAndStitch keeps its `True` variant
inside a string). Its findings are info (context `unreached`). Controls: a flag the file also sets elsewhere, and a
class that is not a node class (a library base class whose subclasses override the switch), keep their severity.

Code written afresh in the shape of that node pack, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of as _line, write_tree

PACK_INIT = """\
    from .nodes import CropNode

    NODE_CLASS_MAPPINGS = {"CropNode": CropNode}
"""

NODES = """\
    import torch
    import comfy.model_management as mm


    class CropNode:
        FUNCTION = "crop"
        DEBUG_MODE = False
    {extra}
        def crop(self, image):
            image = image.to(mm.get_torch_device())
            if self.DEBUG_MODE:
                torch.cuda.synchronize()
            return (image,)
"""


def _sync(tmp_path, extra: str = "") -> tuple[str, str]:
    src = NODES.format(extra=extra)
    root = write_tree(tmp_path / "pack", {"__init__.py": PACK_INIT, "nodes.py": src})
    line = _line(src, "torch.cuda.synchronize()")
    run = run_static([root], jobs=1)
    found = [(f.severity, (f.data or {}).get("context") or "") for r in run.results if r.path == "nodes.py"
             for f in r.findings if f.line == line]
    assert found, "the CUDA call must be reported"
    return found[0]


def test_a_debug_branch_switched_off_in_a_node_class_is_unreached(tmp_path):
    # info either way: the class attribute nothing sets true is also a switch nothing turns on (tq47a's `flag-off`,
    # read first)
    assert _sync(tmp_path) in {("info", "unreached"), ("info", "flag-off")}


def test_a_switch_the_file_sets_elsewhere_keeps_its_severity(tmp_path):
    # a setter the pack runs (pd19: one in a method nothing calls turns nothing on, tests/test_precision_pd19.py)
    extra = """
        def __init__(self):
            self.DEBUG_MODE = True
"""
    severity, context = _sync(tmp_path, extra)
    assert severity != "info" and context != "unreached"


def test_a_class_that_is_not_a_node_keeps_its_severity(tmp_path):
    src = NODES.format(extra="").replace('FUNCTION = "crop"', 'NAME = "crop"')
    root = write_tree(tmp_path / "pack", {"__init__.py": PACK_INIT, "nodes.py": src})
    line = _line(src, "torch.cuda.synchronize()")
    run = run_static([root], jobs=1)
    found = [(f.data or {}).get("context") for r in run.results if r.path == "nodes.py" for f in r.findings
             if f.line == line]
    assert found and "unreached" not in found
