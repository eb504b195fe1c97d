"""t34b (session 33, TUNED on heldout36 / heldout37): false families of the held-out draws, each on code shaped like
the tree it came from, with the nearest case that keeps its finding and severity."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _values(tmp_path, files, rel, field="severity"):
    return run_values_by_line(tmp_path, files, rel, field)


# -- an extension built at run time from C++ sources written out with os.path.join (pylate's ColBERT index) ----------
INDEX_STORAGE = """\
import os
import pathlib

import torch
from torch.utils.cpp_extension import load


class IndexScorer:
    @classmethod
    def try_load_torch_extensions(cls, use_gpu):
        if hasattr(cls, "loaded_extensions") or use_gpu:
            return

        filter_pids_cpp = load(
            name="filter_pids_cpp",
            sources=[
                os.path.join(pathlib.Path(__file__).parent.resolve(), "filter_pids.cpp"),
            ],
            extra_cflags=["-O3"],
            verbose=os.getenv("COLBERT_LOAD_TORCH_EXTENSION_VERBOSE", "False") == "True",
        )
        cls.filter_pids = filter_pids_cpp.filter_pids_cpp

        here = pathlib.Path(__file__).parent
        decompress_residuals_cpp = load(name="decompress_residuals_cpp", sources=[here / "decompress_residuals.cpp"])
        cls.decompress_residuals = decompress_residuals_cpp.decompress_residuals_cpp

        cls.loaded_extensions = True

    def load_codes(self, path):
        return torch.load(path, map_location="cpu")
"""

# the same file shape with a CUDA build beside the C++ one (pylate's residual.py: packbits.cpp + packbits.cu)
RESIDUAL = """\
import os
import pathlib

import torch
from torch.utils.cpp_extension import load


class ResidualCodec:
    @classmethod
    def try_load_torch_extensions(cls, use_gpu):
        if hasattr(cls, "loaded_extensions") or not use_gpu:
            return

        here = pathlib.Path(__file__).parent.resolve()
        lookup_cpp = load(name="lookup_cpp", sources=[os.path.join(here, "lookup.cpp")])
        cls.lookup = lookup_cpp.lookup_cpp

        packbits_cpp = load(
            name="packbits_cpp",
            sources=[
                os.path.join(here, "packbits.cpp"),
                os.path.join(here, "packbits.cu"),
            ],
        )
        cls.packbits = packbits_cpp.packbits_cpp
        cls.loaded_extensions = True
"""


def test_a_cpp_only_build_with_joined_source_paths_is_info_with_its_import(tmp_path):
    rel = "pylate/indexes/search/index_storage.py"
    sev = _values(tmp_path, {rel: INDEX_STORAGE}, rel)
    assert sev.get(line_of(INDEX_STORAGE, "from torch.utils.cpp_extension import load")) == {"info"}
    assert sev.get(line_of(INDEX_STORAGE, "filter_pids_cpp = load(")) == {"info"}
    assert sev.get(line_of(INDEX_STORAGE, "cls.filter_pids = ")) == {"info"}
    assert sev.get(line_of(INDEX_STORAGE, "decompress_residuals_cpp = load(")) == {"info"}
    assert sev.get(line_of(INDEX_STORAGE, "cls.decompress_residuals = ")) == {"info"}


def test_a_build_with_a_cu_source_keeps_its_error_and_the_import_beside_it(tmp_path):
    rel = "pylate/indexes/codecs/residual.py"
    sev = _values(tmp_path, {rel: RESIDUAL}, rel)
    assert sev.get(line_of(RESIDUAL, "packbits_cpp = load(")) == {"error"}
    assert "error" in sev.get(line_of(RESIDUAL, "cls.packbits = "), set())
    assert sev.get(line_of(RESIDUAL, "from torch.utils.cpp_extension import load")) == {"error"}
    # the C++-only build of the same file is lowered on its own lines
    assert sev.get(line_of(RESIDUAL, "lookup_cpp = load(")) == {"info"}
    assert sev.get(line_of(RESIDUAL, "cls.lookup = ")) == {"info"}


def test_a_build_whose_sources_are_not_written_out_keeps_its_error(tmp_path):
    src = INDEX_STORAGE.replace('[here / "decompress_residuals.cpp"]', "sorted(here.glob('*.cpp'))")
    rel = "pylate/indexes/search/index_storage.py"
    sev = _values(tmp_path, {rel: src}, rel)
    assert sev.get(line_of(src, "decompress_residuals_cpp = load(")) == {"error"}
    assert sev.get(line_of(src, "from torch.utils.cpp_extension import load")) == {"error"}
    assert sev.get(line_of(src, "filter_pids_cpp = load(")) == {"info"}


# -- a CUDA check whose only effect is a batch size, a tolerance or AMP (lead decision 39) ----------------------------
INFINITY_E2E = """\
import pytest
import torch
from asgi_lifespan import LifespanManager
from httpx import AsyncClient

from infinity_emb import create_server
from infinity_emb.args import EngineArgs

PREFIX = "/v1_colbert"
MODEL: str = pytest.DEFAULT_COLBERT_MODEL
batch_size = 64 if torch.cuda.is_available() else 8
timeout_factor = 1.5 if not torch.cuda.is_available() else 1.0

app = create_server(
    url_prefix=PREFIX,
    engine_args_list=[EngineArgs(model_name_or_path=MODEL, batch_size=batch_size, device="auto")],
)
"""

STSB_TEST = """\
import torch
from torch.utils.data import DataLoader

from sentence_transformers import SentenceTransformer, losses


def test_train_nli_slow(nli_resource, sts_resource):
    model = SentenceTransformer("distilbert-base-uncased")
    train_dataloader = DataLoader(nli_resource, shuffle=True, batch_size=16)
    train_loss = losses.SoftmaxLoss(model=model, num_labels=3)
    model.fit(
        train_objectives=[(train_dataloader, train_loss)],
        epochs=1,
        warmup_steps=100,
        use_amp=torch.cuda.is_available(),
    )
"""

# the nearest cases: numbers that pick the device or the GPU count, a device string, AMP turned on unconditionally
DEVICE_CHOICES = """\
import torch
from transformers import pipeline
import pytorch_lightning as pl

device = 0 if torch.cuda.is_available() else -1
n_gpu = 2 if torch.cuda.is_available() else 1
pipe = pipeline("fill-mask", model="bert-base-uncased", device=1 if torch.cuda.is_available() else 2)
trainer = pl.Trainer(max_epochs=3, gpus=1 if torch.cuda.is_available() else 0)
dev = "cuda" if torch.cuda.is_available() else "cpu"
workers = 4 if torch.cuda.is_available() else 0
"""


def test_a_cuda_check_that_picks_a_batch_size_or_amp_is_a_warning(tmp_path):
    rel = "libs/infinity_emb/tests/end_to_end/test_colbert.py"
    sev = _values(tmp_path, {rel: INFINITY_E2E}, rel)
    assert sev.get(line_of(INFINITY_E2E, "batch_size = 64 if")) == {"warning"}
    assert sev.get(line_of(INFINITY_E2E, "timeout_factor = ")) == {"warning"}
    rel = "tests/test_train_stsb.py"
    sev = _values(tmp_path / "st", {rel: STSB_TEST}, rel)
    assert sev.get(line_of(STSB_TEST, "use_amp=torch.cuda.is_available()")) == {"warning"}


def test_a_cuda_check_that_picks_a_device_or_a_count_keeps_its_error(tmp_path):
    rel = "scripts/run.py"
    sev = _values(tmp_path, {rel: DEVICE_CHOICES}, rel)
    for needle in ("device = 0 if", "n_gpu = 2 if", "device=1 if", "gpus=1 if", "dev = \"cuda\" if",
                   "workers = 4 if"):
        assert "error" in sev.get(line_of(DEVICE_CHOICES, needle), set()), needle     # (the "cuda" string: warning)


# -- a table of batch sizes per device name (surya's predictors) -----------------------------------------------------
SURYA_PREDICTOR = """\
from typing import Optional

import torch

from surya.settings import settings


class LayoutPredictor:
    batch_size = settings.LAYOUT_BATCH_SIZE
    default_batch_sizes = {
        "cpu": 4,
        "mps": 4,
        "cuda": 32,
        "xla": 16,
    }
    devices = {"cpu": torch.device("cpu"), "cuda": torch.device("cuda")}
    map_location = {"cuda": "cpu"}

    def get_batch_size(self):
        batch_size = self.batch_size
        if batch_size is None:
            batch_size = self.default_batch_sizes["cpu"]
            if settings.TORCH_DEVICE_MODEL in self.default_batch_sizes:
                batch_size = self.default_batch_sizes[settings.TORCH_DEVICE_MODEL]
        return batch_size

    def device_index(self, name):
        return {"cpu": -1, "cuda": 0}[name]
"""


def test_the_cuda_entry_of_a_batch_size_table_is_a_warning(tmp_path):
    rel = "surya/layout/__init__.py"
    sev = _values(tmp_path, {rel: SURYA_PREDICTOR}, rel)
    assert sev.get(line_of(SURYA_PREDICTOR, '"cuda": 32,')) == {"warning"}
    # a table of device indices (-1: the CPU) picks a device: its "cuda" key keeps the error
    assert sev.get(line_of(SURYA_PREDICTOR, '{"cpu": -1, "cuda": 0}')) == {"error"}


# -- a flag computed from a class attribute that the tree binds to the CUDA device count (pylate's ColBERT index) -----
SETTINGS = """\
from dataclasses import dataclass

import torch

from .core_config import DefaultVal


@dataclass
class RunSettings:
    overwrite: bool = DefaultVal(False)
    rank: int = DefaultVal(0)
    nranks: int = DefaultVal(1)

    total_visible_gpus = torch.cuda.device_count()
    gpus: int = DefaultVal(total_visible_gpus)
"""

CODEC = """\
import torch

from pkg.infra.config import ColBERTConfig


class ResidualCodec:
    def __init__(self, config, centroids, avg_residual=None):
        self.use_gpu = config.total_visible_gpus > 0

        if self.use_gpu > 0:
            self.centroids = centroids.cuda().half()
        else:
            self.centroids = centroids.float()
        self.avg_residual = avg_residual
        if torch.is_tensor(self.avg_residual):
            if self.use_gpu:
                self.avg_residual = self.avg_residual.cuda().half()

    def decompress(self, codes_, residuals_):
        if self.use_gpu:
            codes_, residuals_ = codes_.cuda(), residuals_.cuda()
        return codes_, residuals_

    def place(self, config, x):
        if config.nranks > 0:
            x = x.cuda()
        return x
"""


def _colbert(settings: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/infra/__init__.py": "", "pkg/infra/config/__init__.py":
            "from .settings import RunSettings\n\n\nclass ColBERTConfig(RunSettings):\n    pass\n",
            "pkg/infra/config/core_config.py": "def DefaultVal(v):\n    return v\n",
            "pkg/infra/config/settings.py": settings, "pkg/indexing/__init__.py": "", "pkg/indexing/codec.py": CODEC}


def test_cuda_moves_behind_a_flag_from_a_device_count_attribute_are_warnings(tmp_path):
    rel = "pkg/indexing/codec.py"
    sev = _values(tmp_path, _colbert(SETTINGS), rel)
    for needle in ("centroids.cuda()", "self.avg_residual.cuda()", "codes_.cuda()"):
        assert sev.get(line_of(CODEC, needle), set()) - {"info"} == {"warning"}, needle     # (info: the .half() hint)
    # a count attribute the tree does not bind to the device count is no gate
    assert sev.get(line_of(CODEC, "x = x.cuda()")) == {"error"}


def test_a_count_attribute_also_set_on_an_instance_is_no_gate(tmp_path):
    settings = SETTINGS + "\n    def reset(self, gpus):\n        self.total_visible_gpus = len(gpus)\n"
    rel = "pkg/indexing/codec.py"
    sev = _values(tmp_path, _colbert(settings), rel)
    assert "error" in sev.get(line_of(CODEC, "centroids.cuda()"), set())
    settings = SETTINGS.replace("torch.cuda.device_count()", "len(os.environ.get('GPUS', '').split(','))")
    sev = _values(tmp_path / "env", _colbert(settings), rel)
    assert sev.get(line_of(CODEC, "codes_.cuda()")) == {"error"}
