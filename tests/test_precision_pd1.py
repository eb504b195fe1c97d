"""pd1 (issue 11, session 16; TUNED on heldout20 after its blind run): a gallery of per-vendor backend images (one
name spelled per backend: `cpu-`, `cuda12-`, `rocm-`, `intel-sycl-f16-`, `vulkan-`, `metal-`, `nvidia-l4t-` entries,
the one the host's GPU asks for installed at run time) and requirements files named for build variants
(`requirements-cublas13.txt` beside `-cpu`, `-hipblas`, `-intel`, `-mps`, installed as `requirements-${BUILD_TYPE}.txt`).
Files written for the tests in the shapes met there; none is copied."""
from __future__ import annotations

import textwrap

from auditor.backend_words import name_word_backends
from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from static_snippets import write_tree

ENGINE = StaticEngine(load_rules())

GALLERY = """\
    ---
    - &whisper
      name: "whisper"
      license: mit
      capabilities:
        default: "cpu-whisper"
        nvidia: "cuda12-whisper"
        amd: "rocm-whisper"
    - !!merge <<: *whisper
      name: "cpu-whisper"
      uri: "quay.io/example/backends:latest-cpu-whisper"
    - !!merge <<: *whisper
      name: "cuda12-whisper"
      uri: "quay.io/example/backends:latest-gpu-nvidia-cuda-12-whisper"
      mirrors:
        - example/backends:latest-gpu-nvidia-cuda-12-whisper
    - !!merge <<: *whisper
      name: "rocm-whisper-development"
      uri: "quay.io/example/backends:master-gpu-rocm-hipblas-whisper"
    - !!merge <<: *whisper
      name: "intel-sycl-f16-whisper"
      uri: "quay.io/example/backends:latest-gpu-intel-sycl-f16-whisper"
    - !!merge <<: *whisper
      name: "vulkan-whisper"
      uri: "quay.io/example/backends:latest-gpu-vulkan-whisper"
    - name: "cuda13-longcat-video"
      uri: "quay.io/example/backends:latest-gpu-nvidia-cuda-13-longcat-video"
    """


def _by_line(name: str, text: str) -> dict[int, list[str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    out: dict[int, list[str]] = {}
    for f in result.findings:
        if f.code == "NPU016":
            out.setdefault(f.line, []).append(f.severity)
    return out


def test_build_variant_words_name_backends():
    assert name_word_backends("cublas13") == {"cuda"}
    assert name_word_backends("l4t12") == {"cuda"}
    assert name_word_backends("hipblas") == {"rocm"}
    assert name_word_backends("sycl") == {"xpu"}
    assert name_word_backends("cuda12") == {"cuda"}
    assert name_word_backends("whisper") == set()


def test_gallery_of_per_vendor_images_is_a_catalogue():
    found = _by_line("backend/index.yaml", GALLERY)
    for line in (14, 16, 19, 22, 25, 27):      # cuda12 uri and mirror, rocm, intel-sycl, vulkan, a CUDA-only entry
        assert found.get(line) == ["info"], (line, found)
    result = ENGINE.analyze_bytes(textwrap.dedent(GALLERY).encode(), "backend/index.yaml")
    cuda = next(f for f in result.findings if f.line == 14)
    assert "per-vendor catalogue" in cuda.message and "cpu-whisper" in cuda.message
    assert cuda.data.get("context") == "other-backend"


def test_a_cuda_and_cpu_pair_is_no_catalogue():
    # two backends only: a project's own choice of images, the CUDA one still what a GPU deployment runs
    text = """\
        - name: trainer-cpu
          image: python:3.11-slim
        - name: trainer-cuda
          image: nvcr.io/nvidia/pytorch:24.05-py3
        """
    assert _by_line("deploy/images.yaml", text).get(4) == ["error"]


def test_steps_named_per_backend_are_no_catalogue():
    text = """\
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - name: build cpu
                run: docker build -t app:cpu .
              - name: build rocm
                run: docker build -t app:rocm -f Dockerfile.rocm .
              - name: build cuda
                image: nvcr.io/nvidia/pytorch:24.05-py3
        """
    assert _by_line(".gitlab/build.yml", text).get(10) == ["error"]


CUBLAS = """\
    --extra-index-url https://download.pytorch.org/whl/cu130
    torch==2.9.0
    bitsandbytes
    """


def test_cublas_requirements_beside_other_backends_are_the_cuda_member(tmp_path):
    root = write_tree(tmp_path / "backend", {
        "python/tts/requirements-cublas13.txt": CUBLAS,
        "python/tts/requirements-hipblas.txt": "--extra-index-url https://download.pytorch.org/whl/rocm6.4\ntorch\n",
        "python/tts/requirements-cpu.txt": "--extra-index-url https://download.pytorch.org/whl/cpu\ntorch\n",
        "python/tts/requirements-l4t12.txt": "--extra-index-url https://pypi.jetson-ai-lab.io/jp6/cu126/\ntorch\n"})
    run = run_static([root], jobs=1)
    for name in ("requirements-cublas13.txt", "requirements-l4t12.txt"):
        r = next(r for r in run.results if r.path == f"python/tts/{name}")
        assert r.findings and all(f.severity == "info" for f in r.findings), [(f.code, f.severity) for f in r.findings]
        assert any("per-backend set" in f.message for f in r.findings)


def test_cublas_requirements_alone_keep_their_severity(tmp_path):
    root = write_tree(tmp_path / "backend", {"python/tts/requirements-cublas13.txt": CUBLAS})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "python/tts/requirements-cublas13.txt")
    assert any(f.severity == "error" for f in r.findings)
