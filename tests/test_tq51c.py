"""Precision fixes of tq51c (session 51, tuned on heldout65's labels).

A renamed fork (auditor/static/unreached_defs.py, `_fork_programs`): a research tree keeps a chat-serving framework's
fork under its own name (`graphchat/`), whose upstream modules still import the installed framework (`chatserve.*`),
so the folder reads as a renamed copy; but the tree's own programs in it (a `__main__` block importing the fork by its
own path, `from graphchat.model.builder import ...`) run, and so does what they import. The fork's modules nothing
imports stay info (policy (j)). Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, first_line_of

CONVERSATION = """\
    import dataclasses


    @dataclasses.dataclass
    class Conversation:
        system: str = ""


    def get_conv_template(name):
        return Conversation(name)
    """
CONSTANTS = """\
    WORKER_HEART_BEAT_INTERVAL = 15
    SERVER_ERROR_MSG = "network error"
    """
UTILS = """\
    import logging


    def build_logger(name):
        return logging.getLogger(name)
    """
WORKER = """\
    import torch

    from chatserve.constants import WORKER_HEART_BEAT_INTERVAL, SERVER_ERROR_MSG
    from chatserve.conversation import get_conv_template
    from chatserve.utils import build_logger

    logger = build_logger("worker")


    def generate(model, ids):
        torch.cuda.synchronize()
        return model(ids)
    """
COMPRESSION = """\
    import torch


    def compress(weights):
        out = [w.half() for w in weights]
        torch.cuda.empty_cache()
        return out
    """
BUILDER = """\
    import torch
    from graphchat.model.graph_llama import GraphLlama


    def load_pretrained_model(path):
        model = GraphLlama.from_pretrained(path)
        return model.to(device="cuda")
    """
GRAPH_LLAMA = """\
    import torch


    class GraphLlama(torch.nn.Module):
        @classmethod
        def from_pretrained(cls, path):
            return cls()
    """
EVAL = """\
    import argparse

    import torch
    from graphchat.model.builder import load_pretrained_model
    from graphchat.conversation import get_conv_template


    def run(args):
        model = load_pretrained_model(args.model)
        ids = torch.tensor([[1, 2, 3]]).cuda()
        return model(ids)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--model")
        run(parser.parse_args())
    """
UPSTREAM_CLI = """\
    import torch

    from chatserve.conversation import get_conv_template


    def main():
        print(get_conv_template("vicuna"), torch.cuda.device_count())


    if __name__ == "__main__":
        main()
    """


def _files() -> dict[str, str]:
    return {"graphchat/__init__.py": "", "graphchat/conversation.py": CONVERSATION,
            "graphchat/constants.py": CONSTANTS, "graphchat/utils.py": UTILS,
            "graphchat/serve/__init__.py": "", "graphchat/serve/worker.py": WORKER,
            "graphchat/serve/cli.py": UPSTREAM_CLI,
            "graphchat/model/__init__.py": "", "graphchat/model/compression.py": COMPRESSION,
            "graphchat/model/builder.py": BUILDER, "graphchat/model/graph_llama.py": GRAPH_LLAMA,
            "graphchat/eval/__init__.py": "", "graphchat/eval/run_graph_eval.py": EVAL}


def _severities(found: dict, path: str, src: str, needle: str) -> set[str]:
    return set(found.get((path, first_line_of(src, needle)), {}).values())


def test_a_program_importing_a_renamed_fork_by_its_own_path_runs(tmp_path):
    found = dedented_tree(tmp_path, _files())
    assert "error" in _severities(found, "graphchat/eval/run_graph_eval.py", EVAL, ".cuda()")
    # what the program imports runs with it
    assert "error" in _severities(found, "graphchat/model/builder.py", BUILDER, 'device="cuda"')


def test_the_forks_upstream_modules_nothing_imports_stay_info(tmp_path):
    found = dedented_tree(tmp_path, _files())
    assert _severities(found, "graphchat/model/compression.py", COMPRESSION, "empty_cache") == {"info"}
    assert _severities(found, "graphchat/serve/worker.py", WORKER, "synchronize") == {"info"}
    # an upstream program importing only the upstream name is upstream's, nothing of the tree's
    assert _severities(found, "graphchat/serve/cli.py", UPSTREAM_CLI, "device_count") == {"info"}


# An image-editing application (a Gradio demo at its root) carrying a DINOv2 checkout `dinov2/` (its hubconf.py,
# setup.py and licence beside the package `dinov2/dinov2/`), reached only through hubconf's model builders: the
# checkout's evaluation and training programs are upstream's, which nothing in the app runs (policy (j)).
DEMO = """\
    import gradio as gr
    import torch

    from editor.encoder import ImageEncoder

    encoder = ImageEncoder().cuda()


    def edit(image):
        return encoder(torch.as_tensor(image).cuda())


    if __name__ == "__main__":
        gr.Interface(fn=edit, inputs="image", outputs="image").launch()
    """
ENCODER = """\
    import sys

    import torch

    sys.path.append("./dinov2")
    import hubconf


    class ImageEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = hubconf.dinov2_vitg14()

        def forward(self, x):
            return self.backbone(x)
    """
HUBCONF = """\
    from dinov2.models.vision_transformer import vit_giant2
    from dinov2.layers.mlp import Mlp


    def dinov2_vitg14():
        return vit_giant2(ffn_layer=Mlp)
    """
VIT = """\
    import torch

    from dinov2.layers.mlp import Mlp


    def vit_giant2(ffn_layer=Mlp):
        return torch.nn.Sequential(ffn_layer())
    """
MLP = """\
    import torch


    class Mlp(torch.nn.Module):
        def forward(self, x):
            return x
    """
KNN = """\
    import argparse

    import torch

    from dinov2.models.vision_transformer import vit_giant2
    from dinov2.eval.setup import setup_and_build_model


    def eval_knn(model, loader):
        with torch.cuda.amp.autocast(dtype=torch.half):
            return [model(x.cuda()) for x in loader]


    def main(args):
        model = setup_and_build_model(args)
        return eval_knn(model, [])


    if __name__ == "__main__":
        main(argparse.ArgumentParser().parse_args())
    """
EVAL_SETUP = """\
    import torch

    from dinov2.models.vision_transformer import vit_giant2


    def setup_and_build_model(args):
        model = vit_giant2()
        model.cuda()
        return model
    """
CHECKOUT_SETUP = """\
    from setuptools import find_packages, setup

    setup(name="dinov2", packages=find_packages())
    """


def _app_files() -> dict[str, str]:
    return {"run_gradio_demo.py": DEMO, "editor/__init__.py": "", "editor/encoder.py": ENCODER,
            "dinov2/hubconf.py": HUBCONF, "dinov2/setup.py": CHECKOUT_SETUP, "dinov2/LICENSE": "Apache License\n",
            "dinov2/dinov2/__init__.py": "", "dinov2/dinov2/models/__init__.py": "",
            "dinov2/dinov2/models/vision_transformer.py": VIT, "dinov2/dinov2/layers/__init__.py": "",
            "dinov2/dinov2/layers/mlp.py": MLP, "dinov2/dinov2/eval/__init__.py": "",
            "dinov2/dinov2/eval/knn.py": KNN, "dinov2/dinov2/eval/setup.py": EVAL_SETUP}


def test_an_applications_copied_checkout_runs_only_what_it_imports(tmp_path):
    found = dedented_tree(tmp_path, _app_files())
    assert _severities(found, "dinov2/dinov2/eval/knn.py", KNN, "autocast") == {"info"}
    assert _severities(found, "dinov2/dinov2/eval/setup.py", EVAL_SETUP, "model.cuda()") == {"info"}
    # the app's own code keeps its findings
    assert "error" in _severities(found, "run_gradio_demo.py", DEMO, "ImageEncoder().cuda()")


ENV_HEAD = """\
    name: editor
    channels:
      - defaults
    dependencies:
      - _libgcc_mutex=0.1=main
      - python=3.8.5=h7579374_1
      - pip=23.3=py38h06a4308_0
      - pip:
    """.rstrip(" ")
FREEZE = [f"pkg{i}=={i}.0.1" for i in range(18)] + [
    "nvidia-cublas-cu11==11.10.3.66", "nvidia-cusparse-cu11==11.7.4.91", "torch==2.0.0", "torchvision==0.15.1",
    "triton==2.0.0", "xformers==0.0.18"]


def test_a_conda_env_files_pip_freeze_keeps_torchs_runtime_wheels_at_info(tmp_path):
    env = ENV_HEAD + "".join(f"            - {item}\n" for item in FREEZE)
    found = dedented_tree(tmp_path, {"environment.yaml": env, "app.py": "import torch\n"})
    assert _severities(found, "environment.yaml", env, "nvidia-cusparse-cu11") == {"info"}
    assert _severities(found, "environment.yaml", env, "triton==") == {"info"}
    # a CUDA-only library the user asked for keeps its severity
    assert "error" in _severities(found, "environment.yaml", env, "xformers")
    # a hand-written pip list (no freeze) keeps the wheel's finding
    short = ENV_HEAD + "            - nvidia-cusparse-cu11==11.7.4.91\n            - torch==2.0.0\n"
    found = dedented_tree(tmp_path / "short", {"environment.yaml": short, "app.py": "import torch\n"})
    assert _severities(found, "environment.yaml", short, "nvidia-cusparse-cu11") != {"info"}


DOCKERFILE = """\
    FROM registry.access.redhat.com/ubi9/ubi:9.2 AS cuda-base
    RUN dnf install -y dnf-plugins-core && dnf clean all
    RUN dnf config-manager \\
           --add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo \\
        && dnf install -y cuda-cudart-12-1 cuda-compat-12-1 \\
        && dnf clean all
    """


def test_adding_nvidias_repository_installs_nothing(tmp_path):
    found = dedented_tree(tmp_path, {"Dockerfile": DOCKERFILE, "app.py": "import torch\n"})
    assert _severities(found, "Dockerfile", DOCKERFILE, "--add-repo") == {"info"}
    # what installs from the repository keeps its finding
    assert "error" in _severities(found, "Dockerfile", DOCKERFILE, "cuda-cudart-12-1")


TRAINER = """\
    import torch
    from transformers import Trainer


    class DistillTrainer(Trainer):
        def train_step(self, model, teacher, batch):
            if self.args.n_gpu > 1:
                model = torch.nn.DataParallel(model)
                teacher = torch.nn.DataParallel(teacher)
            return model(**batch).loss
    """


def test_dataparallel_under_transformers_n_gpu_is_behind_a_cuda_gate(tmp_path):
    found = dedented_tree(tmp_path, {"src/trainer.py": TRAINER})
    assert _severities(found, "src/trainer.py", TRAINER, "DataParallel(model)") == {"warning"}


BRANCHES = """\
    import torch
    from torch import nn


    class ModelBranch(nn.Module):
        def __init__(self, base_model, num_layers_unfrozen):
            super().__init__()
            self.layers = base_model.layers[-num_layers_unfrozen:]
            self.model_parallel = False
            self.device_map = None


    class GPTModelBranch(ModelBranch):
        def forward(self, hidden_states):
            for block in self.layers:
                if self.model_parallel:
                    torch.cuda.set_device(hidden_states.device)
                hidden_states = block(hidden_states)
            return hidden_states
    """
BRANCHES_ON = BRANCHES + """\


    class ParallelBranch(ModelBranch):
        def parallelize(self):
            self.model_parallel = True
    """


def test_a_flag_a_base_class_sets_only_off_leaves_the_subclass_branch_off(tmp_path):
    found = dedented_tree(tmp_path, {"trlx/models/modeling_ppo.py": BRANCHES})
    assert _severities(found, "trlx/models/modeling_ppo.py", BRANCHES, "set_device") == {"info"}
    # a subclass that turns the flag on keeps the finding
    found = dedented_tree(tmp_path / "on", {"trlx/models/modeling_ppo.py": BRANCHES_ON})
    assert "info" not in _severities(found, "trlx/models/modeling_ppo.py", BRANCHES_ON, "set_device")
