"""t18a (session 18): NVIDIA's package index as a string in code (NPU026), onnxruntime-gpu with a version as a
requirement string (NPU056), and a CUDA math library appended to an extension's `libraries` (NPU805)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "deps.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


def test_nvidia_index_url_in_code_is_the_project_files_rule():
    src = (b'TENSORRT_INDEX_ARGS = ("--extra-index-url", "https://pypi.ngc.nvidia.com")\n'
           b'TORCH_INDEX = "https://download.pytorch.org/whl/cpu"\n')
    assert _lines(src, "NPU026") == [1]


def test_onnxruntime_gpu_needs_a_version_spec():
    src = (b'V = ">=1.18.1"\n'
           b'REQS = {"onnx-cuda": (f"onnxruntime-gpu{V}",), "pinned": ("onnxruntime-gpu==1.20.0",)}\n'
           b'builds = ("onnxruntime", "onnxruntime-gpu")\n')
    assert _lines(src, "NPU056") == [2]


def test_libraries_append_only_on_a_libraries_list():
    src = (b'libraries = ["BaSpaCho"]\nif has_cuda:\n    libraries.append("cusolver")\n'
           b'backends = []\nbackends.append("cudnn")\nself.extra_libraries.extend(["cublas", "cublasLt"])\n'
           b'libraries.append("m")\n')
    assert _lines(src, "NPU805", "setup.py") == [3, 6]
