"""CMake build files (t15f, tuned on project split tuned_t15f): the CUDA parts of a C/C++ build read with
tree-sitter-cmake (auditor/project/cmake.py). Each test is a realistic file with the lines that must be found and
the lines that must not (comments, messages, CPU-only targets)."""
from __future__ import annotations

import textwrap

from auditor.project import project_kind
from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_cmake_files_are_project_files():
    assert project_kind("CMakeLists.txt") == "cmake"
    assert project_kind("bin2c_wrapper.cmake") == "cmake"
    assert project_kind("requirements.txt") == "requirements"


def test_an_extension_build_with_nccl_and_nvshmem():
    # the shape of DeepEP's / DeepGEMM's top-level CMakeLists.txt (an IDE build beside the torch extension)
    text = """\
        # NOTES: this CMake is only for debugging; CUDA kernels are built by setup.py
        cmake_minimum_required(VERSION 3.10)
        project(deep_ep LANGUAGES CUDA CXX)
        set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -O3 -fPIC")
        set(CUDA_SEPARABLE_COMPILATION ON)
        list(APPEND CUDA_NVCC_FLAGS "-O3")
        set(CUDA_ARCH_LIST "9.0" CACHE STRING "List of CUDA architectures to compile")
        find_package(CUDAToolkit REQUIRED)
        find_package(Torch REQUIRED)
        find_package(NVSHMEM REQUIRED HINTS ${NVSHMEM_ROOT_DIR}/lib/cmake/nvshmem)
        add_library(nvshmem_host ALIAS nvshmem::nvshmem_host)
        if (NOT NCCL_ROOT_DIR)
            message(FATAL_ERROR "NCCL_ROOT_DIR is not set.")
        endif()
        include_directories(${CUDA_TOOLKIT_ROOT_DIR}/include ${TORCH_INCLUDE_DIRS})
        link_directories(${TORCH_INSTALL_PREFIX}/lib ${NCCL_ROOT_DIR}/lib)
        pybind11_add_module(_C csrc/python_api.cpp)
        target_link_libraries(_C PRIVATE nccl ${TORCH_LIBRARIES} torch_python)
        cuda_add_library(deep_ep_indexing_cuda STATIC csrc/indexing/main.cu)
        """
    got = found("CMakeLists.txt", text)
    lines = {line for line, _ in got}
    assert (3, "NPU337") in got and (5, "NPU339") in got and (6, "NPU339") in got and (19, "NPU337") in got
    assert (7, "NPU063") in got and (8, "NPU062") in got and (15, "NPU062") in got
    assert {(10, "NPU145"), (11, "NPU145"), (12, "NPU145"), (13, "NPU145"), (16, "NPU145"), (18, "NPU145")} <= set(got)
    # the comment, the CXX flags, Torch, the pybind11 module of a .cpp file: nothing
    assert not lines & {1, 2, 4, 9, 17}


def test_target_properties_and_libraries_one_line_each():
    # DeepEP csrc/kernels/CMakeLists.txt, tiny-cuda-nn benchmarks/mlp/CMakeLists.txt
    text = """\
        function(add_deep_ep_library target_name source_file)
            add_library(${target_name} STATIC ${source_file})
            set_target_properties(${target_name} PROPERTIES
                    POSITION_INDEPENDENT_CODE ON
                    CUDA_STANDARD 17
                    CUDA_SEPARABLE_COMPILATION ON
                    CUDA_ARCHITECTURES "90a"
            )
            target_link_libraries(${target_name} PUBLIC nvshmem_host cudart)
        endfunction()
        add_executable(bench_mlp_ours bench_mlp_ours.cu)
        target_link_libraries(bench_mlp_ours PUBLIC ${CUDA_LIBRARIES} tiny-cuda-nn CUDA::cublas)
        """
    got = set(found("CMakeLists.txt", text))
    assert {(5, "NPU339"), (6, "NPU339"), (7, "NPU063"), (9, "NPU145"), (9, "NPU062"), (11, "NPU337"),
            (12, "NPU062"), (12, "NPU450")} <= got
    assert not {line for line, _ in got} & {1, 2, 3, 4, 10}


def test_comments_messages_and_cpu_builds_are_not_findings():
    text = """\
        #[[ CUDA support:
            project(x LANGUAGES CUDA) would need nvcc ]]
        # find_package(CUDAToolkit REQUIRED)
        project(tools LANGUAGES CXX)
        option(WITH_CUDA "Build the CUDA kernels" OFF)
        message(STATUS "CUDA found: ${CUDAToolkit_FOUND}; nccl too")
        message(WARNING "building without NCCL")
        add_library(tools STATIC src/tools.cpp src/cuda_names.h)
        target_include_directories(nccl_host_transport PRIVATE ${CMAKE_CURRENT_LIST_DIR}/include)
        set(SOURCES main.cpp)
        target_link_libraries(tools PRIVATE fmt::fmt Threads::Threads)
        """
    assert found("CMakeLists.txt", text) == []


def test_bad_cmake_never_raises():
    for text in ("project(x LANGUAGES CUDA", "((((", ")\n]]#[[", "set(", "if(\n", "\xff\xfe"):
        result = ENGINE.analyze_bytes(text.encode("latin-1"), "CMakeLists.txt")   # no traceback
        assert result.error is None or result.error.kind == "encoding"
    assert ENGINE.analyze_bytes(b"\x00\x01project(x)", "CMakeLists.txt").error.kind == "binary"


def test_cuda_header_without_kernel_is_reported_at_its_cute_include():
    # FlashMLA csrc/sm100/prefill/dense/fmha_cutlass_bwd_sm100.cuh: CuTe / CUTLASS templates, no __global__
    text = """\
        /*
         * Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES. #include <cute/tensor.hpp> in a comment
         */
        #pragma once
        #include <iostream>
        #include <random>
        #include <cute/tensor.hpp>
        #include "collective/fmha_fusion.hpp"

        template <class Element>
        struct BwdRunner { cute::Tensor<Element> t; };
        """
    assert found("csrc/fmha_cutlass_bwd_sm100.cuh", text) == [(7, "NPU372")]


def test_a_projects_own_cuda_architectures_variable_in_ci_and_setup_py():
    # tiny-cuda-nn: `env: TCNN_CUDA_ARCHITECTURES: ${{ matrix.arch }}` in CI, read by bindings/torch/setup.py
    workflow = """\
        jobs:
          build_linux:
            runs-on: ubuntu-24.04
            env:
              build_dir: "build"
              TCNN_CUDA_ARCHITECTURES: ${{ matrix.arch }}
        """
    assert found(".github/workflows/main.yml", workflow) == [(6, "NPU021")]
    setup = """\
        import os

        if "TCNN_CUDA_ARCHITECTURES" in os.environ and os.environ["TCNN_CUDA_ARCHITECTURES"]:
            compute_capabilities = [int(x) for x in os.environ["TCNN_CUDA_ARCHITECTURES"].split(",")]
        BUILD_ARCHITECTURES = os.environ.get("BUILD_ARCHITECTURES", "")
        """
    got = found("setup.py", setup)
    assert (3, "NPU021") in got and (4, "NPU021") in got and all(line != 5 for line, _ in got)


def test_link_flags_and_toolkit_folders_in_setup_py():
    # DeepEP / DeepGEMM setup.py
    text = """\
        import os
        from torch.utils.cpp_extension import CUDAExtension

        include_dirs = ['deep_ep/include', 'third-party/fmt/include', '/usr/local/cuda/include/cccl']
        extra_link_args = ['-lcuda']
        nvcc_dlink = ['-dlink', f'-L{os.environ["NVSHMEM_DIR"]}/lib', '-lnvshmem_device']
        build_libraries = ['cudart', 'nvrtc']
        cutlass = ['third-party/cutlass/include']
        # links -lcuda and -lnvshmem_device on GPU builds
        print("needs -lcublas")
        cxx = ['-O3', '-lm']
        """
    got = set(found("setup.py", text))
    assert {(4, "NPU064"), (5, "NPU064"), (6, "NPU146"), (7, "NPU064"), (8, "NPU451")} <= got
    assert not {line for line, _ in got} & {1, 9, 10, 11}


def test_conda_pip_items_read_as_requirement_lines():
    # torch-ngp environment.yml: a VCS URL of a CUDA project in the pip sub-list
    text = """\
        name: torch-ngp
        channels:
          - pytorch
        dependencies:
          - python
          - pip:
            - imageio
            - git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch
            - git+https://github.com/facebookresearch/pytorch3d.git@stable#egg=notcuda
        """
    got = found("environment.yml", text)
    assert (8, "NPU440") in got and all(line not in (1, 5, 7) for line, _ in got)


def test_makefile_own_cuda_build_lines():
    # ThunderKittens kernels/gemm/baselines/nvfp4_cublas_lt/Makefile and the shape of its common.mk
    kernel = """\
        GPU := B200
        SRC := nvfp4_cublas_lt_gemm.cu
        OUT := nvfp4_cublas_lt_gemm.out
        CMD := ./nvfp4_cublas_lt_gemm.out
        CONFIG := standalone
        NVCCFLAGS := -lcublas -lcublasLt
        include ../../../common.mk
        """
    got = set(found("Makefile", kernel))
    assert {(1, "NPU063"), (2, "NPU338"), (6, "NPU338"), (6, "NPU450")} <= got
    assert not {line for line, _ in got} & {3, 4, 5, 7}
    common = """\
        # Example usage:
        #   GPU := H100 | B200
        #   SRC := kernel.cu
        GPU ?= NOT_SET # H100 | B200 | B300
        NVCC := nvcc
        CFLAGS = -O3 -Wall
        NVCCFLAGS += -std=c++20 -O3 \\
        \t-lcuda -lcudart_static
        train: train.cu
        \t$(NVCC) $(NVCCFLAGS) $< -o $@
        clean:
        \trm -f *.o   # nvcc leaves objects
        define HELP
        SRC := help.cu
        endef
        """
    got = set(found("Makefile", common))
    assert {(5, "NPU338"), (7, "NPU338"), (8, "NPU062"), (10, "NPU338")} <= got
    assert not {line for line, _ in got} & {1, 2, 3, 4, 6, 11, 12, 13, 14, 15}


def test_set_property_and_string_append_name_their_variable():
    text = """\
        set_property(TARGET kernels PROPERTY CUDA_ARCHITECTURES 80 90)
        string(APPEND CMAKE_CUDA_FLAGS " --expt-relaxed-constexpr")
        string(REPLACE "CUDA" "cuda" LOWER_NAME "${NAME}")
        set_property(GLOBAL PROPERTY USE_FOLDERS ON)
        """
    assert found("CMakeLists.txt", text) == [(1, "NPU063"), (2, "NPU339")]


def test_cuda_parts_behind_a_cuda_option_are_information():
    # Mooncake mooncake-transfer-engine/example/CMakeLists.txt: CUDA examples under `if(USE_CUDA ...)` beside Ascend ones
    text = """\
        if(USE_ASCEND)
          add_executable(transfer_engine_ascend_perf ${WORKSPACE}/transfer_engine_ascend_perf.cpp)
          target_link_libraries(transfer_engine_ascend_perf PUBLIC ascendcl transfer_engine)
        endif()
        if(USE_CUDA AND BUILD_DEVICE_TRANSPORT_EXAMPLE)
          enable_language(CUDA)
          add_executable(device_transport_example ${WORKSPACE}/device_transport_example.cu)
        else()
          add_executable(host_example ${WORKSPACE}/host_example.cu)
        endif()
        if (NOT NCCL_ROOT_DIR)
          message(FATAL_ERROR "NCCL_ROOT_DIR is not set.")
        endif()
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), "CMakeLists.txt")
    severity = {(f.line, f.code): f.severity for f in result.findings}
    assert severity[(6, "NPU337")] == "info" and severity[(7, "NPU337")] == "info"
    assert severity[(9, "NPU337")] == "error"                 # the else() branch is the other path
    assert severity[(11, "NPU145")] == "info"                 # the test: false where NCCL is set up
    assert severity[(12, "NPU145")] == "error"                # the stop itself
    assert not any(line <= 4 for line, _ in severity)


def test_optional_lookups_and_option_tests_are_information():
    # Mooncake: `find_package(CUDAToolkit)` without REQUIRED, `if(CUDAToolkit_FOUND)`, a FATAL_ERROR for a bad option mix
    text = """\
        find_package(CUDAToolkit)
        if(CUDAToolkit_FOUND)
          add_definitions(-DHAVE_CUDA)
        endif()
        if(USE_NCCL_HOST)
          if(NOT USE_CUDA)
            message(FATAL_ERROR "USE_NCCL_HOST requires USE_CUDA=ON")
          endif()
        endif()
        find_package(CUDAToolkit REQUIRED)
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), "CMakeLists.txt")
    severity = {(f.line, f.code): f.severity for f in result.findings}
    assert severity == {(1, "NPU062"): "info", (2, "NPU062"): "info", (7, "NPU062"): "info", (10, "NPU062"): "error"}


def test_cuda_parts_behind_an_option_that_defaults_on_keep_their_severity():
    # ultralytics examples/YOLOv8-ONNXRuntime-CPP/CMakeLists.txt: `option(USE_CUDA ... ON)` and no NPU arm, so a
    # plain `cmake` on an Ascend host runs find_package(CUDA REQUIRED); the controls: an option that defaults OFF,
    # one a CUDA compiler test turns off, and an `OR` of options keep the branch optional (info)
    text = """\
        option(USE_CUDA "Enable CUDA support" ON)
        option(WITH_GPU "GPU build" OFF)
        option(USE_NCCL "NCCL" ON)
        if (NOT APPLE AND USE_CUDA)
            find_package(CUDA REQUIRED)
        else ()
            set(USE_CUDA OFF)
        endif ()
        if (WITH_GPU)
            find_package(CUDAToolkit REQUIRED)
        endif ()
        if (NOT CMAKE_CUDA_COMPILER)
            set(USE_NCCL OFF)
        endif ()
        if (USE_NCCL)
            find_package(CUDAToolkit REQUIRED)
        endif ()
        if (USE_CUDA OR WITH_GPU)
            target_link_libraries(app ${CUDA_LIBRARIES})
        endif ()
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), "CMakeLists.txt")
    severity = {f.line: f.severity for f in result.findings if f.code == "NPU062"}
    assert severity[5] == "error"
    assert severity[10] == "info" and severity[16] == "info" and severity[19] == "info"
