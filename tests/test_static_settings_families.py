"""Settings passed as values (rules/settings.yaml, issue 14): precision switches by name, apex opt levels and apex
named in strings, flash-attention switches, and where each binding form is read (keyword, parameter default,
annotated field, enum member). Written from apex-using code outside the bench splits (DeepLearningExamples, apex
examples) and from the blind splits' misses."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, name: str = "example.py") -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


def test_parameter_defaults_and_dataclass_fields_bind_a_switch():
    found = _found("""\
        from dataclasses import dataclass

        @dataclass
        class RunConfig:
            bf16: bool = True
            fp16: bool = False
            tf32: bool | None = None

        def candidate(model, bf16: bool = True, use_flash_attn: bool = False):
            return model.to(torch.bfloat16 if bf16 else torch.float32), use_flash_attn
    """)
    assert (5, "NPU246") in found
    assert (9, "NPU246") in found
    assert not any(line in (6, 7) for line, _ in found)     # off / unset
    assert not any(code == "NPU357" for _, code in found)    # a switch that defaults to off


def test_enum_members_are_chosen_in_values_and_read_in_comparisons():
    found = _found("""\
        from fastai.callback.fp16 import AMPMode, MixedPrecision

        def to_bf16(self):
            return self.add_cb(MixedPrecision(amp_mode=AMPMode.BF16))

        def before_fit(self):
            if self.amp_mode == AMPMode.BF16:
                self.dtype = None
    """)
    assert (4, "NPU246") in found
    assert not any(line == 7 for line, _ in found)


def test_apex_opt_levels_in_argparse_configs_and_comparisons():
    found = _found("""\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--fp16_opt_level", type=str, default="O1",
                            help="Apex AMP optimization level selected in ['O0', 'O1', 'O2', and 'O3']")
        parser.add_argument("--amp", choices=["apex", "pytorch"], default="apex")
        args = parser.parse_args()
        if args.amp == "apex":
            amp_config = {"opt_level": "O2", "loss_scale": "dynamic"}
        trainer = Trainer(precision=16, amp_backend="apex", amp_level=args.amp_level)
    """)
    assert (3, "NPU317") in found
    assert not any(line == 4 for line, _ in found)    # the help text is a message
    assert (5, "NPU318") in found and (7, "NPU318") in found
    assert (8, "NPU317") in found
    assert (9, "NPU318") in found and (9, "NPU317") in found


def test_apex_module_checks_and_messages():
    found = _found("""\
        import sys

        def find_class(module, name):
            if module.startswith("apex."):
                return None
            if "apex" not in sys.modules:
                raise ImportError("Please install apex from https://www.github.com/nvidia/apex")
    """)
    assert (4, "NPU318") in found and (6, "NPU318") in found
    assert not any(line == 7 for line, _ in found)


def test_flash_attention_switch_values():
    found = _found("""\
        def build(cfg, use_flash_attn=False):
            model = Speech2Text(cfg, use_flash_attn=True)
            other = Speech2Text(cfg, use_flash_attn=use_flash_attn)
            return model, other
    """)
    assert (2, "NPU357") in found
    assert not any(line in (1, 3) for line, _ in found)


def test_torch_flash_attention_question_is_attention():
    found = _found("""\
        import torch
        if not torch.backends.cuda.is_flash_attention_available():
            pass
        op = torch.ops.xformers.efficient_attention_forward_cutlass
    """)
    assert (2, "NPU349") in found
    assert (4, "NPU347") in found


def test_a_packages_compiled_extension_absolute_and_relative():
    found = _found("""\
        from maskrcnn_benchmark import _C
        from . import _C as _ext
        from ._C import deform_conv_forward
        from torch import _C as torch_C

        def roi_align(x, rois):
            return _C.roi_align_forward(x, rois)

        def nms(boxes, scores):
            torch_C._set_grad_enabled(False)
            return _ext.nms(boxes, scores, 0.5), deform_conv_forward(boxes)
    """)
    assert {(1, "NPU358"), (2, "NPU358"), (3, "NPU358"), (7, "NPU358"), (11, "NPU358")} <= set(found)
    assert not any(code == "NPU358" for line, code in found if line in (4, 10))


def test_apex_flag_set_true_after_the_import():
    found = _found("""\
        try:
            from apex import amp
            has_apex = True
        except ImportError:
            has_apex = False
        try:
            import transformer_engine
            HAVE_TE = True
        except ImportError:
            HAVE_TE = False
    """)
    assert (3, "NPU389") in found
    assert not any(line in (5, 8, 10) for line, _ in found)


def test_dtype_tables_copies_and_schema_defaults_are_not_switches():
    found = _found("""\
        import enum
        from dataclasses import dataclass, field
        import torch

        class DtypeEnum(enum.Enum):
            fp16 = (torch.float16, "torch.float16", "fp16", "float16", "half")
            bf16 = (torch.bfloat16, "torch.bfloat16", "bf16")

        DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}

        @dataclass
        class Config:
            bf16: bool = field(default=False, metadata={"help": "bf16"})

        class Module:
            def __init__(self, config):
                self.fp16 = config.fp16
                fp16_enabled = self.fp16_enabled()
    """)
    codes = {"NPU246", "NPU247"}
    assert not [(line, code) for line, code in found if code in codes]


def test_one_setting_that_needs_two_changes_gets_a_finding_per_category():
    # auto-gptq's fused modules: `use_cuda_fp16=True` picks the CUDA kernels and float16 (issue 14 item 3)
    found = _found("""\
        import torch.nn as nn

        class FusedBaseAttentionModule(nn.Module):
            @classmethod
            def inject_to_model(cls, model, use_triton=False, group_size=-1, use_cuda_fp16=True, trainable=False):
                raise NotImplementedError()

        def load(path):
            return AutoGPTQForCausalLM.from_quantized(path, device="cuda:0", use_cuda_fp16=True)

        def load_cpu(path):
            return AutoGPTQForCausalLM.from_quantized(path, use_cuda_fp16=False)
    """)
    for line in (5, 9):
        codes = {code for ln, code in found if ln == line}
        assert {"NPU038", "NPU247"} <= codes, (line, codes)
    assert not any(line == 12 for line, _ in found)      # switched off: neither change is needed


def test_compiler_optimisation_flags_are_not_apex_opt_levels():
    # gsplat's JIT extension build: `-O3` is a compiler flag; a literal apex level stays an apex finding
    found = _found("""\
        opt_level = "-O0" if FAST_COMPILE else "-O3"
        extra_cflags = [opt_level, "-Wno-attributes"]
        amp_opt_level = "O2" if args.fp16 else "O0"
    """)
    assert not any(line in (1, 2) and code == "NPU317" for line, code in found)
    assert (3, "NPU317") in found
