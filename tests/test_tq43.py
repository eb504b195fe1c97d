"""Precision fixes of tq43 (session 43, tuned on heldout47 / heldout48's labels). Each family has a positive case (the
row the labellers called false, in code written afresh in the shape of its tree) and a control that keeps its
finding."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

# -- strings that only name or store something are no CUDA definition (LLMBox's ModelArguments) ---------------------

ARGUMENTS = """\
from dataclasses import dataclass
from typing import ClassVar, Dict, Optional, Set


@dataclass
class ModelArguments:
    model_name_or_path: str = "gpt2"
    model_backend: Optional[str] = None
    vllm: Optional[bool] = None
    prefix_caching: Optional[bool] = None
    flash_attention: bool = True
    gptq: bool = False
    device_map: str = "auto"

    # simplify logging with model-specific arguments
    _model_specific_arguments: ClassVar[Dict[str, Set[str]]] = {
        "vllm": {"vllm", "prefix_caching", "flash_attention", "gptq"},
        "huggingface": {"device_map", "vllm", "prefix_caching", "flash_attention", "gptq"},
    }

    def __post_init__(self):
        if self.model_backend is None:
            if self.vllm is not None:
                self.model_backend = "vllm" if self.vllm else "huggingface"
            else:
                self.model_backend = "vllm"
"""

METRIC = """\
from .arguments import ModelArguments


def build_args(name):
    return ModelArguments(model_name_or_path=name)
"""

# control: a wrapper whose body calls the CUDA kernel is still the project's own flash-attn code
WRAPPER = """\
from flash_attn import flash_attn_func


class FlashAttention:
    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True)
"""

USER = """\
from .wrapper import FlashAttention


def attend(q, k, v):
    return FlashAttention().forward(q, k, v)
"""


def test_option_names_and_stored_values_make_no_cuda_definition(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/arguments.py": ARGUMENTS, "pkg/metric.py": METRIC,
                             "pkg/wrapper.py": WRAPPER, "pkg/user.py": USER})
    arguments = _in(found, "pkg/arguments.py")
    # the flash_attention string names the class's own field, in a set of field names: no implementation chosen
    assert not any("NPU386" in codes for codes in arguments.values()), arguments
    # the options class is no CUDA code its importers use: no NPU321 / NPU417 at the import or the call
    metric = _in(found, "pkg/metric.py")
    assert not any(code in codes for codes in metric.values() for code in ("NPU321", "NPU417")), metric
    # control: the importer of a real flash-attn wrapper keeps its cross-file pointer
    user = _in(found, "pkg/user.py")
    assert any("NPU321" in codes for codes in user.values()), user


CHOICES = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--attn", default="sdpa")
SUPPORTED = ["flash_attention_3", "sdpa"]


class Settings:
    sdpa: bool = True
"""


def test_attention_choices_list_keeps_its_finding(tmp_path: Path) -> None:
    # a list of implementations, most of them no field of the file: NPU386 stays where it was
    found = _tree(tmp_path, {"train.py": CHOICES})
    assert "NPU386" in _in(found, "train.py").get(5, {}), found
