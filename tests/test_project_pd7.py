"""pd7 (issue 15, project test22 / test23 after the draw): a flash-attention instantiation file that includes a
config header before its launch template is reported at the launch template's include (test4's and tuned_t17h's
labels sit there)."""
from auditor.project.cuda_source import inventory
from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())

# written the way Block-Sparse-Attention's csrc/block_sparse_attn/src/flash_fwd_block_hdim64_bf16_sm80.cu is
BLOCK_SPARSE_INSTANTIATION = """// Copyright (c) 2024, Tri Dao.
// Adapted by Junxian Guo.
// Splitting the different head dimensions to different files to speed up compilation.
// This file is auto-generated. See "generate_kernels.py"
#include "namespace_config.h"
#include "flash_fwd_launch_template.h"

namespace FLASH_NAMESPACE {

template<>
void run_mha_fwd_block_<cutlass::bfloat16_t, 64, false>(Flash_fwd_params &params, cudaStream_t stream) {
    run_mha_fwd_block_hdim64<cutlass::bfloat16_t, false>(params, stream);
}

} // namespace FLASH_NAMESPACE
"""


def test_instantiation_file_is_reported_at_its_launch_template_include():
    assert inventory(BLOCK_SPARSE_INSTANTIATION)["first_kernel_line"] == 6
    (f,) = ENGINE.analyze_bytes(BLOCK_SPARSE_INSTANTIATION.encode(),
                                "csrc/block_sparse_attn/src/flash_fwd_block_hdim64_bf16_sm80.cu").findings
    assert f.line == 6


def test_launch_template_in_a_comment_does_not_move_the_line():
    commented = BLOCK_SPARSE_INSTANTIATION.replace('#include "flash_fwd_launch_template.h"',
                                                   '// #include "flash_fwd_launch_template.h"')
    assert inventory(commented)["first_kernel_line"] == 5


OPEN_MAGVIT2_CONFIG = b"""seed_everything: true
trainer:
  accelerator: npu
  strategy: ddp_find_unused_parameters_true
  devices: 8
  num_nodes: 8
  precision: bf16-mixed
  max_epochs: 330
"""


def test_config_in_a_folder_named_for_the_npu_is_ascends_own():
    from auditor.project import analyze_project_file

    npu = analyze_project_file(ENGINE, OPEN_MAGVIT2_CONFIG, "configs/IBQ/npu/imagenet_ibqgan_1024.yaml", "config")
    assert npu.findings == []
    # the `gpu/` copy beside it keeps its findings
    gpu = analyze_project_file(ENGINE, OPEN_MAGVIT2_CONFIG.replace(b"accelerator: npu", b"accelerator: gpu"),
                               "configs/IBQ/gpu/imagenet_ibqgan_1024.yaml", "config")
    assert any(f.line == 7 for f in gpu.findings)


# written the way svox2's svox2/csrc/include/cubemap_util.cuh is: its one project include is named for CUDA
SVOX2_HEADER = """#pragma once
#include "cuda_util.cuh"
#include <cmath>
#include <cstdint>

namespace {
namespace device {

__device__ __inline__ void
invert_cubemap(int u, int v, float* __restrict__ dir) {
    dir[0] = u;
}

}  // namespace device
}  // namespace
"""


def test_header_including_a_cuda_named_project_header_is_reported_at_that_include():
    assert inventory(SVOX2_HEADER, header=True)["first_kernel_line"] == 2
    # a project header not named for CUDA keeps the t15v reading: the header's own first device code
    plain = SVOX2_HEADER.replace('"cuda_util.cuh"', '"math.cuh"')
    assert inventory(plain, header=True)["first_kernel_line"] == 9
