"""t14z's engine changes (docs/recall.md, "t14z"): the "cuda" key of a device-type dispatch table is a device finding
that no fixer rewrites; TF32 chosen against "ieee" only as a conditional's arm; bitsandbytes switches neither from dict
literals nor from parameter defaults; setup() metadata text and precision switches shown in messages are not uses."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def run(src: str, name: str = "ops.py"):
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None, result.error
    return result.findings


def test_dispatch_table_cuda_key_is_reported_and_never_rewritten():
    findings = [f for f in run('''
        from .isotonic_cpu import isotonic_l2 as isotonic_l2_cpu
        from .isotonic_cuda import isotonic_l2 as isotonic_l2_cuda

        isotonic_l2 = {"cpu": isotonic_l2_cpu, "cuda": isotonic_l2_cuda}
    ''') if f.code == "NPU003"]
    assert [(f.line, f.fix) for f in findings] == [(5, "none")]
    # the same string as a device elsewhere keeps its safe rewrite
    assert [f.fix for f in run('device = torch.device("cuda")\n') if f.code == "NPU003"] == ["safe"]


def test_tables_that_are_not_dispatch_tables_stay_quiet():
    for src in ('kernels = {"cpu": f_cpu, "cuda": f_cuda, "npu": f_npu}\n',
                'PLATFORMS = {"cuda": CudaPlatform, "rocm": RocmPlatform}\n',
                'rng = {"cpu": torch.get_rng_state(), "cuda": rng_state_of_gpu()}\n',
                'vendor = {"cuda": "nvidia", "hip": "amd"}.get(backend, backend)\n'):
        assert not [f for f in run(src) if f.code == "NPU003"], src


def test_tf32_only_against_ieee():
    assert [f.line for f in run('p = "ieee" if dtype == torch.float32 else "tf32"\n') if f.code == "NPU200"] == [1]
    assert not [f for f in run('MODES = ("tf32", "ieee")\nm = "tf32" if fast else "bf16x3"\n') if f.code == "NPU200"]


def test_bitsandbytes_switch_not_from_markers_or_parameter_defaults():
    src = '''
        def load_weights(w, name):
            set_weight_attrs(w, {"load_in_8bit": True})


        class Config:
            def __init__(self, load_in_4bit: bool = True):
                self.load_in_4bit = load_in_4bit


        model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True)
    '''
    assert [f.line for f in run(src) if f.code == "NPU476"] == [11]


def test_setup_keywords_and_messages_are_text():
    assert not run('from setuptools import setup\nsetup(name="x", keywords="nvidia-smi gpu cuda monitoring")\n',
                   "setup.py")
    src = '''
        import warnings

        import torch

        warnings.warn(f"previous value {torch.backends.cuda.matmul.allow_tf32}")
        torch.backends.cuda.matmul.allow_tf32 = True
    '''
    assert [f.line for f in run(src) if f.code == "NPU206"] == [7]
