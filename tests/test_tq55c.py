"""tq55c (precision bench, session 55; TUNED on heldout73 trees 1-4): torch's global seed spelled through an import
alias (`import torch as th; th.random.manual_seed(seed)`), ... Trees modelled on the projects' files, each with a
positive and a quiet control."""
from __future__ import annotations

import textwrap

import pytest

from tests.static_snippets import dedented_tree, severity_at


def _severity(tmp_path, rel: str, src: str, needle: str, code: str) -> str | None:
    """The severity of `code` on the line of `src` (written as the one file `rel` of a tree) holding `needle`."""
    return severity_at(dedented_tree(tmp_path, {rel: src}), rel, src, needle).get(code)

SEED_ALIASED = '''
    import random

    import numpy as np
    import torch as th


    def set_seed(seed_str):
        if not seed_str or seed_str == "none":
            return None
        seed = int(seed_str)
        random.seed(seed)
        np.random.seed(seed)
        th.random.manual_seed(seed)
        th.cuda.manual_seed_all(seed)
        return seed
'''

SEED_CUDA_ONLY = '''
    import random

    import torch as th


    def set_seed(seed):
        random.seed(seed)
        th.cuda.manual_seed_all(seed)
        return seed
'''


@pytest.mark.parametrize("src, expected", [(SEED_ALIASED, "info"), (SEED_CUDA_ONLY, "error")],
                         ids=["cuda-reseed-after-aliased-global-seed", "cuda-seed-alone-under-an-alias"])
def test_cuda_seed_under_an_alias(tmp_path, src, expected):
    assert _severity(tmp_path, "speech/utils.py", src, "th.cuda.manual_seed_all", "NPU002") == expected


TASK_OVERRIDE = '''
    from lavis.tasks.base_task import BaseTask


    class ImageTextPretrainTask(BaseTask):
        def __init__(self):
            super().__init__()

        def evaluation(self, model, data_loader, cuda_enabled=True):
            pass
'''

TASK_BASE = '''
    import torch


    class BaseTask:
        def evaluation(self, model, data_loader, cuda_enabled=True):
            results = []
            for samples in data_loader:
                if cuda_enabled:
                    samples = {k: v.cuda() for k, v in samples.items()}
                results.append(model(samples))
            return results
'''


@pytest.mark.parametrize("rel, src, expected", [("tasks/pretrain.py", TASK_OVERRIDE, "info"),
                                                 ("tasks/base.py", TASK_BASE, "warning")],
                         ids=["an-override-turns-it-off", "the-method-reads-it"])
def test_switch_parameter_of_a_method(tmp_path, rel, src, expected):
    assert _severity(tmp_path, rel, src, "cuda_enabled=True", "NPU038") == expected


DOCKERFILE_PINS = '''
    FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04
    ARG PYTORCH_VERSION=1.10
    RUN conda install -y pytorch==${PYTORCH_VERSION} torchaudio cudatoolkit=${CUDA_TOOLKIT} -c pytorch
'''

DOCKERFILE_READS = '''
    FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04
    RUN conda install -y pytorch torchaudio -c pytorch && make -C csrc CUDA_ARCH_LIST=${CUDA_ARCH_LIST}
'''


def test_version_pinned_from_a_build_variable_is_no_cuda_environment_read(tmp_path):
    found = dedented_tree(tmp_path, {"docker/Dockerfile": DOCKERFILE_PINS})
    assert "NPU004" not in severity_at(found, "docker/Dockerfile", DOCKERFILE_PINS, "cudatoolkit=")


def test_cuda_variable_passed_to_a_build_is_still_read(tmp_path):
    found = dedented_tree(tmp_path, {"docker/Dockerfile": DOCKERFILE_READS})
    assert "NPU004" in severity_at(found, "docker/Dockerfile", DOCKERFILE_READS, "CUDA_ARCH_LIST")


ROOT_README = '''
    # Panda: video captioning

    - [Splitting](./splitting) splits long videos into clips.
    - [Captioning](./captioning) holds the captioning model.
'''

ROOT_README_UNLINKED = '''
    # Panda: video captioning

    The captioning model is in the captioning folder.
'''

CAPTION_README = '''
    # Captioning

    ```
    cd Panda/captioning
    pip install -r requirements.txt
    ```

    ## Quick Demo
    ```
    python inference.py --video-list inputs/video_list.txt
    ```
'''

CAPTION_INFERENCE = '''
    import argparse

    import torch
    from video_llama.common.registry import registry


    def main(args):
        model_cls = registry.get_model_class(args.arch)
        model = model_cls.from_config(args).to("cuda")
        model.eval()
        return model


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", default="video_llama")
        main(parser.parse_args())
'''

VIDEO_LLAMA_INIT = '''
    from video_llama.common.registry import registry
'''

VIDEO_LLAMA_REGISTRY = '''
    class Registry:
        mapping = {"model_name_mapping": {}}

        @classmethod
        def get_model_class(cls, name):
            return cls.mapping["model_name_mapping"].get(name, None)


    registry = Registry()
'''

VIDEO_LLAMA_TRAIN = '''
    import torch
    from video_llama.common.registry import registry


    def train_step(model, samples):
        samples = {k: v.to("cuda") for k, v in samples.items()}
        return model(samples)
'''


def caption_tree(readme: str) -> dict[str, str]:
    return {"README.md": readme, "captioning/README.md": CAPTION_README,
            "captioning/inference.py": CAPTION_INFERENCE, "captioning/requirements.txt": "torch\nomegaconf\n",
            "captioning/video_llama/__init__.py": VIDEO_LLAMA_INIT,
            "captioning/video_llama/common/__init__.py": "",
            "captioning/video_llama/common/registry.py": VIDEO_LLAMA_REGISTRY,
            "captioning/video_llama/runners/__init__.py": "",
            "captioning/video_llama/runners/train.py": VIDEO_LLAMA_TRAIN}


def test_program_a_linked_folder_readme_runs_is_reached(tmp_path):
    found = dedented_tree(tmp_path, caption_tree(ROOT_README))
    assert severity_at(found, "captioning/inference.py", CAPTION_INFERENCE, '.to("cuda")').get("NPU003") == "error"


def test_program_no_linked_readme_runs_stays_unreached(tmp_path):
    found = dedented_tree(tmp_path, caption_tree(ROOT_README_UNLINKED))
    assert severity_at(found, "captioning/inference.py", CAPTION_INFERENCE, '.to("cuda")').get("NPU003") == "info"


RNN_TABLE = '''
    import torch.nn as nn


    def rnn_layer(mode: str, input_size: int, hidden_size: int, num_layers: int = 1) -> nn.Module:
        supported_rnn = {
            "RNN_TANH": nn.RNN,
            "RNN_RELU": nn.RNN,
            "GRU": nn.GRU,
            "LSTM": nn.LSTM
        }
        mode = mode.upper()
        if mode not in supported_rnn:
            raise ValueError(f"Unsupported RNNs: {mode}")
        return supported_rnn[mode](input_size, hidden_size, num_layers, batch_first=True)
'''

RNN_BUILT = '''
    import torch.nn as nn


    def rnn_layer(input_size: int, hidden_size: int, num_layers: int = 1) -> nn.Module:
        return nn.RNN(input_size, hidden_size, num_layers, nonlinearity="tanh", batch_first=True)
'''


def _rnn_severity(engine, src: str, needle: str) -> str | None:
    from tests.static_snippets import findings_by_line, line_of

    found = findings_by_line(engine, textwrap.dedent(src), "asr/component.py")
    return next((f.severity for f in found.get(line_of(textwrap.dedent(src), needle), []) if f.code == "NPU502"), None)


def test_class_entry_of_a_mode_table_is_info(coverage_engine):
    assert _rnn_severity(coverage_engine, RNN_TABLE, '"RNN_TANH": nn.RNN') == "info"


def test_class_built_directly_keeps_its_warning(coverage_engine):
    assert _rnn_severity(coverage_engine, RNN_BUILT, "nn.RNN(") == "warning"


DROID_ENV = '''
    name: droidenv
    channels:
      - rusty1s
      - pytorch
      - open3d-admin
      - nvidia
      - conda-forge
      - defaults
    dependencies:
      - pytorch-scatter
      - torchaudio
      - torchvision
      - open3d
      - pytorch
      - cudatoolkit=11.3
'''

DROID_MAIN = '''
    import torch
    from droid_slam.factor_graph import FactorGraph


    class Droid:
        def __init__(self, args):
            self.graph = FactorGraph(args.buffer)
            torch.cuda.set_device(0)
'''

DROID_GRAPH = '''
    import torch


    class FactorGraph:
        def __init__(self, buffer):
            self.ii = torch.zeros(buffer, device="cuda")
'''

DROID_SETUP = '''
    from setuptools import setup

    setup(name="droid_backends", packages=["droid_slam"])
'''


def _droid_tree(env_rel: str) -> dict[str, str]:
    copy = "GameScore/GameWorld/third_party/DROID-SLAM/"
    return {"GameScore/LICENSE": "Apache License 2.0\n", "GameScore/requirements.txt": "torch\n",
            "GameScore/GameWorld/__init__.py": "from GameWorld.utils import load_dimension\n",
            "GameScore/GameWorld/utils.py": "from GameWorld.third_party.droid import Droid\n\n\n"
                                           "def load_dimension(name):\n    return Droid(name)\n",
            "GameScore/GameWorld/third_party/__init__.py": "",
            "GameScore/GameWorld/third_party/droid.py": DROID_MAIN.replace("droid_slam.", "GameWorld.third_party."),
            "GameScore/GameWorld/third_party/factor_graph.py": DROID_GRAPH,
            copy + "LICENSE": "BSD 3-Clause License\n", copy + "setup.py": DROID_SETUP, env_rel: DROID_ENV}


def test_nested_checkouts_environment_file_nothing_names_is_info(tmp_path):
    rel = "GameScore/GameWorld/third_party/DROID-SLAM/environment.yaml"
    found = dedented_tree(tmp_path, _droid_tree(rel))
    assert severity_at(found, rel, DROID_ENV, "- nvidia").get("NPU018") == "info"


def test_the_copys_own_top_level_environment_file_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, _droid_tree("GameScore/environment.yaml"))
    assert severity_at(found, "GameScore/environment.yaml", DROID_ENV, "- nvidia").get("NPU018") == "error"
