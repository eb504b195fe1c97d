"""t17h (issue 15, the fresh tuning sample tuned_t17h): a `.cuh` header that includes its project's headers and the
C / C++ standard library is reported at its own first CUDA code, as one that includes only project headers (t15v);
a CUDA include by angle brackets keeps the finding on the include. And the ggml family's CUDA build switches, a
`*_CUDA` version variable and a CI matrix entry that builds a CUDA Dockerfile."""
from auditor.project.cuda_source import inventory
from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())

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


# written the way llama.cpp-family repositories (PowerInfer, koboldcpp) write their Docker workflow and CUDA builds
DOCKER_WORKFLOW = """\
name: Publish Docker image
on: push
jobs:
  push_to_registry:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        config:
          - { tag: "light", dockerfile: ".devops/main.Dockerfile", platforms: "linux/amd64,linux/arm64" }
          # NOTE: the CUDA builds on arm64 are very slow
          - { tag: "full-cuda", dockerfile: ".devops/full-cuda.Dockerfile", platforms: "linux/amd64" }
          - { tag: "full-rocm", dockerfile: ".devops/full-rocm.Dockerfile", platforms: "linux/amd64" }
    steps:
      - uses: docker/build-push-action@v4
        with:
          file: ${{ matrix.config.dockerfile }}
"""

LLAMA_CUDA_BUILD = """\
FROM ubuntu:22.04
ENV LLAMA_CUBLAS=1
ENV GGML_CUDA=0
RUN make -j
"""

CUDA_VERSION_ENV = """\
name: Linux CUDA12
on: workflow_dispatch
env:
  KCPP_CUDA: 12.1.0
  USE_CUDA: 0
jobs:
  linux:
    runs-on: ubuntu-20.04
    steps:
      - run: ./koboldcpp.sh dist
"""


def test_ci_matrix_entry_building_a_cuda_dockerfile_is_reported_and_its_comment_is_not():
    found = line_codes(ENGINE, ".github/workflows/docker.yml", DOCKER_WORKFLOW)
    assert (11, "NPU016") in found
    assert not [c for ln, c in found if ln in (9, 10, 12)]


def test_ggml_cuda_make_switch_on_is_reported_and_off_is_not():
    found = line_codes(ENGINE, "Dockerfile", LLAMA_CUDA_BUILD)
    assert (2, "NPU021") in found and not [c for ln, c in found if ln == 3]


def test_a_cuda_version_variable_is_a_build_parameter():
    found = line_codes(ENGINE, ".github/workflows/linux-cuda12.yaml", CUDA_VERSION_ENV)
    assert (4, "NPU018") in found and not [c for ln, c in found if ln == 5]
