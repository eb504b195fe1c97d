"""t14v (issue 14, session 13, tuned on static test15): command-line options named for a CUDA device whose default
puts the run on one (NPU025), a device enum's CUDA member compared (NPU000), setGPU (NPU429), pytorch-pfn-extras' CuPy
bridge (NPU428) and ONNX float16 conversion (NPU210), each with the shapes read on the precision trees that must stay
quiet (an option beside a `--device` choice, an option nobody reads, `--use_cuda`, onnxruntime's ExecutionProvider
enum, torch's profiler DeviceType)."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import codes_by_line

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def codes(src: str, name: str = "train.py") -> dict[int, set[str]]:
    return codes_by_line(ENGINE, src, name)


CONTINUAL_EXAMPLE = '''\
import argparse

import torch
from torch.optim import SGD


def main(args):
    device = torch.device(
        f"cuda:{args.cuda}" if torch.cuda.is_available() and args.cuda >= 0 else "cpu"
    )
    model = build_model().to(device)
    optimizer = SGD(model.parameters(), lr=0.001, momentum=0.9)
    train(model, optimizer, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--cuda",
        type=int,
        default=0,
        help="Select zero-indexed cuda device. -1 to use CPU.",
    )
    parser.add_argument("--gpu-id", type=int, default=-1, help="GPU to pin the loader to; -1 for none")
    parser.add_argument("--ngpu", type=int, default=1, help="number of GPUs")
    parser.add_argument("--use_cuda", action="store_true", help="run on the GPU")
    args = parser.parse_args()
    main(args)
'''


def test_cuda_index_option_defaulting_to_device_zero_is_reported_on_its_name():
    found = codes(CONTINUAL_EXAMPLE)
    assert "NPU025" in found[19]                      # the `"--cuda",` line of the add_argument call
    # -1 (the CPU), a count of GPUs and a store_true switch pick no device
    assert not any("NPU025" in c for line, c in found.items() if line != 19)


GAUDI_STYLE = '''\
import argparse

import torch

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("--device", default="hpu", choices=["hpu", "gpu", "cpu"], help="device to run on")
parser.add_argument("--gpu", default=0, type=int, metavar="N", help="GPU device to target")
args = parser.parse_args()
if args.device == "gpu":
    device = torch.device("cuda:" + str(args.gpu))
'''

UNREAD_OPTION = '''\
import argparse
import sys


def main():
    parser = argparse.ArgumentParser(prog="eval")
    parser.add_argument("config", nargs="?")
    parser.add_argument("--gpu", type=str, default="0", help="GPU device IDs to use")
    args = parser.parse_args(sys.argv[2:])
    run_eval(args.config)
'''

CLICK_COMMAND = '''\
import click
import torch


@click.command()
@click.option("--gpu-id", type=int, default=0, show_default=True)
def serve(gpu_id: int) -> None:
    torch.cuda.set_device(gpu_id)
'''


def test_index_option_beside_a_device_choice_or_never_read_is_quiet_click_is_reported():
    assert not any("NPU025" in c for c in codes(GAUDI_STYLE).values())
    assert not any("NPU025" in c for c in codes(UNREAD_OPTION).values())
    assert "NPU025" in codes(CLICK_COMMAND)[6]


DEVICE_ENUM = '''\
from enum import Enum

import torch
from onnxruntime_utils import ExecutionProvider


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"
    mps = "mps"


def check_device(device: Device) -> Device:
    if device == Device.cuda:
        if not torch.cuda.is_available():
            return Device.cpu
    return device


def packages(ep):
    if ep == ExecutionProvider.CUDA:
        return ["onnxruntime-gpu"]
    return []


def kernels(prof):
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
'''


def test_device_enum_member_compared_but_not_other_enums_or_torch_profiler_types():
    found = codes(DEVICE_ENUM, "runtime.py")
    assert "NPU000" in found[14]
    assert not any("NPU000" in found.get(line, set()) for line in (9, 21, 26))


PICKERS = '''\
import setGPU  # noqa: F401
import pytorch_pfn_extras as ppe
import onnx
from onnxconverter_common import float16


def normalize(images, kernel):
    with ppe.cuda.stream(torch.cuda.current_stream()):
        return kernel(images)


def fp16_model(path):
    return float16.convert_float_to_float16(onnx.load(path), keep_io_types=True)
'''


def test_gpu_picker_import_pfn_cupy_bridge_and_onnx_fp16_conversion():
    found = codes(PICKERS, "session.py")
    assert "NPU429" in found[1]
    assert "NPU428" in found[8]
    assert "NPU210" in found[13]


CLEANRL_ARGS = '''\
import os
from dataclasses import dataclass

import torch
import tyro


@dataclass
class Args:
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    seed: int = 1
    torch_deterministic: bool = True
    cuda: bool = True
    """if toggled, cuda will be enabled by default"""
    track: bool = False


if __name__ == "__main__":
    args = tyro.cli(Args)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
'''


def test_dataclass_bool_field_named_for_cuda_and_on_is_the_option_default_t16c():
    # t16c (test17's pufferlib, CleanRL's tyro `Args`): the field is the `--cuda` option, on by default
    found = codes(CLEANRL_ARGS)
    assert "NPU025" in found.get(13, set())
    assert not any("NPU025" in c for line, c in found.items() if line != 13)
    # off, an int field (a GPU count in a resource spec), a plain class attribute, or a field nobody reads: quiet
    off = CLEANRL_ARGS.replace("cuda: bool = True", "cuda: bool = False")
    assert "NPU025" not in codes(off).get(13, set())
    counted = CLEANRL_ARGS.replace("cuda: bool = True", "gpu: int = 1").replace("args.cuda", "args.gpu")
    assert "NPU025" not in codes(counted).get(13, set())
    plain = CLEANRL_ARGS.replace("@dataclass\n", "")
    assert "NPU025" not in codes(plain).get(13, set())
    unread = '''\
from dataclasses import dataclass


@dataclass
class Args:
    seed: int = 1
    cuda: bool = True
'''
    assert "NPU025" not in codes(unread).get(7, set())
