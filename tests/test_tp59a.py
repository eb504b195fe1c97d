"""tp59a (session 59, project test166-test168): project-file readings the blind splits missed. A conda environment's
dependency list saved as requirements.txt, `cudaNN.N` conda packages, KeOps, TensorRT host sources compiled by nvcc,
programs a Makefile builds with nvcc run from scripts. Each shaped on real files, with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_findings, write_tree

# `conda env export`'s dependency list pasted into requirements.txt under a note line (`- name=version=build`,
# then its `- pip:` sub-list)
CONDA_LIST_REQUIREMENTS = """\
\"\"\" Packages and versions used to produce the results. \"\"\"
  - _libgcc_mutex=0.1=main
  - blas=1.0=mkl
  - cudatoolkit=10.1.243=h6bb024c_0
  - faiss-gpu=1.6.3=py37h1a5d453_0
  - numpy=1.18.1=py37h4f9e942_0
  - python=3.7.7=hcf32534_0_cpython
  - pytorch=1.5.0=py3.7_cuda10.1.243_cudnn7.6.3_0
  - torchvision=0.6.0=py37_cu101
  - pip:
    - tqdm==4.45.0
    - termcolor==1.1.0
"""


def test_conda_dependency_list_saved_as_requirements_is_read_as_conda_specs(tmp_path):
    found = audit_file(tmp_path, "requirements.txt", CONDA_LIST_REQUIREMENTS)
    expect_line_codes(found, {4: {"NPU018"}, 5: {"NPU440"}, 8: {"NPU018"}, 9: {"NPU018"}},
                      quiet=(1, 2, 3, 6, 7, 10, 11, 12))


def test_a_few_dashed_lines_do_not_make_a_pip_file_a_conda_list(tmp_path):
    # a pip file with two stray YAML-looking lines stays a pip file (its CUDA wheel pin still read as pip's)
    src = """\
        torch==1.5.0+cu101
        numpy==1.18.1
        scipy==1.4.1
        tqdm==4.45.0
        - blas=1.0=mkl
        - numpy=1.18.1=py37h4f9e942_0
        """
    found = audit_file(tmp_path, "requirements.txt", src)
    assert codes_of_line(found, 1) == {"NPU018"}
    assert not codes_of_line(found, 5) and not codes_of_line(found, 6)


def test_dotted_cuda_package_in_a_conda_environment(tmp_path):
    src = """\
        channels:
        - pytorch
        - dglteam
        dependencies:
        - cuda10.0
        - python=3.7.4
        - pytorch=1.3
        - numpy=1.16.4
        """
    found = audit_file(tmp_path, "environment_gpu.yml", src)
    assert codes_of_line(found, 5) == {"NPU018"}
    assert not codes_of_line(found, 6) and not codes_of_line(found, 8)


def test_pykeops_in_a_conda_export(tmp_path):
    src = """\
        # This file may be used to create an environment using:
        # $ conda create --name <env> --file <this file>
        # platform: linux-64
        numpy=1.17.4=py36h95a1406_0
        pykeops=1.3=pypi_0
        keopscore=2.2.3=pypi_0
        python=3.6.9=h265db76_0
        """
    found = audit_file(tmp_path, "requirements.txt", src)
    assert {(code, sev) for ln, code, sev in found if ln == 5} == {("NPU440", "warning")}
    assert not codes_of_line(found, 6)


TRT_RUNNER = """\
#include <iostream>
#include <vector>

#include "trt_utils.hpp"
#include "calibrator.hpp"

using nvinfer1::IBuilder;
using nvinfer1::ICudaEngine;

void build(std::string onnx) {
    auto builder = nvinfer1::createInferBuilder(gLogger);
    void* buf;
    cudaMalloc(&buf, 1024);
}
"""

TRT_MAIN = """\
// #include "NvInfer.h"
#include <opencv2/opencv.hpp>
#include <string>

#include "trt_dep.hpp"
#include "read_img.hpp"

int main(int argc, char* argv[]) {
    SegmentTrt seg;
    seg.deserialize(argv[1]);
    return 0;
}
"""

TRT_PLUGIN = """\
#include "argmax_plugin.h"
#include "kernels.hpp"

using namespace nvinfer1;

int32_t ArgMaxPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
                              void const* const* inputs, void* const* outputs, void* ws, cudaStream_t stream) noexcept {
    nvinfer1::DataType type = inputDesc[0].type;
    argMaxFunc(inputs[0], outputs[0], type, &stream);
    return 0;
}
"""


def test_tensorrt_host_sources_are_tensorrt_not_kernels(tmp_path):
    # the file's own TensorRT names come before the wrapper header's include
    found = audit_file(tmp_path, "deploy/trt_dep.cu", TRT_RUNNER)
    assert {(ln, code) for ln, code, _ in found} == {(7, "NPU935")}
    # only the wrapper's include (a commented-out NvInfer include is no include)
    found = audit_file(tmp_path, "deploy/segment.cu", TRT_MAIN)
    assert {(ln, code) for ln, code, _ in found} == {(5, "NPU935")}


def test_tensorrt_plugins_and_kernels_stay_cuda_sources(tmp_path):
    # a plugin's enqueue runs the project's kernels: those are the port
    found = audit_file(tmp_path, "plugins/argmax_plugin.cu", TRT_PLUGIN)
    assert {code for _, code, _ in found} == {"NPU372"}
    kernel = """\
        #include "NvInfer.h"
        __global__ void scale(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2.f; }
        """
    assert {code for _, code, _ in audit_file(tmp_path, "ops/scale.cu", kernel)} == {"NPU372"}
    plain = """\
        #include <cuda_runtime.h>
        void copy(float* d, const float* h, size_t n) { cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); }
        """
    assert {code for _, code, _ in audit_file(tmp_path, "ops/copy.cu", plain)} == {"NPU372"}


RENDER_MAKEFILE = """\
cuda_renderer: main.cu mpi_cuda.cu
\tnvcc -ccbin g++ -std=c++11 -m64 -I. main.cu mpi_cuda.cu -o cuda_renderer

clean:
\trm cuda_renderer
"""

RENDER_SCRIPT = """\
mkdir -p $2/outputs
python imgs2poses.py $2
cd cuda_renderer && make && cd ..
cuda_renderer/cuda_renderer $2/mpis_$3 $2/outputs/test_path.txt $2/outputs/test_vid.mp4 -1 .8 18
tools/colmap_wrapper $2
cd cuda_renderer
./cuda_renderer ../$2/mpis ../$2/path.txt out.mp4
./clean.sh
"""


def test_running_a_program_the_makefile_builds_with_nvcc(tmp_path):
    root = write_tree(tmp_path / "t", {"cuda_renderer/Makefile": RENDER_MAKEFILE,
                                       "cuda_renderer/main.cu": "__global__ void k() {}\n",
                                       "cuda_renderer/mpi_cuda.cu": "__global__ void r() {}\n",
                                       "tools/Makefile": "colmap_wrapper: wrap.cpp\n\tg++ -o colmap_wrapper wrap.cpp\n",
                                       "run.sh": RENDER_SCRIPT})
    found = tree_findings(root, "run.sh")
    expect_line_codes(found, {3: {"NPU333"}, 4: {"NPU936"}, 7: {"NPU936"}}, quiet=(1, 2, 5, 6, 8))


def test_a_program_with_no_cuda_target_is_not_reported(tmp_path):
    # the folder's Makefile builds another target with nvcc; the program run is a CPU tool of the same folder
    makefile = RENDER_MAKEFILE + "viewer: viewer.cpp\n\tg++ -o viewer viewer.cpp\n"
    root = write_tree(tmp_path / "t", {"cuda_renderer/Makefile": makefile,
                                       "run.sh": "cuda_renderer/viewer out.mp4\nbin/render out.mp4\n"})
    assert not tree_findings(root, "run.sh")


APEX_TRAINER = """\
import yaml
try:
    from apex import amp
except ImportError:
    print('install apex with cuda support for fp16')


def get_config(path):
    with open(path) as f:
        return yaml.safe_load(f)


class Trainer:
    def __init__(self, hyperparameters):
        self.lr = hyperparameters['lr']
        self.batch_size = hyperparameters['batch_size']
        self.epochs = hyperparameters['epochs']
        self.beta1 = hyperparameters['beta1']
        self.fp16 = hyperparameters['apex']

    def setup(self, model, opt):
        if self.fp16:
            model, opt = amp.initialize(model, opt, opt_level="O1")
        return model, opt
"""

APEX_CONFIG = """\
apex: {value}                       # Set True to use float16.
lr: 0.0001
batch_size: 8
epochs: 100
beta1: 0
"""


def test_an_apex_switch_the_code_reads_is_an_apex_choice(tmp_path):
    root = write_tree(tmp_path / "t", {"trainer.py": APEX_TRAINER, "configs/fp16.yaml": APEX_CONFIG.format(value="true"),
                                       "configs/fp32.yaml": APEX_CONFIG.format(value="false")})
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    by_file = {r.path: {(f.line, f.code) for f in r.findings} for r in run.results}
    assert (1, "NPU318") in by_file["configs/fp16.yaml"]
    assert not by_file["configs/fp32.yaml"]


def test_an_apex_switch_nothing_reads_stays_quiet(tmp_path):
    trainer = APEX_TRAINER.replace("self.fp16 = hyperparameters['apex']", "self.fp16 = False")
    root = write_tree(tmp_path / "t", {"trainer.py": trainer, "configs/fp16.yaml": APEX_CONFIG.format(value="true")})
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    assert not [f for r in run.results if r.path == "configs/fp16.yaml" for f in r.findings]
