"""Project-file families behind the misses of the first run on split test16 (issue 15, t15v; test16 is tuned on from
here): CUDA wheels by URL, macOS-only requirement lines, ZeRO++ quantization, CUDA serving images and servers,
TensorRT extras and installers, CI build-args, CUDA-named container files, local CUDA-extension folders, option
defaults that name FlashAttention, plain C++ `.cuh` headers. Each test is a realistic file with the lines that must be
found and the lines that must not."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes, write_tree

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def _tree_findings(tmp_path: Path, files: dict[str, str]):
    from auditor.runner import run_static

    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return [(Path(r.path).as_posix().rsplit("/", 1)[-1], f) for r in run.results for f in r.findings]


def test_cuda_wheels_by_url_and_macos_only_lines():
    reqs = """\
        torch==2.2.1; sys_platform != "darwin" and platform_machine != "arm64"
        torch==2.3.1; sys_platform == "darwin" and platform_machine == "arm64"
        #bitsandbytes downgraded because of Mac M1/M2 support issue
        bitsandbytes==0.42.0; sys_platform == "darwin" and platform_machine == "arm64"
        exllama @ https://github.com/jllllll/exllama/releases/download/0.0.18/exllama-0.0.18+cu121-cp310-cp310-linux_x86_64.whl
        STABLE_FAST
        GPUtil
        mlc-ai-nightly-cu118
        triton-windows==3.1.0.post17; sys_platform == 'win32'
        numpy
        """
    stable_fast = ("stable_fast @ https://github.com/chengzeyi/stable-fast/releases/download/v0.0.15.post1/"
                   "stable_fast-0.0.15.post1+torch211cu121-cp310-cp310-manylinux2014_x86_64.whl; sys_platform=='linux'")
    got = found("requirements.txt", textwrap.dedent(reqs).replace("STABLE_FAST", stable_fast))
    lines = {ln for ln, _ in got}
    assert 2 not in lines and 3 not in lines and 4 not in lines and 10 not in lines, got
    assert (1, "NPU011") in got
    assert {(5, "NPU440"), (6, "NPU440"), (7, "NPU440"), (8, "NPU440"), (9, "NPU360")} <= set(got), got


def test_macos_only_reads_markers():
    from auditor.project.requirements import macos_only as parsed_macos_only, read_requirement

    def macos_only(text: str) -> bool:
        return parsed_macos_only(read_requirement(text))

    assert macos_only('bitsandbytes==0.42.0; sys_platform == "darwin" and platform_machine == "arm64"')
    assert not macos_only('bitsandbytes>=0.43.1; sys_platform != "darwin" and platform_machine != "arm64"')
    assert not macos_only("triton-windows==3.1.0; sys_platform == 'win32'")      # Windows hosts CUDA too
    assert not macos_only('flash-attn; extra == "gpu"') and not macos_only("torch==$V")
    # a Python version is no platform (tt-buda's `torch @ https://.../torch-2.1.0%2Bcpu...whl ; python_version=='3.8'`)
    assert not macos_only("torch @ https://download.pytorch.org/whl/cpu/torch-2.1.0-cp38-cp38-linux_x86_64.whl ; "
                          "python_version=='3.8'")
    assert not macos_only('torch==2.7.0; platform_machine == "ppc64le" or platform_machine == "aarch64"')
    assert macos_only('torch==2.7.0; platform_system == "Darwin"')


def test_zero_plus_plus_quantized_communication():
    config = """\
        {
          "zero_optimization": {
            "stage": 3,
            "overlap_comm": true,
            "zero_quantized_weights": true,
            "zero_hpz_partition_size": 4,
            "zero_quantized_gradients": true,
            "zero_quantized_nontrainable_weights": false
          }
        }
        """
    assert [(ln, c) for ln, c in found("zero3++.json", config) if c == "NPU424"] == [(5, "NPU424"), (7, "NPU424")]


def test_serving_image_server_command_and_tensorrt_installs():
    dockerfile = """\
        # then change below "FROM openmmlab/lmdeploy:latest" to "FROM internvlmain"
        FROM openmmlab/lmdeploy:latest
        RUN pip install git+https://github.com/cumulo-autumn/StreamDiffusion.git@main#egg=streamdiffusion[tensorrt]
        RUN python -m streamdiffusion.tools.install-tensorrt
        RUN pip install git+https://github.com/cumulo-autumn/StreamDiffusion.git@main#egg=streamdiffusion
        CMD ["lmdeploy", "serve", "api_server", "OpenGVLab/InternVL-Chat-V1-5"]
        CMD ["python",  "main.py", "--debug", "--acceleration", "tensorrt"]
        CMD ["python",  "main.py", "--acceleration", "xformers"]
        """
    got = found("Dockerfile", dockerfile)
    assert {(2, "NPU016"), (3, "NPU440"), (4, "NPU441"), (6, "NPU447"), (7, "NPU441")} <= set(got), got
    assert not [c for ln, c in got if ln in (1, 5, 8)], got


def test_ci_build_args_and_cuda_named_container_files():
    workflow = """\
        jobs:
          build:
            runs-on: ubuntu-22.04
            steps:
              - uses: docker/build-push-action@v5
                with:
                  context: .
                  build-args: |
                    CUDA_VERSION=${{ matrix.cuda_version }}
                    TORCH_VERSION=${{ matrix.torch_version }}
        """
    got = found(".github/workflows/docker-publish.yml", workflow)
    assert (9, "NPU018") in got and not [c for ln, c in got if ln == 10], got
    compose = """\
        services:
          demo:
            build:
              context: ./files
              dockerfile: cuda.Dockerfile
          cpu:
            build:
              dockerfile: cpu.Dockerfile
        """
    got = found("docker/docker-compose-cuda.yml", compose)
    assert [ln for ln, c in got if c == "NPU016"] == [5], got
    script = """\
        #!/bin/bash
        if [ "$with_cuda" -eq 1 ]; then
            $dcomp -f docker-compose-cuda.yml up --build
        else
            $dcomp -f docker-compose-cpu.yml up --build
        fi
        echo "docker compose -f docker-compose-cuda.yml up"
        """
    got = found("docker/run.sh", script)
    assert [ln for ln, c in got if c == "NPU016"] == [3], got


def test_local_folder_whose_setup_py_builds_a_cuda_extension(tmp_path):
    # (one reader for both: auditor/project/local_builds.py; a CUDAExtension chosen only when CUDA is found is an
    # opt-in build and stays quiet, the session-11 decision in setup_py.unconditional_cuda_extensions)
    setup_cuda = textwrap.dedent("""\
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension
        setup(name="texture_baker", ext_modules=[CUDAExtension("texture_baker._C", ["csrc/baker.cu"])],
              cmdclass={"build_ext": BuildExtension})
        """)
    setup_cpp = textwrap.dedent("""\
        from setuptools import setup
        from pybind11.setup_helpers import Pybind11Extension
        # no CUDAExtension here
        setup(name="uv_unwrapper", ext_modules=[Pybind11Extension("uv_unwrapper._C", ["csrc/unwrap.cpp"])])
        """)
    files = {
        "texture_baker/setup.py": setup_cuda,
        "uv_unwrapper/setup.py": setup_cpp,
        "requirements.txt": "einops==0.7.0\n./texture_baker/\n./uv_unwrapper/\n",
        "install.sh": "#!/bin/bash\npip install ./texture_baker\npip install ./uv_unwrapper\n",
    }
    got = [(name, f.line) for name, f in _tree_findings(tmp_path, files) if f.code == "NPU370" and name != "setup.py"]
    assert sorted(got) == [("install.sh", 2), ("requirements.txt", 2)], got


def test_a_launch_leaving_an_option_whose_default_names_flash_attention(tmp_path):
    train = textwrap.dedent("""\
        from dataclasses import dataclass, field
        from typing import Optional

        import transformers


        @dataclass
        class ModelArguments:
            model_name_or_path: Optional[str] = field(default="llava-hf/llava-1.5-7b-hf")
            attn_implementation: Optional[str] = field(
                metadata={"help": "The attention implementation to use", "default": "flash_attention_2"},
                default="flash_attention_2",
            )


        def main():
            parser = transformers.HfArgumentParser(ModelArguments)
            (model_args,) = parser.parse_args_into_dataclasses()
            return transformers.AutoModelForVision2Seq.from_pretrained(
                model_args.model_name_or_path, attn_implementation=model_args.attn_implementation)


        if __name__ == "__main__":
            main()
        """)
    script = textwrap.dedent("""\
        #!/bin/bash
        accelerate launch --config_file=$config_file \\
            train_mllava.py \\
            --model_name_or_path $model_name_or_path \\
            --bf16 True
        accelerate launch train_mllava.py --attn_implementation sdpa
        """)
    got = _tree_findings(tmp_path, {"mantis/train/train_mllava.py": train, "mantis/train/scripts/train.sh": script})
    assert [f.line for name, f in got if name == "train.sh" and f.code == "NPU354"] == [3], got


def test_plain_cpp_cuh_header_and_project_headers_only():
    plain = """\
        #ifndef FLASHINFER_ROPE_CUH_
        #define FLASHINFER_ROPE_CUH_

        #include <string>

        namespace flashinfer {
        enum class PosEncodingMode { kNone = 0U, kRoPELlama = 1U };
        }  // namespace flashinfer
        #endif
        """
    assert found("include/flashinfer/rope.cuh", plain) == []
    state = """\
        #ifndef FLASHINFER_STATE_CUH_
        #define FLASHINFER_STATE_CUH_

        #include "math.cuh"
        #include "vec_dtypes.cuh"

        namespace flashinfer {
        template <size_t vec_size>
        struct state_t {
          float m;
          __device__ __forceinline__ void init() { m = -5e4; }
        };
        }  // namespace flashinfer
        #endif
        """
    assert found("include/flashinfer/state.cuh", state) == [(11, "NPU372")]
    # a `.cu` file is CUDA by its name, whatever it holds
    assert found("b.cu", "#include <vector>\nint f() { return 1; }\n") == [(1, "NPU372")]


def test_easy_install_and_a_cuda_compile_target():
    dockerfile = """\
        FROM python:3.10-slim
        COPY . /streamdiffusion
        RUN python setup.py develop easy_install streamdiffusion[tensorrt] \\
            && python -m streamdiffusion.tools.install-tensorrt
        RUN easy_install bitsandbytes
        RUN python setup.py develop easy_install numpy
        """
    got = found("Dockerfile", dockerfile)
    assert {(3, "NPU440"), (4, "NPU441"), (5, "NPU440")} <= set(got) and not [c for ln, c in got if ln == 6], got
    script = """\
        #!/bin/bash
        # python build.py --target cuda
        python build.py --target cuda --quantization w3a16g128asym --model /models/llama --use-cache=0
        python build.py --target vulkan --quantization q4f16_1 --model /models/llama
        """
    assert found("build.sh", script) == [(3, "NPU425")]


def test_cuda_extension_folders_by_name():
    dockerfile = """\
        FROM nvcr.io/nvidia/pytorch:24.01-py3
        WORKDIR /dust3r/croco/models/curope/
        RUN python setup.py build_ext --inplace
        WORKDIR /dust3r
        RUN python setup.py build_ext --inplace
        """
    got = found("docker/files/cuda.Dockerfile", dockerfile)
    assert (3, "NPU360") in got and not [c for ln, c in got if ln == 5], got
    assert (2, "NPU360") in found("requirements.txt", "numpy\nfast-hadamard-transform==1.0.4\n")


def test_a_cu_file_with_project_headers_only_keeps_its_include():
    # ThunderKittens' tests (tuned_t15f's label): the `.cuh` the `.cu` file includes brings what it instantiates
    source = """\
        #include "reductions.cuh"

        #ifdef TEST_GROUP_SHARED_TILE_REDUCTIONS
        template<typename T>
        struct sumred { __device__ static void op(T x) {} };
        #endif
        """
    assert found("tests/group/shared/tile/reductions.cu", source) == [(1, "NPU372")]


def test_cuda_header_markers_and_quoted_library_includes():
    vectorization = """\
        #pragma once
        #include <c10/util/Float8_e4m3fn.h>
        namespace vllm {
        template <typename scalar_t>
        struct __align__(8) vec4_t { scalar_t x, y, z, w; };
        }
        """
    assert found("csrc/quantization/vectorization.cuh", vectorization) == [(2, "NPU372")]
    conversion = """\
        #pragma once

        #include "cutlass/numeric_conversion.h"
        #include "cutlass_extensions/vllm_custom_types.cuh"

        namespace cutlass {
        template <typename T> struct InterleavedNumericArrayConverter {
          CUTLASS_DEVICE static int convert(int x) { return x; }
        };
        __device__ inline int f() { return 0; }
        }
        """
    assert found("csrc/cutlass_extensions/vllm_numeric_conversion.cuh", conversion)[0][0] in (3, 4)
    launch = """\
        #pragma once

        #include "compiled.cuh"

        #define SETUP_LAUNCH_CONFIG(num_sms, num_threads, stream) \\
            cudaLaunchConfig_t cfg = {(num_sms), (num_threads), 0, stream, nullptr, 0};
        """
    assert found("csrc/kernels/launch.cuh", launch) == [(6, "NPU372")]
