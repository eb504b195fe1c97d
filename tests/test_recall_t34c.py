"""t34c (session 33): misses of the static splits test63 and test64 and test60 (TUNED): FAISS's CUDA build chosen by
name in a comparison, volksdep (a TensorRT deployment toolbox), mmcv's `wrap_fp16_model` called without its import,
an argparse `--no_autocast` that stores autocast's own state (`action='store_false'`), and an option's default list
of build dtypes. Each shape comes from the code it was missed in, with the nearest controls."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at, line_of

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# CompVis/metric-learning-divide-and-conquer lib/faissext.py: the backend picked by name reserves GPU memory for FAISS
FAISSEXT = b"""import logging

import faiss


class MemoryReserver():
    \"\"\"Reserve memory for the faiss-gpu index (backend 'faiss-gpu').\"\"\"
    def __init__(self):
        self.memory_holder = None

    def lock(self, backend):
        # reserve memory for faiss if backend is faiss-gpu
        if backend == 'faiss-gpu':
            logging.debug('Reserve some memory for FAISS')
            self.memory_holder = reserve_faiss_gpu_memory(gpu_id=0)
        else:
            self.memory_holder = None


def describe(backend):
    logging.info("backend faiss-gpu needs the CUDA build of faiss")
    return {'faiss-gpu': 'GPU index', 'faiss-cpu': 'CPU index'}.get(backend)
"""


def test_faiss_gpu_backend_compared_is_reported_and_its_data_is_not():
    found = _found(FAISSEXT)
    assert codes_at(found, line_of(FAISSEXT, "if backend == 'faiss-gpu':")) == {"NPU489"}
    for text in ("Reserve memory for the faiss-gpu", "# reserve memory", "needs the CUDA build",
                 "{'faiss-gpu': 'GPU index'"):
        assert not codes_at(found, line_of(FAISSEXT, text)), text


# Media-Smart/vedastr tools/deploy/benchmark.py: volksdep's TensorRT benchmark, imported and called
VEDASTR_BENCHMARK = b"""import argparse
import os
import sys

import torch
from volksdep.benchmark import benchmark

from tools.deploy.utils import CALIBRATORS, CalibDataset, MetricDataset, Metric
from vedastr.runners import InferenceRunner


def parse_args():
    parser = argparse.ArgumentParser(description='Inference')
    parser.add_argument('config', type=str, help='config file path')
    parser.add_argument('--dtypes', default=('fp32', 'fp16', 'int8'),
                        nargs='+', type=str, choices=['fp32', 'fp16', 'int8'],
                        help='dtypes for benchmark')
    parser.add_argument('--calibration_modes', nargs='+',
                        default=['entropy', 'entropy_2', 'minmax'], type=str,
                        choices=['entropy_2', 'entropy', 'minmax'],
                        help='calibration modes for benchmark')
    return parser.parse_args()


def main():
    args = parse_args()
    runner = InferenceRunner(deploy_cfg, common_cfg)
    model = runner.model
    dummy_input = torch.ones(1, 3, 32, 100)
    benchmark(
        model,
        shape,
        dtypes=args.dtypes,
        iters=args.iters,
        int8_calibrator=int8_calibrator,
    )
"""


def test_volksdep_import_and_call_are_tensorrt():
    found = _found(VEDASTR_BENCHMARK)
    assert "NPU409" in codes_at(found, line_of(VEDASTR_BENCHMARK, "from volksdep.benchmark import benchmark"))
    assert "NPU409" in codes_at(found, line_of(VEDASTR_BENCHMARK, "    benchmark("))


def test_option_default_list_of_dtypes_is_chosen_and_its_choices_are_not():
    found = _found(VEDASTR_BENCHMARK)
    assert "NPU202" in codes_at(found, line_of(VEDASTR_BENCHMARK, "default=('fp32', 'fp16', 'int8')"))
    assert not codes_at(found, line_of(VEDASTR_BENCHMARK, "choices=['fp32', 'fp16', 'int8']"))
    assert not codes_at(found, line_of(VEDASTR_BENCHMARK, "default=['entropy'"))


OPTION_CONTROLS = b"""import argparse
import torch

DTYPES = ('fp32', 'fp16', 'int8')
parser = argparse.ArgumentParser()
parser.add_argument('--dtypes', nargs='+', choices=['fp32', 'fp16'], default=['fp32'])
parser.add_argument('--modes', nargs='+', default=DTYPES)
args = parser.parse_args()
"""


def test_option_list_defaults_without_fp16_and_listed_names_stay_quiet():
    found = _found(OPTION_CONTROLS)
    assert not any(code == "NPU202" for codes in found.values() for code, _ in codes), found


# IDKiro/DehazeFormer train.py: `--no_autocast` stores False when given, so its value is autocast's state (on)
DEHAZEFORMER_TRAIN = b"""import argparse
import torch
from torch.cuda.amp import autocast, GradScaler

parser = argparse.ArgumentParser()
parser.add_argument('--model', default='dehazeformer-s', type=str, help='model name')
parser.add_argument('--no_autocast', action='store_false', default=True, help='disable autocast')
parser.add_argument('--no_debug', action='store_false', help='run without debug output')
args = parser.parse_args()


def train(train_loader, network, criterion, optimizer, scaler):
    for batch in train_loader:
        source_img = batch['source'].cuda()
        with autocast(args.no_autocast):
            output = network(source_img)
"""


def test_negated_autocast_option_stored_false_is_autocast_on():
    found = _found(DEHAZEFORMER_TRAIN)
    assert "NPU215" in codes_at(found, line_of(DEHAZEFORMER_TRAIN, "'--no_autocast'"))
    assert not codes_at(found, line_of(DEHAZEFORMER_TRAIN, "'--no_debug'"))


NEGATED_CONTROLS = b"""import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--no_autocast', action='store_true', help='disable autocast')
parser.add_argument('--no-autocast', action='store_false', dest='autocast', default=False)
parser.add_argument('--autocast_off', action='store_false')
args = parser.parse_args()
"""


def test_negated_autocast_options_that_default_off_stay_quiet():
    found = _found(NEGATED_CONTROLS)
    assert not any(code == "NPU215" for codes in found.values() for code, _ in codes), found


# motrixlab/ReMoDiffuse tools/visualize.py: mmcv's fp16 helper called, its import missing (OpenMMLab tool shape)
REMODIFFUSE_VISUALIZE = b"""import argparse
import mmcv
import torch
from mogen.models import build_architecture
from mmcv.runner import load_checkpoint
from mmcv.parallel import MMDataParallel


def main(cfg, args):
    model = build_architecture(cfg.model)
    fp16_cfg = cfg.get('fp16', None)
    if fp16_cfg is not None:
        wrap_fp16_model(model)
    load_checkpoint(model, args.checkpoint, map_location='cpu')
"""

OWN_WRAP_FP16 = b"""from mmcv.runner import load_checkpoint


def wrap_fp16_model(model):
    return model


def main(model, cfg):
    if cfg.get('fp16') is not None:
        wrap_fp16_model(model)
    # wrap_fp16_model(model) in a comment
    print("call wrap_fp16_model(model) first")
"""


def test_unbound_wrap_fp16_model_is_mmcvs_and_an_own_one_is_not():
    found = _found(REMODIFFUSE_VISUALIZE)
    assert ("NPU276", "warning") in found.get(line_of(REMODIFFUSE_VISUALIZE, "wrap_fp16_model(model)"), set())
    own = _found(OWN_WRAP_FP16)
    assert not any(code == "NPU276" for codes in own.values() for code, _ in codes), own
