"""h26a (session 26): house work with no behaviour change. Each test holds one reading on code shaped like the real
code it came from, and that the moved reading answers as the old one did."""
from __future__ import annotations

from auditor.backend_words import MEMBER_WORDS, backends_in_text, member_backend
from auditor.project.dockerfile import cuda_member_siblings


def test_member_words_are_one_table():
    # the stage / profile words are a named subset of the one backend-word table: `gpu` reads as CUDA in code, but
    # names no member of a per-backend set of stages; `cpu`, `cann`, `intel` name members though no backend in code
    assert backends_in_text("gpu") == {"cuda"} and member_backend("gpu") is None
    assert [member_backend(w) for w in ("cuda", "nvidia", "cu121", "cpu", "cann", "intel", "metal", "nccl")] == \
        ["cuda", "cuda", "cuda", "cpu", "npu", "xpu", "mps", None]
    assert not backends_in_text("cpu") and not backends_in_text("cann")
    assert all(b != "cuda" for w, b in MEMBER_WORDS.items() if w not in ("cuda", "nvidia"))


def test_cuda_stage_siblings_as_before():
    # LocalAI-shaped stages: `builder-cuda` beside `builder-cpu`, `builder-intel`; a `builder-gpu` is no member, and a
    # CUDA stage whose siblings are only CUDA builds (`cu118` / `cu121`) keeps its findings
    names = ["builder-cuda", "builder-cpu", "builder-intel", "builder-gpu", "runtime"]
    assert cuda_member_siblings("builder-cuda", names) == ["builder-cpu", "builder-intel"]
    assert cuda_member_siblings("builder-cu121", ["builder-cu118", "builder-cu121"]) == []
    assert cuda_member_siblings("builder-gpu", names) == []
    assert cuda_member_siblings("nvidia", ["nvidia", "cann", "rocm"]) == ["cann", "rocm"]
