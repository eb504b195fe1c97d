"""Two placements of static findings (issue 14): a flag derived from a finding and read later in a test
(`if is_nccl:` after `is_nccl = dist.get_backend() == "nccl"`) gets the definition's finding, and a name
imported inside `from X import (...)` over several lines is reported on the `from` line when no fix
rewrites it."""
from __future__ import annotations

from test_rules_apex import audit


def codes(by_line, line):
    return sorted(f.code for f in by_line.get(line, []))


def test_flags_derived_from_a_finding_are_reported_where_a_test_reads_them():
    found = audit('''\
        import importlib.util
        import torch
        import torch.distributed as dist

        HAS_FLASH_ATTN = importlib.util.find_spec("flash_attn") is not None


        def setup(args):
            is_nccl = dist.get_backend() == "nccl"
            timeout = 1800 if is_nccl else 600
            gpu_ok = torch.cuda.is_available()
            if gpu_ok and not args.cpu:
                args.device = "npu"
            n = torch.cuda.device_count()
            if n > 1:
                args.ddp = True
            if HAS_FLASH_ATTN:
                args.attn = "fa2"


        class Monitor:
            def __init__(self):
                self.on_nccl = dist.get_backend() == "nccl"

            def step(self):
                if not self.on_nccl:
                    return {}


        def other():
            if is_nccl:
                return 1
        ''')
    assert codes(found, 10) == codes(found, 9) == ["NPU101"]
    assert all(f.fix == "none" and f.severity != "error" for f in found[10])
    assert "flag `is_nccl` set on line 9" in found[10][0].message
    # a torch.cuda probe's flag: the probe is renamed where it is called, its reads follow (pd44, decision 4)
    assert codes(found, 11) == ["NPU002"] and 12 not in found
    assert 15 not in found                       # a count compared with a number is not a flag
    assert {f.category for f in found[17]} == {"attention"} and len(found[17]) == 1   # one finding per category
    assert codes(found, 26) == codes(found, 23) == ["NPU101"]   # self.on_nccl, read in another method
    assert 31 not in found                       # another function's local of the same name


def test_feature_flags_are_reported_by_name_where_a_test_reads_them():
    found = audit('''\
        from litgpt.constants import _BITANDBYTES_AVAILABLE_NOT_EQUAL_0_42_0
        from .utils import HAS_FLASH_ATTN, HAVE_TE
        try:
            import apex
            HAVE_APEX = True
        except ImportError:
            HAVE_APEX = False


        def build(model, quantize, update_available):
            if _BITANDBYTES_AVAILABLE_NOT_EQUAL_0_42_0 and quantize:
                model = convert(model)
            if HAS_FLASH_ATTN and not HAVE_TE:
                model.attn = "fa2"
            opt = "fused" if HAVE_APEX else "torch"
            while not self.cuda_available:
                break
            if update_available:
                print("HAS_FLASH_ATTN is set")
            return HAS_FLASH_ATTN
        ''')
    assert codes(found, 11) == ["NPU431"]
    assert codes(found, 13) == ["NPU391", "NPU431"]
    assert codes(found, 15) == ["NPU389"]
    assert codes(found, 16) == ["NPU030"]
    assert 18 not in found and 19 not in found   # another word, a message
    # the import of a flag spelled for flash-attn and the line that returns it: value flow (t14j) notes them as info
    # (the labelling policy from test10 on: the line holding the spelling); no warning is raised there
    assert codes(found, 2) == ["NPU321"] and codes(found, 20) == ["NPU321"]
    assert {f.severity for line in (2, 20) for f in found[line]} == {"info"}


def test_multi_line_from_import_is_reported_on_the_from_line_unless_a_fix_rewrites_the_name():
    found = audit('''\
        from megatron.core.extensions.transformer_engine import (
            TEColumnParallelLinear,
            TENorm,
        )
        from torch.cuda.amp import (
            autocast,
            GradScaler,
        )

        scaler = GradScaler()       # the names are used: an unused import is only noted, without a fix (t11t)
        with autocast():
            pass
        ''')
    assert [f.symbol.rsplit(".", 1)[-1] for f in found[1]] == ["TEColumnParallelLinear", "TENorm"]
    assert 2 not in found and 3 not in found
    assert [f.end_line for f in found[1]] == [2, 3]          # the span still ends at the name
    fixable = [f for line in (6, 7) for f in found.get(line, []) if f.fix != "none"]
    assert {f.line for f in fixable} == {6, 7}             # `audit fix` finds the names where they are
