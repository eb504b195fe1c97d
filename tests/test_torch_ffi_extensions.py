"""t31c (issue 14, session 31; tuned on test53): the pre-1.0 `torch.utils.ffi` extension build (faster-rcnn.pytorch's
nms / roi_align build.py, copied into hand_object_detector, neural-motifs, TDAN-VSR and many detection trees): the
import, the `create_extension(` call and the extension's CUDA files are NPU895 (kernel); its C sources, the flag and
the same file names outside such a build are not."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import codes_at, finding_keys_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# hand_object_detector lib/model/roi_align/build.py (faster-rcnn.pytorch's template)
_BUILD = '''
from __future__ import print_function
import os
import torch
from torch.utils.ffi import create_extension

sources = ['src/roi_align.c']
headers = ['src/roi_align.h']
extra_objects = []
defines = []
with_cuda = False

this_file = os.path.dirname(os.path.realpath(__file__))
print(this_file)

if torch.cuda.is_available():
    print('Including CUDA code.')
    sources += ['src/roi_align_cuda.c']
    headers += ['src/roi_align_cuda.h']
    defines += [('WITH_CUDA', None)]
    with_cuda = True

    extra_objects = ['src/roi_align_kernel.cu.o']
    extra_objects = [os.path.join(this_file, fname) for fname in extra_objects]

ffi = create_extension(
    '_ext.roi_align',
    headers=headers,
    sources=sources,
    define_macros=defines,
    relative_to=__file__,
    with_cuda=with_cuda,
    extra_objects=extra_objects
)

if __name__ == '__main__':
    ffi.build()
'''

# a torch.utils.cpp_extension setup.py naming a CUDA header it depends on: not the ffi builder
_CPP_SETUP = '''
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name='nms_cpu',
    ext_modules=[CppExtension('nms_cpu', sources=['src/nms_cpu.cpp'], depends=['src/nms_cuda.h'])],
    cmdclass={'build_ext': BuildExtension},
)
'''


def test_ffi_build_lines_flagged(engine):
    found = finding_keys_by_line(engine, _BUILD, "lib/model/roi_align/build.py")
    for needle in ("from torch.utils.ffi import create_extension", "sources += ['src/roi_align_cuda.c']",
                   "headers += ['src/roi_align_cuda.h']", "extra_objects = ['src/roi_align_kernel.cu.o']",
                   "ffi = create_extension("):
        assert "NPU895" in codes_at(found, line_of(_BUILD, needle)), needle


def test_ffi_build_cpu_lines_not_flagged(engine):
    found = finding_keys_by_line(engine, _BUILD, "lib/model/roi_align/build.py")
    for needle in ("sources = ['src/roi_align.c']", "headers = ['src/roi_align.h']", "ffi.build()",
                   "print('Including CUDA code.')"):
        assert not found.get(line_of(_BUILD, needle)), needle


def test_cuda_file_names_outside_ffi_build_not_flagged(engine):
    found = finding_keys_by_line(engine, _CPP_SETUP, "setup.py")
    assert "NPU895" not in {code for line in found for code in codes_at(found, line)}
