"""tq54b (session 54; TUNED on heldout70's trees 3, 7, 8): CUDA sources beside their HIP twins, CUDA sources with no
code, a Makefile's CUDA arm beside its HIP arm, float64 in host smoke tests, a probe that only picks a checkpoint's
`map_location`, an app's own package read as a copy. Each shape on code like the trees it
came from, beside a control that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

_LICENCE = "/* Copyright 2023 the authors. Licensed under the Apache License, Version 2.0. */\n"
_CUDA_KERNEL = _LICENCE + """
#include "ops/reverse.h"
#include "utils/cuda_helper.h"

namespace Engine {
__global__ void reverse_forward_kernel(float const *in_ptr, float *out_ptr, long n) {
  CUDA_KERNEL_LOOP(i, n) { out_ptr[i] = in_ptr[n - 1 - i]; }
}
}; // namespace Engine
"""
_HIP_KERNEL = _LICENCE + """
#include "ops/reverse.h"
#include "utils/hip_helper.h"
#include <hip/hip_runtime.h>

namespace Engine {
__global__ void reverse_forward_kernel(float const *in_ptr, float *out_ptr, long n) {
  CUDA_KERNEL_LOOP(i, n) { out_ptr[i] = in_ptr[n - 1 - i]; }
}
}; // namespace Engine
"""
_COMMON_OP = _LICENCE + """
#include "ops/reverse.h"

namespace Engine {
Reverse::Reverse(int axis) : axis(axis) {}
}; // namespace Engine
"""


def test_cuda_source_beside_its_hip_twin_is_one_member_of_a_per_backend_set(tmp_path):
    found = dedented_tree(tmp_path, {"src/ops/reverse.cu": _CUDA_KERNEL, "src/ops/reverse.cpp": _HIP_KERNEL,
                                     "src/ops/reverse.cc": _COMMON_OP})
    assert severity_at(found, "src/ops/reverse.cu", _CUDA_KERNEL, "__global__")["NPU372"] == "info"


def test_cuda_source_beside_plain_cpp_of_the_same_stem_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, {"src/ops/reverse.cu": _CUDA_KERNEL, "src/ops/reverse.cc": _COMMON_OP,
                                     "src/ops/reverse.cpp": _COMMON_OP})
    assert severity_at(found, "src/ops/reverse.cu", _CUDA_KERNEL, "__global__")["NPU372"] == "error"


def test_cuda_sources_with_no_code_are_not_reported(tmp_path):
    empty_namespace = _LICENCE + '\n#include "ops/mean.h"\n#include "utils/cuda_helper.h"\n\nnamespace Engine {}; // namespace Engine\n'
    found = dedented_tree(tmp_path, {"tests/ops/tanh_test.cu": "", "src/ops/mean.cu": empty_namespace,
                                     "src/ops/reverse.cu": _CUDA_KERNEL})
    assert not any(path in ("tests/ops/tanh_test.cu", "src/ops/mean.cu") for path, _ in found)
    assert severity_at(found, "src/ops/reverse.cu", _CUDA_KERNEL, "__global__")["NPU372"] == "error"


def test_cuda_source_with_one_declaration_is_still_code(tmp_path):
    declared = '#include <cuda_runtime.h>\n\nnamespace Engine {\ncudaStream_t default_stream();\n}\n'
    found = dedented_tree(tmp_path, {"src/runtime/stream.cu": declared})
    assert "NPU372" in found[("src/runtime/stream.cu", 1)]


_PER_BACKEND_MK = (
    "ifndef CUDA_HOME\n"
    "CUDA_HOME = $(patsubst %/bin/nvcc,%,$(shell which nvcc | head -1))\n"
    "endif\n"
    "\n"
    "FF_CUDA_SRC += $(shell find $(FF_HOME)/src/ops/ -name '*.cu')\\\n"
    "\t\t$(shell find $(FF_HOME)/src/runtime/ -name '*.cu')\n"
    "\n"
    "FF_HIP_SRC += $(shell find $(FF_HOME)/src/ops/ -name '*.cpp')\\\n"
    "\t\t$(shell find $(FF_HOME)/src/runtime/ -name '*.cpp')\n"
    "\n"
    "NVCC_FLAGS\t+= -std=c++17\n"
    "HIPCC_FLAGS     += -std=c++17\n"
    "\n"
    "ifeq ($(strip $(USE_CUDA)),1)\n"
    "CC_FLAGS\t+= -DFF_USE_CUDA\n"
    "NVCC_FLAGS\t+= -DFF_USE_CUDA\n"
    "LD_FLAGS\t+= -lcudnn -lcublas -L$(CUDA_HOME)/lib64\n"
    "endif\n"
    "\n"
    "ifeq ($(strip $(USE_HIP)),1)\n"
    "CC_FLAGS\t+= -DFF_USE_HIP_ROCM\n"
    "HIPCC_FLAGS\t+= -DFF_USE_HIP_ROCM\n"
    "LD_FLAGS\t+= -lMIOpen -lhipblas\n"
    "endif\n"
)


def test_makefile_cuda_arm_beside_a_hip_arm_is_one_member_of_a_per_backend_build(tmp_path):
    found = dedented_tree(tmp_path, {"engine.mk": _PER_BACKEND_MK})
    assert found[("engine.mk", 5)]["NPU338"] == "info"       # FF_CUDA_SRC (beside FF_HIP_SRC)
    assert found[("engine.mk", 6)]["NPU338"] == "info"       # its continuation line
    assert found[("engine.mk", 11)]["NPU338"] == "info"      # NVCC_FLAGS (beside HIPCC_FLAGS)
    assert found[("engine.mk", 16)]["NPU338"] == "info"      # inside ifeq USE_CUDA (beside ifeq USE_HIP)
    assert found[("engine.mk", 2)]["NPU062"] == "error"      # CUDA_HOME from `which nvcc`: outside both arms


def test_makefile_with_only_a_cuda_build_keeps_its_errors(tmp_path):
    # the second arm switches an option, not a backend (`USE_AVX`, `AVX_SRC`, `AVXCC_FLAGS`): no per-backend build
    cuda_only = _PER_BACKEND_MK.replace("HIP", "AVX").replace("-lMIOpen -lhipblas", "-lm")
    found = dedented_tree(tmp_path, {"engine.mk": cuda_only})
    assert found[("engine.mk", 5)]["NPU338"] == "error"
    assert found[("engine.mk", 11)]["NPU338"] == "error"


_SMOKE_MAIN = """
    import numpy as np
    import torch
    import torch.nn as nn


    class SwinUNet(nn.Module):
        def __init__(self, params):
            super().__init__()
            self.conv = nn.Conv2d(3, params["class_num"], 1)

        def forward(self, x):
            return self.conv(x)


    if __name__ == "__main__":
        net = SwinUNet({"class_num": 2})
        net.double()
        x = np.random.rand(4, 3, 224, 224)
        xt = torch.from_numpy(x)
        y = net(xt)
        print(y.shape)
"""
_SMOKE_TEST = """
    import numpy as np
    import torch
    from pymic.net.net3d.unet3d import UNet3D


    def test_unet3d():
        params = {"in_chns": 4, "class_num": 2}
        Net = UNet3D(params)
        Net = Net.double()
        xt = torch.from_numpy(np.random.rand(4, 4, 96, 96, 96))
        print(Net(xt).shape)
"""


def test_float64_in_host_smoke_tests_is_not_reported(tmp_path):
    found = dedented_tree(tmp_path, {"pymic/net/swinunet.py": _SMOKE_MAIN, "pymic/test/test_net3d.py": _SMOKE_TEST})
    assert "NPU208" not in severity_at(found, "pymic/net/swinunet.py", _SMOKE_MAIN, "net.double()")
    assert "NPU208" not in severity_at(found, "pymic/test/test_net3d.py", _SMOKE_TEST, "Net.double()")


def test_float64_in_a_smoke_test_that_moves_the_network_is_reported(tmp_path):
    placed = _SMOKE_MAIN.replace("        net.double()\n", "        net.double()\n        net = net.to(\"cuda\")\n")
    found = dedented_tree(tmp_path, {"pymic/net/swinunet.py": placed})
    assert "NPU208" in severity_at(found, "pymic/net/swinunet.py", placed, "net.double()")


def test_float64_in_a_test_handed_a_fixture_is_reported(tmp_path):
    fixture = _SMOKE_TEST.replace("def test_unet3d():", "def test_unet3d(device):")
    found = dedented_tree(tmp_path, {"pymic/test/test_net3d.py": fixture})
    assert "NPU208" in severity_at(found, "pymic/test/test_net3d.py", fixture, "Net.double()")


_SCORING = """
    import copy

    import torch


    class EpistemicScoring:
        def __init__(self, model):
            self.model = model
            self.device = "cuda" if torch.cuda.is_available() else "cpu"

        def _load_model(self, network, model_file):
            model = copy.deepcopy(network)
            if torch.cuda.is_available():
                checkpoint = torch.load(model_file)
            else:
                checkpoint = torch.load(model_file, map_location=torch.device("cpu"))
            model.load_state_dict(checkpoint.get("model", checkpoint))
            return model.to(self.device)
"""


def test_probe_that_only_picks_a_checkpoints_map_location_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"scoring/epistemic.py": _SCORING})
    assert severity_at(found, "scoring/epistemic.py", _SCORING, "if torch.cuda.is_available():")["NPU002"] == "info"


def test_probe_whose_arms_load_different_files_keeps_its_severity(tmp_path):
    other = _SCORING.replace("checkpoint = torch.load(model_file, map_location",
                             "checkpoint = torch.load(model_file + '.cpu', map_location")
    found = dedented_tree(tmp_path, {"scoring/epistemic.py": other})
    assert severity_at(found, "scoring/epistemic.py", other, "if torch.cuda.is_available():")["NPU002"] != "info"


_APP_MAIN = """
    import lib.configs
    from monailabel.interfaces.app import MONAILabelApp
    from monailabel.utils.class_utils import get_class_names


    class MyApp(MONAILabelApp):
        def init_infers(self):
            return {c: c() for c in get_class_names(lib.configs, "TaskConfig")}
"""
_APP_TRANSFORMS = """
    import torch
    from monailabel.transform.writer import Writer


    class AddGuidanceSignal:
        def __call__(self, image):
            assert image.is_cuda
            return Writer(image)
"""
_APP_CONFIGS = """
    from lib.infers.sw_fastedit import SwFastEditInfer
    from monailabel.interfaces.config import TaskConfig


    class SwFastEdit(TaskConfig):
        infer = SwFastEditInfer
"""
_APP_INFER = """
    from lib.transforms.transforms import AddGuidanceSignal
    from monailabel.interfaces.app import MONAILabelApp


    class SwFastEditInfer:
        def pre_transforms(self):
            return [AddGuidanceSignal()]
"""
_APP_TREE = {
    "setup.py": "from setuptools import setup\nsetup(name='monailabel', packages=['monailabel'])\n",
    "monailabel/__init__.py": "",
    "monailabel/interfaces/__init__.py": "",
    "monailabel/interfaces/app.py": "class MONAILabelApp:\n    pass\n",
    "monailabel/interfaces/config.py": "class TaskConfig:\n    pass\n",
    "monailabel/transform/__init__.py": "",
    "monailabel/transform/writer.py": "class Writer:\n    def __init__(self, x):\n        self.x = x\n",
    "sample-apps/radiology/__init__.py": "",
    "sample-apps/radiology/main.py": _APP_MAIN,
    "sample-apps/radiology/lib/__init__.py": "",
    "monailabel/utils/__init__.py": "",
    "monailabel/utils/class_utils.py": "def get_class_names(module, name):\n    return [name]\n",
    "sample-apps/radiology/lib/configs/__init__.py": "",
    "sample-apps/radiology/lib/configs/sw_fastedit.py": _APP_CONFIGS,
    "sample-apps/radiology/lib/infers/__init__.py": "",
    "sample-apps/radiology/lib/infers/sw_fastedit.py": _APP_INFER,
    "sample-apps/radiology/lib/transforms/__init__.py": "",
    "sample-apps/radiology/lib/transforms/transforms.py": _APP_TRANSFORMS,
}


def _messages(tmp_path, files: dict) -> list:
    import json
    import textwrap

    from auditor.cli import main as cli_main

    for rel, src in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
    out = tmp_path / "report.json"
    cli_main([str(tmp_path), "--format", "json", "--fail-on", "never", "--no-cache", "-o", str(out)])
    return [f for f in json.loads(out.read_text())["findings"] if f["path"].endswith("transforms/transforms.py")]


def test_an_apps_own_package_built_on_the_tree_is_no_copy(tmp_path):
    found = _messages(tmp_path, _APP_TREE)
    assert found and not any("copy of another project's package" in f["message"] for f in found)


def test_a_copied_package_that_imports_only_itself_stays_a_copy(tmp_path):
    copied = {rel: src.replace("from monailabel.transform.writer import Writer", "from lib.writer import Writer")
              .replace("from monailabel.interfaces.config import TaskConfig", "from lib.writer import Writer")
              for rel, src in _APP_TREE.items()}
    copied["sample-apps/radiology/lib/writer.py"] = "class Writer:\n    def __init__(self, x):\n        self.x = x\n"
    copied["sample-apps/radiology/lib/LICENSE"] = "MIT\n"
    copied["sample-apps/radiology/lib/setup.py"] = "from setuptools import setup\nsetup(name='lib')\n"
    found = _messages(tmp_path, copied)
    assert any("copy of another project's package" in f["message"] for f in found)


_INSTALL_CUDNN = """
    #!/bin/bash
    set -euo pipefail
    cuda_version=${1:-12.1.1}
    cuda_version=$(echo "${cuda_version}" | cut -f1,2 -d'.')
    CUDNN_TARBALL_NAME=cudnn-11.1-linux-x64-v8.0.5.39.tgz
    if [[ "$cuda_version" == "10.1" ]]; then
        CUDNN_TARBALL_NAME=cudnn-10.1-linux-x64-v8.0.5.39.tgz
    elif [[ "$cuda_version" == "10.2" ]]; then
        CUDNN_TARBALL_NAME=cudnn-10.2-linux-x64-v8.0.5.39.tgz
    fi
    wget -c -q "https://developer.download.nvidia.com/compute/redist/cudnn/v8.0.5/${CUDNN_TARBALL_NAME}"
    if [[ "$cuda_version" == "11.8" ]]; then
        pip install torch --index-url https://download.pytorch.org/whl/cu118
    fi
"""


def test_cuda_version_test_of_a_branch_that_only_sets_variables_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"ci/install_cudnn.sh": _INSTALL_CUDNN})
    assert severity_at(found, "ci/install_cudnn.sh", _INSTALL_CUDNN, '== "10.2"')["NPU018"] == "info"


def test_cuda_version_test_of_a_branch_that_installs_keeps_its_severity(tmp_path):
    found = dedented_tree(tmp_path, {"ci/install_cudnn.sh": _INSTALL_CUDNN})
    assert severity_at(found, "ci/install_cudnn.sh", _INSTALL_CUDNN, '== "11.8"')["NPU018"] != "info"
