"""Precision fixes of tq48b (session 48, tuned on heldout58's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

import pytest

from tests.static_snippets import dedented_tree, findings_by_line, first_line_of, severity_at


# -- a CUDA-named test marker the suite's own configuration deselects without CUDA -----------------------------------

TEST_QUANT = """\
    import pytest
    import torch

    from quantlib.sim import QuantSim


    class TestQuantSim:
        def test_cpu(self):
            sim = QuantSim(torch.nn.Linear(4, 4))
            assert sim.compute(torch.ones(2, 4)).shape == (2, 4)

        @pytest.mark.cuda
        def test_gpu_inputs(self):
            sim = QuantSim(torch.nn.Linear(4, 4).cuda())
            sim.compute(torch.ones(2, 4).to("cuda:0"))

        @pytest.mark.cuda()
        @pytest.mark.parametrize("device", [torch.device("cpu"), torch.device("cuda:0")])
        def test_devices(self, device):
            QuantSim(torch.nn.Linear(4, 4)).compute(torch.ones(2, 4, device=device))
"""

CMAKE = """\
    if (ENABLE_CUDA)
        add_test(QuantTests ${Python3_EXECUTABLE} -m pytest ${CMAKE_CURRENT_SOURCE_DIR} --junitxml=out.xml)
    else (ENABLE_CUDA)
        add_test(QuantTests ${Python3_EXECUTABLE} -m pytest ${CMAKE_CURRENT_SOURCE_DIR} -m "not cuda" --junitxml=out.xml)
    endif (ENABLE_CUDA)
"""

CMAKE_VARIABLE = """\
    if (ENABLE_CUDA)
        set(CUDA_FLAG "not blah")
    else (ENABLE_CUDA)
        set(CUDA_FLAG "not cuda")
    endif (ENABLE_CUDA)
    add_custom_target(Acceptance VERBATIM COMMAND ${Python3_EXECUTABLE} -m pytest -s ${CMAKE_CURRENT_SOURCE_DIR} -m ${CUDA_FLAG})
"""

CONFTEST = """\
    import pytest
    import torch


    def pytest_collection_modifyitems(config, items):
        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="needs CUDA")
            for item in items:
                if "cuda" in item.keywords:
                    item.add_marker(skip)
"""

LIB = """\
    class QuantSim:
        def __init__(self, model):
            self.model = model

        def compute(self, x):
            return self.model(x)
"""


def _severities(found: dict, rel: str = "tests/test_quant.py") -> tuple[str | None, str | None, str | None]:
    return (severity_at(found, rel, TEST_QUANT, "Linear(4, 4).cuda()").get("NPU001"),
            severity_at(found, rel, TEST_QUANT, 'to("cuda:0")').get("NPU003"),
            severity_at(found, rel, TEST_QUANT, 'torch.device("cuda:0")]').get("NPU003"))


@pytest.mark.parametrize("folder, config, text", [
    ("tests", "CMakeLists.txt", CMAKE),               # `-m "not cuda"` in the CMake arm without CUDA
    ("nightly", "CMakeLists.txt", CMAKE_VARIABLE),    # `set(CUDA_FLAG "not cuda")` ... `-m ${CUDA_FLAG}`
    ("tests", "conftest.py", CONFTEST),               # a collection hook that skips marked items without CUDA
])
def test_cuda_marker_the_suite_deselects_is_a_skip_guard(tmp_path, folder, config, text):
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     f"{folder}/test_quant.py": TEST_QUANT, f"{folder}/{config}": text})
    assert _severities(found, f"{folder}/test_quant.py") == ("warning", "warning", "warning")


def test_cuda_marker_nothing_wires_keeps_its_errors(tmp_path):
    # a marker declared in pytest.ini but never deselected: `pytest` runs the test on Ascend as written
    found = dedented_tree(tmp_path, {"quantlib/__init__.py": "", "quantlib/sim.py": LIB,
                                     "tests/test_quant.py": TEST_QUANT,
                                     "tests/CMakeLists.txt": CMAKE.replace('-m "not cuda" ', '-m "not slow" ')})
    assert _severities(found) == ("error", "error", "error")


# -- `torch.version.cuda is not None and ...`: the operands after the gate run only on a CUDA build ----------------------

TORCH_UTILS = """\
    import torch


    def check_bloat16_supported() -> bool:
        try:
            import packaging.version
            import torch.cuda.nccl as nccl
            import torch.distributed as dist

            return (
                (torch.version.cuda is not None)
                and torch.cuda.is_bf16_supported()
                and (packaging.version.parse(torch.version.cuda).release >= (11, 0))
                and dist.is_nccl_available()
                and (nccl.version() >= (2, 10))
            )
        except Exception:
            return False


    def cuda_build() -> bool:
        if torch.version.cuda is None:
            return False
        return torch.cuda.get_device_capability()[0] >= 8


    def nccl_ready() -> bool:
        return torch.version.cuda == "12.1" or torch.cuda.is_bf16_supported()
"""


def test_operands_after_a_cuda_version_test_are_gated(tmp_path):
    found = dedented_tree(tmp_path, {"util/torch_utils.py": TORCH_UTILS})
    assert severity_at(found, "util/torch_utils.py", TORCH_UTILS, "and torch.cuda.is_bf16_supported()") == \
        {"NPU002": "warning", "NPU209": "warning"}
    assert severity_at(found, "util/torch_utils.py", TORCH_UTILS, "nccl.version()").get("NPU103") == "warning"
    # `if torch.version.cuda is None: return` gates the rest of the function
    assert severity_at(found, "util/torch_utils.py", TORCH_UTILS, "get_device_capability").get("NPU002") == "warning"
    # the test itself is the finding; a version compared with a value gates nothing after an `or`
    assert severity_at(found, "util/torch_utils.py", TORCH_UTILS, "(torch.version.cuda is not None)").get("NPU008") \
        == "error"
    assert severity_at(found, "util/torch_utils.py", TORCH_UTILS, 'torch.version.cuda == "12.1"').get("NPU209") == \
        "error"


# -- `not torch.cuda.is_available() and x.device.type != "cpu"`: the path written for hosts without CUDA ---------------

MODEL_LOAD = """\
    import torch


    class MPNN(torch.nn.Module):
        @classmethod
        def _load(cls, path, map_location):
            d = torch.load(path, map_location, weights_only=False)
            hparams = d["hyper_parameters"]
            hparams["metrics"] = [
                cls._rebuild_metric(metric)
                if not hasattr(metric, "_defaults")
                or (not torch.cuda.is_available() and metric.device.type != "cpu")
                else metric
                for metric in hparams["metrics"]
            ]
            criterion = hparams["criterion"]
            if not torch.cuda.is_available() and str(criterion.device) != "cpu":
                hparams["criterion"] = cls._rebuild_metric(criterion)
            if not torch.cuda.is_available():
                raise RuntimeError("training needs a GPU")
            return hparams
"""


def test_negated_probe_beside_an_off_host_test_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"chem/models/model.py": MODEL_LOAD})
    assert severity_at(found, "chem/models/model.py", MODEL_LOAD, 'metric.device.type != "cpu"') == {"NPU002": "info"}
    assert severity_at(found, "chem/models/model.py", MODEL_LOAD, "str(criterion.device)") == {"NPU002": "info"}
    # a probe that stops the program without CUDA keeps its error
    assert severity_at(found, "chem/models/model.py", MODEL_LOAD, "if not torch.cuda.is_available():") == \
        {"NPU002": "error"}


# -- an application's copied checkout: its examples' launchers are upstream's (policy (j)) -----------------------------

APP = """\
    import gradio as gr
    from pipeline import get_model


    def run(prompt):
        return get_model(prompt)


    gr.Interface(fn=run, inputs="text", outputs="text").launch()
"""

EXAMPLE_LAUNCHER = """\
    #!/bin/bash
    OPTIONS_NCCL="NCCL_DEBUG=info NCCL_IB_DISABLE=0 NCCL_NET_GDR_LEVEL=2"
    run_cmd="${OPTIONS_NCCL} deepspeed --num_gpus 8 finetune_t5.py --distributed-backend nccl --fp16"
    eval ${run_cmd}
"""

OWN_LAUNCHER = """\
    #!/bin/bash
    export NCCL_DEBUG=info
    torchrun --nproc_per_node 8 train_video.py --distributed-backend nccl
"""


def test_example_launchers_of_a_copied_checkout_in_an_application_are_info(tmp_path):
    found = dedented_tree(tmp_path, {
        "app.py": APP, "pipeline.py": "from sat.model.base_model import get_model\n",
        "train_video.py": "import torch\n\ntorch.distributed.init_process_group('nccl')\n",
        "finetune.sh": OWN_LAUNCHER,
        "modules/sat_lib/setup.py": "from setuptools import setup\n\nsetup(name='sat')\n",
        "modules/sat_lib/sat/__init__.py": "", "modules/sat_lib/sat/model/__init__.py": "",
        "modules/sat_lib/sat/model/base_model.py": "def get_model(x):\n    return x\n",
        "modules/sat_lib/examples/t5/finetune_t5.py": "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()\n",
        "modules/sat_lib/examples/t5/scripts/finetune_t5.sh": EXAMPLE_LAUNCHER})
    example = "modules/sat_lib/examples/t5/scripts/finetune_t5.sh"
    assert set(severity_at(found, example, EXAMPLE_LAUNCHER, "--distributed-backend nccl").values()) == {"info"}
    assert set(severity_at(found, example, EXAMPLE_LAUNCHER, "OPTIONS_NCCL=").values()) == {"info"}
    # the application's own launcher keeps its findings
    assert "error" in severity_at(found, "finetune.sh", OWN_LAUNCHER, "--distributed-backend nccl").values()


# -- a CUDA default the function only compares with "cuda" ---------------------------------------------------------

BUILDER = """\
    import gc

    import torch
    from transformers import AutoModelForCausalLM


    def load_pretrained_model(model_path, load_8bit=False, device_map="auto", device="cuda", **kwargs):
        kwargs = {"device_map": device_map, **kwargs}
        if device != "cuda":
            kwargs["device_map"] = {"": device}
        return AutoModelForCausalLM.from_pretrained(model_path, low_cpu_mem_usage=True, **kwargs)


    def load_vision_tower(path, device="cuda"):
        if device == "cuda":
            print("loading on the GPU")
        return AutoModelForCausalLM.from_pretrained(path).to(device)


    def clean_memory(device="cuda"):
        if device == "cuda":
            torch.cuda.empty_cache()
        gc.collect()
"""


def test_cuda_default_only_compared_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"llava/model/builder.py": BUILDER})
    assert severity_at(found, "llava/model/builder.py", BUILDER, 'device_map="auto", device="cuda"') == \
        {"NPU003": "info"}
    # a default the function also moves a model to keeps its finding, and so does one whose arm is CUDA's path
    assert severity_at(found, "llava/model/builder.py", BUILDER, 'def load_vision_tower').get("NPU003") == "error"
    assert severity_at(found, "llava/model/builder.py", BUILDER, 'def clean_memory').get("NPU003") == "error"


# -- a list of torch.nn classes a library builds wrappers from --------------------------------------------------------

REGISTRY = """\
    import torch
    import torch.nn as nn

    _TORCH_NN_UNARY_MODULES = [
        nn.AdaptiveAvgPool2d,
        nn.AdaptiveMaxPool2d,
        nn.AlphaDropout,
        nn.ReflectionPad3d,
    ]

    for _module_cls in _TORCH_NN_UNARY_MODULES:
        globals()["Quantized" + _module_cls.__name__] = type("Quantized" + _module_cls.__name__, (_module_cls,), {})


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.AdaptiveMaxPool2d(1)
"""


def test_module_class_registry_entries_run_no_op(coverage_engine):
    found = findings_by_line(coverage_engine, REGISTRY, "quant/fake_quant.py")
    assert not found.get(first_line_of(REGISTRY, "    nn.AdaptiveMaxPool2d,"))
    assert not found.get(first_line_of(REGISTRY, "    nn.ReflectionPad3d,"))
    # the model that builds the layer keeps the support-list hint
    assert {f.code for f in found.get(first_line_of(REGISTRY, "nn.AdaptiveMaxPool2d(1)"), [])} == {"NPU502"}


# -- an examples helper no example names ----------------------------------------------------------------------------

EXAMPLE_UTILS = """\
    import torch
    from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit


    def masked_mae_loss(y_pred, y_true):
        mask = (y_true != 0).float()
        return (torch.abs(y_pred - y_true) * mask).mean()


    def collect_metrics():
        nvmlInit()
        handle = nvmlDeviceGetHandleByIndex(0)
        info = nvmlDeviceGetMemoryInfo(handle)
        return info.used


    def peak_memory():
        nvmlInit()
        return nvmlDeviceGetMemoryInfo(nvmlDeviceGetHandleByIndex(0)).used
"""

EXAMPLE_MAIN = """\
    import torch
    from utils import *


    def main():
        loss = masked_mae_loss(torch.ones(3), torch.ones(3))
        print(loss, peak_memory())


    if __name__ == "__main__":
        main()
"""


def test_example_helper_no_example_names_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"stgnn/__init__.py": "", "examples/a3tgcn/utils.py": EXAMPLE_UTILS,
                                     "examples/a3tgcn/metr_la_main.py": EXAMPLE_MAIN})
    rel = "examples/a3tgcn/utils.py"
    assert set(severity_at(found, rel, EXAMPLE_UTILS, "handle = nvmlDeviceGetHandleByIndex(0)").values()) == {"info"}
    # a helper a main calls keeps its findings
    assert "warning" in severity_at(found, rel, EXAMPLE_UTILS, "return nvmlDeviceGetMemoryInfo(").values()


# -- `--tf32 True` reaches HF TrainingArguments only through a script that builds them (review48 item 6) ---------------

OWN_TF32 = """\
    import argparse

    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--tf32", type=lambda s: s.lower() == "true", default=False)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
"""

HF_TRAIN = """\
    from dataclasses import dataclass

    import transformers


    @dataclass
    class TrainingArguments(transformers.TrainingArguments):
        model_max_length: int = 512


    def train():
        parser = transformers.HfArgumentParser((TrainingArguments,))
        (args,) = parser.parse_args_into_dataclasses()
"""

RUN_TF32 = """\
    #!/bin/bash
    python {script} \\
        --bf16 True \\
        --tf32 True
"""


def test_tf32_option_of_a_script_own_argparse_is_the_plain_setting(tmp_path):
    run = RUN_TF32.format(script="train.py")
    found = dedented_tree(tmp_path, {"train.py": OWN_TF32, "run.sh": run})
    assert severity_at(found, "run.sh", run, "--tf32 True") == {"NPU213": "warning"}


def test_tf32_option_of_a_script_whose_comment_names_training_arguments_is_the_plain_setting(tmp_path):
    # a comment and a help string naming HF's classes build nothing: the script's own argparse option
    own = OWN_TF32.replace('    parser = argparse', '    # mirrors HfArgumentParser / TrainingArguments options\n    parser = argparse')
    own = own.replace('default=False)', 'default=False, help="as TrainingArguments.tf32")')
    run = RUN_TF32.format(script="train.py")
    found = dedented_tree(tmp_path, {"train.py": own, "run.sh": run})
    assert severity_at(found, "run.sh", run, "--tf32 True") == {"NPU213": "warning"}


def test_tf32_option_through_a_wrapper_of_hf_training_arguments_raises(tmp_path):
    # control: LLaVA's `train_mem.py` calls the package's train(), which builds HfArgumentParser(TrainingArguments)
    run = RUN_TF32.format(script="llava/train/train_mem.py")
    found = dedented_tree(tmp_path, {"llava/__init__.py": "", "llava/train/__init__.py": "",
                                     "llava/train/train.py": HF_TRAIN,
                                     "llava/train/train_mem.py": "from llava.train.train import train\n\ntrain()\n",
                                     "run.sh": run})
    assert severity_at(found, "run.sh", run, "--tf32 True").get("NPU978") == "error"


def test_example_helper_a_test_calls_keeps_its_severity(tmp_path):
    # review48 item 7: tests import the examples' helpers (`from examples.common.utils import collect_metrics`)
    utils = """\
        import torch


        def setup_device(rank):
            torch.cuda.set_device(rank)
            return torch.device("cuda", rank)


        def collect_metrics(model):
            return {"mem": torch.cuda.max_memory_allocated()}
    """
    found = dedented_tree(tmp_path, {
        "mylib/__init__.py": "", "examples/common/utils.py": utils,
        "examples/mnist/main.py": "from examples.common.utils import setup_device\n\ndevice = setup_device(0)\n",
        "tests/test_examples.py": "from examples.common.utils import collect_metrics\n\n\n"
                                  "def test_metrics():\n    assert 'mem' in collect_metrics(None)\n"})
    assert severity_at(found, "examples/common/utils.py", utils, "max_memory_allocated").get("NPU002") == "error"
