"""Precision fix of pd28 (session 24, tuned on tuned_pd28: trees that already run on a second backend beside CUDA):
- a flag set from `is_torch_npu_available() or is_torch_cuda_available()` (LLamaTuner's `_is_fp16_available`, the
  LLaMA-Factory helper shape) is True on Ascend: its reads are not CUDA gates (auditor/static/flags.py);
- a guarded `import bitsandbytes` read only for `bitsandbytes.__version__` (an environment report) is info
  (auditor/static/backends.py, context `version-probe`);
- "cuda" as one of the `choices=[...]` of a command-line option (VibeVoice's realtime demo) is info; the option's
  `default="cuda"` keeps its error (context `option-choices`);
- a `cuda = [...]` extra beside an `npu = [...]` extra in pyproject.toml (mini-vllm) is info
  (auditor/project/requirements.py, context `per-backend-extra`).
Each case has a control that keeps its severity. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree


def _found(root, rel: str, src: str, needle: str) -> set[tuple[str, str, str]]:
    line = line_of(src, needle)
    run = run_static([root], jobs=1)
    return {(f.code, f.severity, (f.data or {}).get("context") or "")
            for r in run.results if r.path == rel for f in r.findings if f.line == line}


MISC = """\
    import torch
    from transformers.utils import is_torch_cuda_available, is_torch_npu_available

    _is_fp16_available = is_torch_npu_available() or is_torch_cuda_available()
    _cuda_only = is_torch_cuda_available() and not is_torch_npu_available()


    def infer_optim_dtype(model_dtype):
        if model_dtype == torch.bfloat16:
            return torch.bfloat16
        elif _is_fp16_available:
            return torch.float16
        return torch.float32


    def pick_kernel():
        if _cuda_only:
            return "fused"
        return "eager"
"""


def test_flag_that_also_asks_npu_is_not_a_cuda_gate(tmp_path):
    root = write_tree(tmp_path / "t", {"pkg/misc.py": MISC})
    assert _found(root, "pkg/misc.py", MISC, "elif _is_fp16_available:") == set()
    # control: a flag True only on CUDA (`and not is_npu()`) still carries its probe to the test that reads it
    assert any(sev == "warning" for _, sev, _ in _found(root, "pkg/misc.py", MISC, "if _cuda_only:"))


ENV = """\
    import platform

    import torch


    def print_env():
        info = {"Platform": platform.platform(), "PyTorch version": torch.__version__}
        try:
            import bitsandbytes

            info["Bitsandbytes version"] = bitsandbytes.__version__
        except Exception:
            pass
        try:
            import flash_attn

            info["FlashAttention"] = flash_attn.__version__
            use_fa = flash_attn.flash_attn_func
        except Exception:
            use_fa = None
        print(info, use_fa)
"""


VERSION_GATE = """\
    try:
        import flash_attn
        from flash_attn.flash_attn_interface import _flash_attn_forward
    except ImportError:
        flash_attn = None
        _flash_attn_forward = None


    def joint_attention(q, k, v):
        if flash_attn.__version__ >= "2.7.0":
            return _flash_attn_forward(q, k, v, dropout_p=0.0)
        return None
"""


def test_guarded_import_read_only_for_its_version_is_info(tmp_path):
    root = write_tree(tmp_path / "t", {"pkg/env_utils.py": ENV, "pkg/attention.py": VERSION_GATE})
    # control (Sparse-VideoGen's shape): the version is read outside the try, after `flash_attn = None`: it fails on
    # Ascend and chooses the kernel; the read keeps its severity above info
    gate = _found(root, "pkg/attention.py", VERSION_GATE, "flash_attn.__version__")
    assert gate and all(ctx != "version-probe" and sev != "info" for _, sev, ctx in gate), gate
    for needle in ("import bitsandbytes", "bitsandbytes.__version__"):
        found = _found(root, "pkg/env_utils.py", ENV, needle)
        assert found and all(sev == "info" and ctx == "version-probe" for _, sev, ctx in found), (needle, found)
    # control: flash_attn is also used as a function here, so its guarded import stays a warning
    assert ("warning" in {sev for _, sev, _ in _found(root, "pkg/env_utils.py", ENV, "import flash_attn")})


DEMO = """\
    import argparse

    import torch


    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--port", type=int, default=3000)
        p.add_argument("--device", type=str, default="cuda", choices=["cpu", "cuda", "mpx", "mps"])
        args = p.parse_args()
        return torch.zeros(1, device=args.device)


    if __name__ == "__main__":
        main()
"""


def test_cuda_among_option_choices_is_info_and_default_stays(tmp_path):
    root = write_tree(tmp_path / "t", {"demo.py": DEMO})
    run = run_static([root], jobs=1)
    line = line_of(DEMO, "choices=")
    col_choice = DEMO.splitlines()[line - 1].index('"cuda", "mpx"') - 3      # dedent of 4 spaces, 1-based
    col_default = DEMO.splitlines()[line - 1].index('"cuda", choices') - 3
    by_col = {f.col: (f.severity, (f.data or {}).get("context")) for r in run.results for f in r.findings
              if f.line == line and f.code == "NPU003"}
    assert by_col[col_choice] == ("info", "option-choices")
    assert by_col[col_default][0] == "error"         # the default is what the option picks
    # control (omniserve's `choices=["cuda"]`): a single choice is the choice, and keeps its error
    only = DEMO.replace('default="cuda", choices=["cpu", "cuda", "mpx", "mps"]', 'default=None, choices=["cuda"]')
    root2 = write_tree(tmp_path / "u", {"demo.py": only})
    run2 = run_static([root2], jobs=1)
    assert {f.severity for r in run2.results for f in r.findings if f.line == line and f.code == "NPU003"} == {"error"}


PYPROJECT = """\
    [project]
    name = "mini-engine"
    version = "0.1.0"
    dependencies = ["torch>=2.1", "transformers"]

    [project.optional-dependencies]
    cuda = [
        "flash-attn>=2.6.0",
        "triton>=2.3.0",
    ]
    npu = [
        "torch-npu>=2.2.0",
    ]
"""

PYPROJECT_CUDA_ONLY = """\
    [project]
    name = "mini-engine"
    version = "0.1.0"
    dependencies = ["torch>=2.1"]

    [project.optional-dependencies]
    cuda = [
        "flash-attn>=2.6.0",
    ]
    dev = ["pytest"]
"""


def test_cuda_extra_beside_an_npu_extra_is_info(tmp_path):
    root = write_tree(tmp_path / "t", {"pyproject.toml": PYPROJECT})
    for needle in ("flash-attn", "triton>="):
        found = _found(root, "pyproject.toml", PYPROJECT, needle)
        assert found and all(sev == "info" and ctx == "per-backend-extra" for _, sev, ctx in found), (needle, found)
    # control: a cuda extra with no other backend's extra stays an opt-in warning
    root2 = write_tree(tmp_path / "u", {"pyproject.toml": PYPROJECT_CUDA_ONLY})
    found = _found(root2, "pyproject.toml", PYPROJECT_CUDA_ONLY, "flash-attn")
    assert found and all(sev == "warning" for _, sev, _ in found), found
