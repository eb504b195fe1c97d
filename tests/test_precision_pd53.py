"""Precision fix of pd53 (session 32, tuned on heldout34's labels): code an application never reaches
(auditor/static/unreached_defs.py).

- a bare name bound by a package-relative import (`from .modules.transformation import TpsSpatialTransformerNetwork`)
  reaches the definition of that module only, when it has one: Python binds that one. An old copy of the class in
  another module (comic-translate's pororo `_modules.py` beside `modules/transformation.py`) is no longer reached by
  the name, and neither is the module-level `device = torch.device("cuda" if ...)` only that copy reads;
- a module-level value counts as imported by another file only where a file imports that name (`from x import
  device`), not where a module of the same name exists (`from modules.utils.device import pick`);
- in an application, a module nothing loads whose every definition a loaded module defines too is a stale copy
  (pororo's `modules/basenet.py`, the old home of `_modules.py`'s `Vgg16BN`), not a module a server loads by path.
Each has a control that keeps its severity. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import line_of, snippet_findings, severities_at, write_tree

APP = """\
    import sys
    from PySide6.QtWidgets import QApplication, QMainWindow
    from modules.utils.device import pick_device
    from modules.ocr.engine import OcrEngine


    class MainWindow(QMainWindow):
        def run_ocr(self, image):
            return OcrEngine(pick_device()).read(image)


    if __name__ == "__main__":
        app = QApplication(sys.argv)
        MainWindow().show()
        sys.exit(app.exec())
"""

DEVICE = """\
    def pick_device():
        return "cpu"
"""

ENGINE = """\
    from .reader.recognition import get_recognizer
    from .reader.detection import get_detector


    class OcrEngine:
        def __init__(self, device):
            self.detector = get_detector(device)
            self.recognizer = get_recognizer(device)

        def read(self, image):
            return self.recognizer(self.detector(image))
"""

LAYERS = """\
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


    class Vgg16BN(nn.Module):
        def forward(self, x):
            return x


    class GridGenerator(nn.Module):
        def forward(self, batch_size):
            grid = torch.zeros(batch_size, 2).to(device)
            torch.cuda.synchronize()
            return grid


    class TpsNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.grid = GridGenerator()

        def forward(self, x):
            return self.grid(x.size(0))
"""

TRANSFORMATION = """\
    import torch.nn as nn


    class TpsNetwork(nn.Module):
        def forward(self, x):
            return x
"""

MODEL = """\
    import torch.nn as nn
    from .blocks.transformation import TpsNetwork


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.transform = TpsNetwork()

        def forward(self, x):
            return self.transform(x)
"""

CRAFT = """\
    import torch.nn as nn
    from ._layers import Vgg16BN


    class Craft(nn.Module):
        def __init__(self):
            super().__init__()
            self.basenet = Vgg16BN()
"""

DETECTION = """\
    from .craft import Craft


    def get_detector(device):
        return Craft().to(device)
"""

RECOGNITION = """\
    from .model import Model


    def get_recognizer(device):
        return Model().to(device)
"""

BASENET = """\
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


    class Vgg16BN(nn.Module):
        def forward(self, x):
            torch.cuda.empty_cache()
            return x.to(device)
"""


def _app(tmp_path, extra: dict[str, str] | None = None):
    files = {"comic.py": APP, "modules/__init__.py": "", "modules/utils/__init__.py": "",
             "modules/utils/device.py": DEVICE, "modules/ocr/__init__.py": "", "modules/ocr/engine.py": ENGINE,
             "modules/ocr/reader/__init__.py": "", "modules/ocr/reader/_layers.py": LAYERS,
             "modules/ocr/reader/model.py": MODEL, "modules/ocr/reader/craft.py": CRAFT,
             "modules/ocr/reader/detection.py": DETECTION, "modules/ocr/reader/recognition.py": RECOGNITION,
             "modules/ocr/reader/blocks/__init__.py": "",
             "modules/ocr/reader/blocks/transformation.py": TRANSFORMATION,
             "modules/ocr/reader/blocks/basenet.py": BASENET}
    files.update(extra or {})
    return write_tree(tmp_path / "app", files)


def _contexts(root, rel: str, src: str, needle: str) -> set[str]:
    return {context for _, context in severities_at(root, rel, src, needle)}


def test_old_copy_a_relative_import_does_not_name_is_unreached(tmp_path):
    root = _app(tmp_path)
    assert severities_at(root, "modules/ocr/reader/_layers.py", LAYERS, "synchronize()") == {("info", "unreached")}


def test_module_level_device_only_the_old_copy_reads_is_unreached(tmp_path):
    """`modules/utils/device.py` names a module `device`, not the value: it imports nothing from `_layers.py`."""
    root = _app(tmp_path)
    assert severities_at(root, "modules/ocr/reader/_layers.py", LAYERS, "torch.cuda.is_available()") == \
        {("info", "unreached")}


def test_class_the_relative_import_names_stays_reached(tmp_path):
    """Control: the model imports `TpsNetwork` from `_layers` itself: its copy there runs."""
    root = _app(tmp_path, {"modules/ocr/reader/model.py": MODEL.replace(".blocks.transformation", "._layers")})
    assert "unreached" not in _contexts(root, "modules/ocr/reader/_layers.py", LAYERS, "synchronize()")


def test_relative_import_of_a_package_reexport_keeps_matching_by_name(tmp_path):
    """Control: `from .blocks import TpsNetwork` names a package whose `__init__.py` defines nothing: every
    definition of the name stays reached (the re-export is not followed)."""
    root = _app(tmp_path, {"modules/ocr/reader/model.py": MODEL.replace(".blocks.transformation", ".blocks"),
                           "modules/ocr/reader/blocks/__init__.py": "from .transformation import *\n"})
    assert "unreached" not in _contexts(root, "modules/ocr/reader/_layers.py", LAYERS, "synchronize()")


def test_value_another_file_imports_by_name_stays(tmp_path):
    """Control: a file importing `device` from `_layers` reads it."""
    root = _app(tmp_path, {"modules/ocr/reader/detection.py": DETECTION.replace(
        "from .craft import Craft", "from .craft import Craft\nfrom ._layers import device")})
    assert "unreached" not in _contexts(root, "modules/ocr/reader/_layers.py", LAYERS, "torch.cuda.is_available()")


def test_stale_copy_of_a_loaded_module_is_unreached(tmp_path):
    root = _app(tmp_path)
    assert severities_at(root, "modules/ocr/reader/blocks/basenet.py", BASENET, "empty_cache()") == \
        {("info", "unreached")}


def test_module_nothing_loads_with_a_class_of_its_own_stays(tmp_path):
    """Control: a class no loaded module defines may be loaded by path or unpickled (pd30's reading)."""
    basenet = BASENET + "\n\n    class ResNetBase(nn.Module):\n        def forward(self, x):\n            return x\n"
    root = _app(tmp_path, {"modules/ocr/reader/blocks/basenet.py": basenet})
    assert "unreached" not in _contexts(root, "modules/ocr/reader/blocks/basenet.py", basenet, "empty_cache()")


TF_TRAIN = """\
    import argparse

    import tensorflow as tf
    from tensorflow import keras


    def main():
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = keras.applications.ResNet50()
        model.fit(tf.data.Dataset.range(8))


    if __name__ == "__main__":
        main()
"""

TORCH_TRAIN = """\
    import torch
    import torch.distributed as dist


    def main():
        dist.init_process_group("nccl")
        model = torch.nn.Linear(4, 4).cuda()
        return model


    if __name__ == "__main__":
        main()
"""

SLURM = """\
    #!/bin/bash
    #SBATCH --job-name=tutorial
    #SBATCH --gres=gpu:4

    ml Stages/2024 GCC/12.3.0 OpenMPI CUDA/12 Python cuDNN/8.9.5.29-CUDA-12
    source ../../../envAI/bin/activate

    srun python -u train.py --epochs 10
"""


def _tutorials(tmp_path):
    return write_tree(tmp_path / "hpc", {
        "tutorials/tf-tutorial/train.py": TF_TRAIN, "tutorials/tf-tutorial/slurm.sh": SLURM,
        "tutorials/torch-tutorial/train.py": TORCH_TRAIN, "tutorials/torch-tutorial/slurm.sh": SLURM})


def test_job_script_beside_tensorflow_programs_is_another_frameworks(tmp_path):
    root = _tutorials(tmp_path)
    assert severities_at(root, "tutorials/tf-tutorial/slurm.sh", SLURM, "CUDA/12") == {("info", "other-framework")}


def test_job_script_beside_pytorch_programs_keeps_its_severity(tmp_path):
    """Control: the same job script beside a PyTorch `train.py`."""
    root = _tutorials(tmp_path)
    assert "other-framework" not in {c for _, c in severities_at(root, "tutorials/torch-tutorial/slurm.sh", SLURM,
                                                                 "CUDA/12")}


PROFILE_REPORT = """\
    import pandas as pd
    import torch
    from torch.profiler import ProfilerActivity, profile


    def profile_rows(model, batch):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            model(batch)
        print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=10))
        rows = []
        for event in prof.key_averages():
            rows.append({"name": event.key, "self_cuda_time_total": event.self_device_time_total,
                         "cuda_time_total": event.device_time_total})
        return pd.DataFrame(rows)


    def communication_share(df):
        expected_columns = {"name", "self_cuda_time_total"}
        if not expected_columns.issubset(df.columns):
            raise ValueError("missing columns")
        total = df["self_cuda_time_total"].sum()
        comm = df.loc[df["name"].str.contains("nccl"), "self_cuda_time_total"].sum()
        return comm / total
"""


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_profiler_column_names_that_label_the_codes_own_table_are_no_finding(engine):
    lines = {f.line for f in snippet_findings(engine, PROFILE_REPORT, "report/profiler.py")
             if f.name == "profiler-cuda-column"}
    for needle in ('"self_cuda_time_total": event', '"cuda_time_total": event', 'expected_columns = {',
                   'total = df["self', "comm = df.loc"):
        assert line_of(PROFILE_REPORT, needle) not in lines, needle


def test_profiler_column_name_passed_to_the_profiler_is_reported(engine):
    """Control: `table(sort_by="self_cuda_time_total")` is the profiler's deprecated alias."""
    lines = {f.line for f in snippet_findings(engine, PROFILE_REPORT, "report/profiler.py")
             if f.name == "profiler-cuda-column"}
    assert line_of(PROFILE_REPORT, 'sort_by="self_cuda_time_total"') in lines


SCORER = """\
    import torch
    from transformers import CLIPModel


    class ClipScorer(torch.nn.Module):
        def __init__(self, model_id):
            super().__init__()
            self.clip = CLIPModel.from_pretrained(model_id)
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            self.compute_dtype = torch.float16 if self.device.type == "cuda" else torch.float32
            self.clip.to(self.device).to(dtype=self.compute_dtype)
"""


def _compare_severities(engine, src: str) -> set[str]:
    line = line_of(src, 'self.device.type == "cuda"')
    found = {f.severity for f in snippet_findings(engine, src, "rewards.py") if f.line == line and f.symbol == "cuda"}
    assert found
    return found


def test_type_of_a_device_the_class_built_itself_is_a_warning(engine):
    assert _compare_severities(engine, SCORER) == {"warning"}


def test_type_of_a_self_device_also_set_from_a_tensor_keeps_its_error(engine):
    """Control: `self.device` also takes a parameter's device: the runtime's device type, compared with "cuda"."""
    src = SCORER + "\n        def move(self):\n            self.device = next(self.parameters()).device\n"
    assert _compare_severities(engine, src) == {"error"}


HOROVOD = """\
    import horovod.torch as hvd
    import torch


    class HorovodStrategy:
        def __init__(self):
            self.hvd = hvd
            hvd.init()

        def global_rank(self):
            return self.hvd.rank()

        def local_rank(self):
            return self.hvd.local_rank()

        def distributed(self, model, optimizer):
            hvd.broadcast_parameters(model.state_dict(), root_rank=0)
            return hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
"""


def test_horovod_rank_queries_are_info_and_its_collectives_errors(engine):
    found = {(f.line, f.severity) for f in snippet_findings(engine, HOROVOD, "strategy.py")
             if f.name == "horovod-distributed"}
    assert (line_of(HOROVOD, "self.hvd.local_rank()"), "info") in found
    assert (line_of(HOROVOD, "self.hvd.rank()"), "info") in found
    assert (line_of(HOROVOD, "hvd.DistributedOptimizer("), "error") in found
    assert (line_of(HOROVOD, "hvd.broadcast_parameters("), "error") in found


TRAINER = """\
    import torch


    class Trainer:
        def __init__(self, model, local_rank):
            self.model = model
            self.local_rank = local_rank

        def load_checkpoint(self, path):
            map_location = "cuda:%d" % self.local_rank
            checkpoint = torch.load(path, map_location={"cuda:0": map_location})
            weights = checkpoint["weights"]
            map_location = "cuda:%d" % self.local_rank
            self.model.load_state_dict(weights)
            return checkpoint["it"]

        def load_each(self, paths):
            out = []
            for path in paths:
                if out:
                    out.append(torch.load(path, map_location=target))
                target = "cuda:%d" % self.local_rank
                out.append(None)
            return out
"""


def _severities_on(engine, src: str, needle: str, nth: int = 0) -> set[str]:
    lines = [i for i, text in enumerate(src.splitlines(), 1) if needle in text]
    return {f.severity for f in snippet_findings(engine, src, "trainer.py") if f.line == lines[nth]}


def test_device_string_stored_after_its_last_read_is_info(engine):
    assert _severities_on(engine, TRAINER, 'map_location = "cuda:%d"', 1) == {"info"}


def test_device_string_read_after_it_is_stored_keeps_its_severity(engine):
    """Controls: the first store, which `torch.load` reads, and a store inside a loop whose next pass reads it."""
    assert "info" not in _severities_on(engine, TRAINER, 'map_location = "cuda:%d"', 0)
    assert "info" not in _severities_on(engine, TRAINER, 'target = "cuda:%d"')
