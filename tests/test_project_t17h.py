"""t17h (issue 15, the fresh tuning sample tuned_t17h): a `.cuh` header that includes its project's headers and the
C / C++ standard library is reported at its own first CUDA code, as one that includes only project headers (t15v);
a CUDA include by angle brackets keeps the finding on the include."""
from auditor.project.cuda_source import inventory

# written the way vLLM's csrc/attention/dtype_float32.cuh is: a project header, then <stdint.h>, then device helpers
VLLM_STYLE = """#pragma once

#include "attention_generic.cuh"

#include <stdint.h>

namespace vllm {

struct Float4_ {
  float2 x;
  float2 y;
};

inline __device__ float add(float a, float b) { return a + b; }

}  // namespace vllm
"""


def test_project_and_std_includes_header_is_reported_at_its_device_code():
    assert inventory(VLLM_STYLE, header=True)["first_kernel_line"] == 14


def test_cuda_include_by_angle_brackets_keeps_the_finding_on_the_include():
    text = VLLM_STYLE.replace("#include <stdint.h>", "#include <cuda_fp16.h>")
    assert inventory(text, header=True)["first_kernel_line"] == 3


def test_a_cu_file_keeps_its_project_include():
    assert inventory(VLLM_STYLE, header=False)["first_kernel_line"] == 3
