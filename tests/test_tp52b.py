"""tp52b (session 52, project test147): families the project-file readers missed on session 51's blind split test147
(LLM serving, OCR, speech trees). Recall: config keys that pick CUTLASS GEMM kernels by their tile tags or library
names (NPU988, NanoFlow's `gemm_op_tag` lists); a `cmake ..` of a script that steps out of its checkout and back in by
the checkout's folder name; EVer's trainers looked up by name, which start an NCCL process group themselves (NPU989,
generated from the ever-beta wheel), and the multi-process launches of scripts that use them (NPU143). Each with
controls (other strings of the same shape, comments, builds of other folders, other trainers and libraries)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_codes_by_line, write_tree


NANOFLOW_CONFIG = """\
{
    "model_configs": {
        "torch_dtype": "float16",
        "gpu_num": 1,
        "gpu_mem": 68719476736
    },
    "pipeline_configs": {
        "gemm_op_tag": [
            "128_128_32_64_64_32_2_4_RowMajor_RowMajor_RowMajor",
            "128_256_64_64_64_64_1_3_RowMajor_ColumnMajor_RowMajor"
        ],
        "global_batch_size": 1024,
        "nanobatch_1_size": 384
    },
    "serve_configs": {"actual_gpu_num": 1, "pipeline_type": "NANOBATCH_LOCAL"}
}
"""

PROFILER_CONFIG = """\
# kernels the benchmark sweeps (cutlass_profiler --kernels=...)
sweep:
  kernels:
    - cutlass_tensorop_s1688gemm_f16_256x128_32x2_nt_align8
    - cutlass_tensorop_h16816gemm_128x128_32x3_nn_align8
  default_kernel: cutlass3x_sm90_tensorop_gemm_f16_f16_f32_void_f16_128x128x64_1x1x1_0_tnn_align8_warpspecialized
  cutlass_dir: third_party/cutlass
  note: "cutlass kernels are tuned below"
"""

LOOKALIKE_CONFIG = """\
{
    "storage": {"layout": "RowMajor", "order": ["RowMajor", "ColumnMajor"]},
    "tile_shape": ["128_128_32", "64_64_32_2_4"],
    "run_name": "128_128_32_64_64_32_2_4",
    "library": "cutlass",
    "kernel": "cutlass_notes_gemm"
}
"""


def test_cutlass_gemm_tags_in_a_serving_config(tmp_path):
    found = audit_file(tmp_path, "config_all/llama3-8B/1024.json", NANOFLOW_CONFIG)
    assert "NPU988" in codes_of_line(found, 8)                  # the key, not each tag
    assert not any(code == "NPU988" for line, code, _ in found if line != 8)
    expect_line_codes(found, {}, (4, 5, 9, 10, 12, 15))


def test_cutlass_library_kernel_names(tmp_path):
    found = audit_file(tmp_path, "bench/sweep.yaml", PROFILER_CONFIG)
    assert "NPU988" in codes_of_line(found, 3)
    assert "NPU988" in codes_of_line(found, 6)
    expect_line_codes(found, {}, (1, 4, 5, 7, 8))


def test_strings_of_the_same_shape_stay_quiet(tmp_path):
    found = audit_file(tmp_path, "configs/layout.json", LOOKALIKE_CONFIG)
    assert not any(code == "NPU988" for _line, code, _ in found)


CUDA_LISTS = """\
cmake_minimum_required(VERSION 3.26)
project(small_gemv LANGUAGES CUDA CXX)
add_executable(test_compute src/main.cu)
"""

SETUP_STEPPING_OUT = """\
# install cmake beside the checkout
cd ..
wget https://github.com/Kitware/CMake/releases/download/v3.29.0/cmake-3.29.0-linux-x86_64.sh
cd Nanoflow

cd 3rdparty/mscclpp
mkdir -p build
cd build
cmake -DCMAKE_BUILD_TYPE=Release ..
cd ../../../

cd pipeline
mkdir -p build
cd build
cmake ..
make -j 256
"""


def test_cmake_after_stepping_out_and_back_into_the_checkout(tmp_path):
    root = write_tree(tmp_path / "Nanoflow", {"setup.sh": SETUP_STEPPING_OUT, "pipeline/CMakeLists.txt": CUDA_LISTS,
                                              "pipeline/src/main.cu": "__global__ void k() {}\n"})
    found = tree_codes_by_line(root, "setup.sh")
    assert "NPU337" in found.get(15, set())              # pipeline/CMakeLists.txt enables CUDA
    assert "NPU337" not in found.get(9, set())           # 3rdparty/mscclpp has no CMakeLists.txt in the tree


SETUP_SIBLING = """\
cd ..
git clone https://github.com/example/other-project.git
cd other-project
mkdir -p build && cd build
cmake ..
"""


def test_cmake_of_a_folder_beside_the_checkout_is_not_read(tmp_path):
    # the clone beside the checkout is not a folder of the audited tree, even where one of that name exists below it
    root = write_tree(tmp_path / "proj", {"build.sh": SETUP_SIBLING, "CMakeLists.txt": CUDA_LISTS,
                                          "other-project/CMakeLists.txt": CUDA_LISTS, "src/main.cu": "\n"})
    assert "NPU337" not in tree_codes_by_line(root, "build.sh").get(5, set())


SCRIPT_IN_SUBFOLDER = """\
#!/bin/bash
cd ..
mkdir -p build
cd build
cmake -DCMAKE_BUILD_TYPE=Release ..
"""


def test_cmake_of_the_root_from_a_script_in_a_subfolder(tmp_path):
    # scripts/build.sh run from its own folder: `cd ..` is the tree's root, whose CMakeLists.txt enables CUDA
    root = write_tree(tmp_path / "proj", {"scripts/build.sh": SCRIPT_IN_SUBFOLDER, "CMakeLists.txt": CUDA_LISTS})
    assert "NPU337" in tree_codes_by_line(root, "scripts/build.sh").get(5, set())


EVER_TRAIN = """\
import argparse

import ever as er
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--config_path', type=str)
parser.add_argument('--model_dir', type=str)


def register_evaluate_fn(launcher):
    launcher.override_evaluate(lambda *a: None)


if __name__ == '__main__':
    torch.backends.cudnn.benchmark = True
    trainer = er.trainer.get_trainer('th_amp_ddp')()
    trainer.run(after_construct_launcher_callbacks=[register_evaluate_fn])
"""

EVER_DP_TRAIN = EVER_TRAIN.replace("get_trainer('th_amp_ddp')", "get_trainer('dp')")

EVER_LAUNCH = """\
#!/usr/bin/env bash
export CUDA_VISIBLE_DEVICES=0,1
NUM_GPUS=2
export PYTHONPATH=$PYTHONPATH:`pwd`
config_path='levircd.r50_farseg_changemixin'
model_dir='./log/r50'
python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port 9996 ./train.py \\
  --config_path=${config_path} \\
  --model_dir=${model_dir}
# python -m torch.distributed.launch --nproc_per_node=2 ./train.py
python ./train.py --config_path=${config_path}
"""


def test_ever_trainer_that_starts_nccl_and_its_launch(tmp_path):
    root = write_tree(tmp_path / "cd", {"train.py": EVER_TRAIN, "scripts/train.sh": EVER_LAUNCH})
    assert "NPU989" in tree_codes_by_line(root, "train.py").get(17, set())
    launch = tree_codes_by_line(root, "scripts/train.sh")
    assert "NPU143" in launch.get(7, set())            # several processes, each creating an NCCL group
    assert "NPU143" not in launch.get(10, set())       # a comment
    assert "NPU143" not in launch.get(11, set())       # one process: no process group


def test_ever_trainer_without_a_process_group_stays_quiet(tmp_path):
    root = write_tree(tmp_path / "dp", {"train.py": EVER_DP_TRAIN, "scripts/train.sh": EVER_LAUNCH})
    assert "NPU989" not in tree_codes_by_line(root, "train.py").get(17, set())
    assert "NPU143" not in tree_codes_by_line(root, "scripts/train.sh").get(7, set())


OTHER_GET_TRAINER = """\
from mylib import trainer

t = trainer.get_trainer('th_amp_ddp')
"""


def test_another_library_get_trainer_is_not_evers(tmp_path):
    found = audit_file(tmp_path, "run.py", OTHER_GET_TRAINER)
    assert "NPU989" not in codes_of_line(found, 3)


BLAZE_OP = """\
/*
 * \\file multi_slice_op.cu
 * \\brief The multi slice operation
 */
#include "blaze/operator/op/multi_slice_op.h"

#include "blaze/common/common_defines.h"

namespace blaze {

template <>
void MultiSliceOp<CUDAContext>::Memcpy2D(void* dst, size_t dpitch,
    const void* src, size_t spitch,
    size_t width, size_t height) const {
  cudaStream_t stream = this->context_.cuda_stream();
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault, stream));
}

REGISTER_CUDA_OPERATOR(MultiSlice, MultiSliceOp<CUDAContext>);

}  // namespace blaze
"""

FLASH_INSTANTIATION = """\
// Splitting the different head dimensions to different files to speed up compilation.
#include "flash_fwd_launch_template.h"

template<>
void run_mha_fwd_<cutlass::half_t, 128, false>(Flash_fwd_params &params, cudaStream_t stream) {
    run_mha_fwd_hdim128<cutlass::half_t, false>(params, stream);
}
"""


def test_caffe2_style_cuda_operator_is_reported_on_its_specialisation(tmp_path):
    found = audit_file(tmp_path, "blaze/operator/op/multi_slice_op.cu", BLAZE_OP)
    assert "NPU372" in codes_of_line(found, 12)
    expect_line_codes(found, {}, (5, 7, 15, 16, 19))


def test_instantiation_file_keeps_its_include_line(tmp_path):
    found = audit_file(tmp_path, "csrc/flash_fwd_hdim128_fp16_sm80.cu", FLASH_INSTANTIATION)
    assert "NPU372" in codes_of_line(found, 2)
    assert not any(code == "NPU372" for line, code, _ in found if line != 2)
