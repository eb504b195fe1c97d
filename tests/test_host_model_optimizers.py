"""NPU600 on a model that never leaves the CPU (pd56, session 32; heldout35's pyod pyg_cola.py / so_gaal.py): the
file builds the model and names no device, move, trainer or launcher, so a fused NPU optimizer has nothing to update."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of

HOST_ONLY = """\
    import numpy as np

    from .base import BaseDetector


    class CoLA(BaseDetector):
        def fit(self, X, y=None):
            import torch
            import torch.nn as nn

            model = _CoLAModel(X.shape[1], self.hidden_dim, self.num_layers)
            optimizer = torch.optim.Adam(model.parameters(), lr=self.lr)
            self.discriminator = Discriminator(self.latent_size, X.shape[1])
            optimizer_d = torch.optim.SGD(self.discriminator.parameters(), lr=self.lr_d, momentum=0.9)
            x = torch.as_tensor(np.asarray(X), dtype=torch.float32)
            for _ in range(self.epochs):
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(model(x), x)
                loss.backward()
                optimizer.step()
                optimizer_d.step()
            return self
    """

MOVED = """\
    import torch


    class Detector:
        def fit(self, X):
            model = AutoEncoder(X.shape[1]).to(self.device)
            optimizer = torch.optim.Adam(model.parameters(), lr=self.lr)
            return model, optimizer
    """

RECEIVED = """\
    import torch


    def train(model, loader, lr=1e-3):
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        for x in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
    """


# determined's PyTorchTrial: the harness builds the model with build_model() and places it, then passes it back
TRIAL = """\
    import torch
    from torch import nn

    from determined import pytorch


    class OneVarTrial(pytorch.PyTorchTrial):
        def build_model(self):
            model = nn.Linear(1, 1, False)
            model.weight.data.fill_(0)
            return model

        def optimizer(self, model):
            return torch.optim.SGD(model.parameters(), 0.001)
    """


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def test_optimizer_over_a_host_built_model_gets_no_hint(engine):
    found = codes_by_line(engine, HOST_ONLY, "pyod/models/pyg_cola.py")
    assert "NPU600" not in found.get(line_of(HOST_ONLY, "torch.optim.Adam("), set())
    assert "NPU600" not in found.get(line_of(HOST_ONLY, "torch.optim.SGD("), set())


def test_moved_or_received_models_keep_the_hint(engine):
    moved = codes_by_line(engine, MOVED, "pyod/models/auto_encoder.py")
    assert "NPU600" in moved.get(line_of(MOVED, "torch.optim.Adam("), set())      # control: moved to a device
    received = codes_by_line(engine, RECEIVED, "pyod/models/train_utils.py")
    assert "NPU600" in received.get(line_of(RECEIVED, "torch.optim.AdamW("), set())   # control: caller's model


def test_a_model_received_by_a_method_keeps_the_hint(engine):
    # control: `model` is built in build_model() but optimizer() receives it from the harness
    found = codes_by_line(engine, TRIAL, "model_def.py")
    assert "NPU600" in found.get(line_of(TRIAL, "torch.optim.SGD("), set())


def test_a_notebook_keeps_the_hint_when_another_cell_places_the_model(engine, tmp_path):
    """neurodiffeq's experiments/lid-driven-cavity-RE400.ipynb: one cell sets
    `torch.set_default_tensor_type('torch.cuda.DoubleTensor')`,
    a later cell builds the network and its optimizer, which then live on the GPU. Each cell is read alone, so the
    cell with the optimizer names no device; the hint stays (lead mend of pd56)."""
    import json

    cells = [["import torch\n", "torch.set_default_tensor_type('torch.cuda.DoubleTensor')\n"],
             ["net = FCNN(n_input_units=2, n_output_units=1, hidden_units=(32, 32))\n",
              "adam = torch.optim.Adam(net.parameters(), lr=0.001)\n"]]
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
                    for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    result = engine.analyze_bytes(json.dumps(nb, indent=1).encode("utf-8"), "experiments/lid-driven-cavity-RE400.ipynb")
    assert "NPU600" in {f.code for f in result.findings}
