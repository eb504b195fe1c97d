"""Precision fix of pd21 (session 21, tuned on heldout25's labels): classes a ComfyUI node pack registers in a
name-keyed registry and never builds. basicsr's `@ARCH_REGISTRY.register()` (mmengine's `@MODELS.register_module()`)
keys the class by its own name, so the class runs only where something spells that name (`ARCH_REGISTRY.get("CodeFormer")`,
a config's `type:`): reactor-node's vendored r_basicsr registers a dozen archs and models and builds only CodeFormer.
Findings there are info, context `unreached`, never dropped. Each case has a control that keeps its error.

Code written afresh in the shape of that node pack, not copied."""
from __future__ import annotations

from tests.test_precision_pd18 import _at, _unreached

REGISTRY = """\
    class Registry:
        def __init__(self, name):
            self._name = name
            self._obj_map = {}

        def register(self, obj=None, suffix=None):
            def deco(cls):
                self._obj_map[cls.__name__ if suffix is None else f"{cls.__name__}_{suffix}"] = cls
                return cls
            return deco

        def get(self, name):
            return self._obj_map[name]


    ARCH_REGISTRY = Registry("arch")
    MODEL_REGISTRY = Registry("model")
"""

# the vendored package imports every module of the folder by a computed name, so each registration runs
SCAN = """\
    import importlib
    from os import path as osp

    from sr.utils import scandir

    folder = osp.dirname(osp.abspath(__file__))
    names = [osp.splitext(osp.basename(v))[0] for v in scandir(folder) if v.endswith("_arch.py")]
    modules = [importlib.import_module(f"sr.archs.{name}") for name in names]
"""

UTILS = """\
    import os


    def scandir(folder):
        return os.listdir(folder)
"""

VIDEO_ARCH = """\
    import torch
    import torch.nn as nn

    from sr.registry import ARCH_REGISTRY


    @ARCH_REGISTRY.register({key})
    class VideoNet(nn.Module):
        def forward(self, x):
            flow = x.new_zeros(1).cuda()
            torch.cuda.empty_cache()
            return x + flow
"""

FACE_ARCH = """\
    import torch
    import torch.nn as nn

    from sr.registry import ARCH_REGISTRY


    @ARCH_REGISTRY.register()
    class FaceNet(nn.Module):
        def forward(self, x):
            torch.cuda.empty_cache()
            return x
"""

MODELS_INIT = """\
    from sr.registry import MODEL_REGISTRY


    def build_model(opt):
        return MODEL_REGISTRY.get(opt["model_type"])(opt)
"""

BASE_MODEL = """\
    import torch
    from torch.nn.parallel import DataParallel


    class BaseModel:
        def __init__(self, opt):
            self.device = torch.device("cuda" if opt["num_gpu"] != 0 else "cpu")

        def model_to_device(self, net):
            net = net.to(self.device)
            return DataParallel(net)
"""

SR_MODEL = """\
    from sr.models.base_model import BaseModel
    from sr.registry import MODEL_REGISTRY


    @MODEL_REGISTRY.register()
    class SRModel(BaseModel):
        def __init__(self, opt):
            super().__init__(opt)
            self.net = self.model_to_device(opt["net"])
"""

TRAIN = """\
    from sr.models import build_model


    def train_pipeline(opt):
        return build_model(opt)


    if __name__ == "__main__":
        train_pipeline({"model_type": "SRModel"})
"""

USE = "from .sr.registry import ARCH_REGISTRY"
CALL = 'net = ARCH_REGISTRY.get("FaceNet")()'


# the vendored package's `__init__.py` star-imports its folders (basicsr's), so importing sr.registry loads them all
SR_INIT = """\
    from .archs import *
    from .models import *
    from .train import *
    from .utils import *
"""


def _pack(video_key: str = "", extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"sr/__init__.py": SR_INIT, "sr/utils.py": UTILS, "sr/registry.py": REGISTRY, "sr/archs/__init__.py": SCAN,
            "sr/archs/video_arch.py": VIDEO_ARCH.format(key=video_key), "sr/archs/face_arch.py": FACE_ARCH,
            "sr/models/__init__.py": MODELS_INIT, "sr/models/base_model.py": BASE_MODEL,
            "sr/models/sr_model.py": SR_MODEL, "sr/train.py": TRAIN, **(extra or {})}


def test_a_registered_arch_nothing_gets_by_name_is_unreached(tmp_path):
    files = _pack()
    for needle in ("x.new_zeros(1).cuda()", "torch.cuda.empty_cache()"):
        found = _at(tmp_path, files, "sr/archs/video_arch.py", needle, USE, CALL)
        assert _unreached(found), (needle, found)


def test_the_arch_the_pack_gets_by_name_keeps_its_error(tmp_path):
    found = _at(tmp_path, _pack(), "sr/archs/face_arch.py", "torch.cuda.empty_cache()", USE, CALL)
    assert ("error", "") in found, found


def test_a_model_built_only_by_training_pipelines_leaves_its_base_class_unreached(tmp_path):
    files = _pack()
    for rel, needle in (("sr/models/base_model.py", '"cuda" if'), ("sr/models/base_model.py", "DataParallel(net)")):
        found = _at(tmp_path, files, rel, needle, USE, CALL)
        assert _unreached(found), (needle, found)


def test_an_arch_a_config_names_keeps_its_error(tmp_path):
    files = _pack(extra={"options/video.yml": "network_g:\n  type: VideoNet\n  num_feat: 64\n"})
    found = _at(tmp_path, files, "sr/archs/video_arch.py", "torch.cuda.empty_cache()", USE, CALL)
    assert ("error", "") in found, found


def test_an_arch_registered_under_an_explicit_key_stays_registered(tmp_path):
    found = _at(tmp_path, _pack(video_key='"vsr"'), "sr/archs/video_arch.py", "torch.cuda.empty_cache()", USE, CALL)
    assert ("error", "") in found, found


def test_a_registered_model_the_node_builds_keeps_its_base_class(tmp_path):
    call = 'model = build_model({"model_type": "SRModel"})'
    found = _at(tmp_path, _pack(), "sr/models/base_model.py", "DataParallel(net)", "from .sr.models import build_model",
                call)
    assert ("error", "") in found, found


# --- a `__main__` self-test of a module the pack imports, whose stem another repository's script string names
# (heldout25: 3D-Pack's Unique3D render.py; PartCrafter's preprocess launches its own datasets/preprocess/render.py)

RENDER = """\
    import torch


    class NormalsRenderer:
        def render(self, vertices):
            return vertices


    if __name__ == "__main__":
        vertices = torch.tensor([[0, 0, 0], [0, 0, 1]], device="cuda", dtype=torch.float32)
        print(NormalsRenderer().render(vertices))
"""

PREPROCESS = """\
    import os


    def render_all(paths):
        for path in paths:
            os.system(f"python {script} --input {{path}}")
"""


def _renders(script: str) -> dict[str, str]:
    return {"unique3d/__init__.py": "", "unique3d/mesh/__init__.py": "", "unique3d/mesh/render.py": RENDER,
            "partcrafter/datasets/preprocess/render.py": RENDER,
            "partcrafter/datasets/preprocess/preprocess.py": PREPROCESS.format(script=script)}


RENDER_USE = ("from .unique3d.mesh.render import NormalsRenderer\n"
              "    from .partcrafter.datasets.preprocess.preprocess import render_all")     # NODES indents by four
RENDER_CALL = "x = NormalsRenderer().render(render_all([x]))"


def test_a_script_string_with_folders_runs_only_the_script_it_spells(tmp_path):
    files = _renders("datasets/preprocess/render.py")
    found = _at(tmp_path, files, "unique3d/mesh/render.py", 'device="cuda"', RENDER_USE, RENDER_CALL)
    assert _unreached(found), found
    found = _at(tmp_path / "b", files, "partcrafter/datasets/preprocess/render.py", 'device="cuda"', RENDER_USE,
                RENDER_CALL)
    assert ("error", "") in found, found


def test_a_bare_script_name_still_runs_every_script_of_that_name(tmp_path):
    found = _at(tmp_path, _renders("render.py"), "unique3d/mesh/render.py", 'device="cuda"', RENDER_USE, RENDER_CALL)
    assert ("error", "") in found, found


# --- a root `__init__.py` that registers every class of a module it loads by name (heldout25: 3D-Pack's
# `importlib.import_module(f".{nodes_filename}")` + `inspect.getmembers(module, inspect.isclass)`): the classes are
# reached, and what they call keeps its severity

MEMBERS_INIT = """\
    import importlib
    import inspect

    NODE_CLASS_MAPPINGS = {}
    nodes_filename = "gen_nodes"
    module = importlib.import_module(f".{nodes_filename}", package=__name__)
    for name, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ == module.__name__:
            NODE_CLASS_MAPPINGS[f"[Gen] {name}"] = cls
"""

GEN_NODES = """\
    import torch


    class Preview:
        FUNCTION = "run"

        def run(self, x):
            torch.cuda.empty_cache()
            return (x,)
"""


def test_classes_a_root_init_lists_with_getmembers_are_reached(tmp_path):
    found = _at(tmp_path, {"gen_nodes.py": GEN_NODES}, "gen_nodes.py", "torch.cuda.empty_cache()", init=MEMBERS_INIT)
    assert ("error", "") in found, found
