"""fix46b (session 46, review of int46): NPU955 (DALI data nodes' `.gpu()`) is no module's function (`mx.gpu(0)`
beside DALI's MXNet plug-in), and NPU050's `gpus=` is read in Lightning's Trainer only (not a project's own
`Trainer`). Each with its probe as the control: the DALI node and the Lightning Trainer stay found."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import code_severity_by_line, codes_by_line, line_of

ENGINE = StaticEngine(load_rules())

# DALI's ImageNet example for MXNet: a pipeline, its iterator, and MXNet's own GPU context
DALI_MXNET = '''import mxnet as mx
import nvidia.dali.fn as fn
from nvidia.dali.pipeline import pipeline_def
from nvidia.dali.plugin.mxnet import DALIClassificationIterator


@pipeline_def
def train_pipe(data_dir, crop):
    jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, name="Reader")
    images = fn.decoders.image(jpegs, device="mixed")
    images = fn.crop_mirror_normalize(images, crop=(crop, crop))
    return images, labels.gpu()


ctx = [mx.gpu(i) for i in range(4)]
net = mx.gluon.model_zoo.vision.resnet50_v1(ctx=mx.gpu(0))
train_iter = DALIClassificationIterator(train_pipe("train", 224, batch_size=64, num_threads=4, device_id=0))
'''


def test_module_gpu_is_no_dali_node():
    found = codes_by_line(ENGINE, DALI_MXNET)
    assert "NPU955" in found.get(line_of(DALI_MXNET, "labels.gpu()"), set())       # the control: a data node
    assert "NPU955" not in found.get(line_of(DALI_MXNET, "ctx = [mx.gpu(i)"), set())
    assert "NPU955" not in found.get(line_of(DALI_MXNET, "ctx=mx.gpu(0)"), set())


# Lightning 1.x scripts (`gpus=` by its three import spellings) beside a project's own `Trainer` class
LIGHTNING_TRAIN = '''import pytorch_lightning as pl
import lightning as L
from lightning.pytorch import Trainer as LTrainer
from mylib.trainer import Trainer

pl_trainer = pl.Trainer(gpus=1, max_epochs=5)
l_trainer = L.Trainer(gpus=2, precision=32)
direct = LTrainer(gpus=args.gpus)
own = Trainer(model, train_loader, gpus=args.gpus)
own_literal = Trainer(model, gpus=2)
'''


def test_trainer_gpus_is_lightnings_only():
    found = codes_by_line(ENGINE, LIGHTNING_TRAIN)
    for needle in ("pl.Trainer(gpus=1", "L.Trainer(gpus=2", "LTrainer(gpus="):     # the controls: Lightning's
        assert "NPU050" in found.get(line_of(LIGHTNING_TRAIN, needle), set()), needle
    assert "NPU050" not in found.get(line_of(LIGHTNING_TRAIN, "own = Trainer("), set())
    assert "NPU050" not in found.get(line_of(LIGHTNING_TRAIN, "own_literal = Trainer("), set())


# py-faster-rcnn's NMS build (the `locate_cuda()` template): without nvcc it raises EnvironmentError
LOCATE_CUDA_SETUP = b'''import os
from os.path import join as pjoin
from setuptools import setup
from distutils.extension import Extension
import numpy as np


def find_in_path(name, path):
    for dir in path.split(os.pathsep):
        binpath = pjoin(dir, name)
        if os.path.exists(binpath):
            return os.path.abspath(binpath)
    return None


def locate_cuda():
    default_path = pjoin(os.sep, 'usr', 'local', 'cuda', 'bin')
    nvcc = find_in_path('nvcc', os.environ['PATH'] + os.pathsep + default_path)
    if nvcc is None:
        raise EnvironmentError('The nvcc binary could not be located in your $PATH.')
    home = os.path.dirname(os.path.dirname(nvcc))
    return {'home': home, 'nvcc': nvcc, 'include': pjoin(home, 'include'), 'lib64': pjoin(home, 'lib64')}


CUDA = locate_cuda()
setup(name='nms', ext_modules=[Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'], library_dirs=[CUDA['lib64']],
      libraries=['cudart'], include_dirs=[np.get_include(), CUDA['include']])])
'''


def test_toolkit_folder_fails_as_its_siblings():
    found = code_severity_by_line(ENGINE, LOCATE_CUDA_SETUP, "lib/setup.py")
    assert found[line_of(LOCATE_CUDA_SETUP, "default_path = pjoin")].get("NPU956") == "error"
    assert found[line_of(LOCATE_CUDA_SETUP, "library_dirs=[CUDA")].get("NPU353") == "error"      # the sibling
