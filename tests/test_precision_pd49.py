"""Precision fixes of pd49 (issue 11; TUNED on heldout33's false rows, matsciml).

torch_scatter's `scatter()` and its sum / add / mean / std helpers are Python over `Tensor.scatter_add_`
(rusty1s/pytorch_scatter torch_scatter/scatter.py): they run on NPU tensors (the helpers and the import stay info:
the package needs its CPU build). Only the compiled operators
(scatter_max / min / mul, the softmax / logsumexp composites, segment_* and gather_*) and `scatter(reduce="max" /
"min" / "mul")` (NPU498) fail. The sources are shaped like a GemNet / DimeNet++ interaction block, written afresh.
"""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


BLOCK = """\
    import torch
    from torch import nn
    from torch_scatter import scatter, scatter_mean


    class InteractionBlock(nn.Module):
        def __init__(self, hidden_channels, num_radial):
            super().__init__()
            self.lin_rbf = nn.Linear(num_radial, hidden_channels, bias=False)
            self.lin_kj = nn.Linear(hidden_channels, hidden_channels)

        def forward(self, x, rbf, idx_kj, idx_ji, batch):
            x_kj = self.lin_kj(x) * self.lin_rbf(rbf)
            x_kj = scatter(x_kj[idx_kj], idx_ji, dim=0, dim_size=x.size(0))
            e_t = scatter(x_kj, idx_ji, dim=0, dim_size=x.size(0), reduce="mean")
            f_t = scatter(x_kj, idx_ji, 0, None, x.size(0), "add")
            return e_t + f_t, scatter_mean(x, batch, dim=0)
    """

POOL = """\
    import torch_scatter
    from torch_scatter import scatter, scatter_max, segment_csr


    def readout(h, batch, ptr):
        pooled = scatter(h, batch, dim=0, reduce="max")
        best, argmax = scatter_max(h, batch, dim=0)
        summed = segment_csr(h, ptr, reduce="sum")
        prod = torch_scatter.scatter_mul(h, batch, dim=0)
        return pooled, best, summed, prod
    """


def _codes(found):
    return {(line, f.code) for line, fs in found.items() for f in fs if f.code in ("NPU416", "NPU498")}


def test_pure_python_scatter_reductions_are_not_errors(engine):
    found = findings_by_line(engine, BLOCK, "models/pyg/dimenet_plus_plus.py")
    assert {(line, code) for line, code in _codes(found) if line > 3} == {(17, "NPU416")}     # scatter_mean
    assert {f.severity for fs in found.values() for f in fs if f.code in ("NPU416", "NPU498")} == {"info"}


def test_compiled_reductions_keep_their_error(engine):
    found = findings_by_line(engine, POOL, "models/pyg/readout.py")
    codes = _codes(found)
    assert (6, "NPU498") in codes                      # scatter(reduce="max")
    assert (7, "NPU416") in codes                      # scatter_max
    assert (8, "NPU416") in codes                      # segment_csr
    assert (9, "NPU416") in codes                      # torch_scatter.scatter_mul
    assert all(f.severity == "error" for line in (6, 7, 8, 9) for f in found[line] if f.code in ("NPU416", "NPU498"))


TRAIN = """\
    import torch
    import torch.distributed as dist


    def main(args):
        if torch.cuda.is_available():
            device = torch.device("cuda")
        elif torch.backends.mps.is_available():
            device = torch.device("mps")
        else:
            device = torch.device("cpu")
        run(0, args.gpus, device)


    def run(rank, n_gpus, device):
        dist.init_process_group(backend="gloo" if device.type != "cuda" else "nccl", world_size=n_gpus, rank=rank)
        use_amp = device.type == "cuda"
        return use_amp
    """

TENSOR_DEVICE = """\
    import torch


    def step(model, batch):
        device = batch.device
        if device.type == "cuda":
            torch.cuda.synchronize()
        return model(batch)
    """

EXPORT = """\
    import torch


    def split_model(model):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return model.to(device)


    def export(model, batch):
        device, world_size = init_process_group()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return model(batch.to(device))
    """


# TorchEasyRec's delta_embedding_dump.py shape: one function builds `device`, another takes it from its caller
PARAMETER_DEVICE = """\
    import torch


    def default_device():
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return device


    def dump(table, device):
        if device.type != "cuda":
            raise ValueError("dump needs a CUDA device")
        return table.to(device)
    """


# rvc-cli's train.py: the device reaches `run` through the arguments of the process it starts
PROCESS_DEVICE = """\
    import torch
    import torch.multiprocessing as mp


    def main(gpus):
        if torch.cuda.is_available():
            device = torch.device("cuda")
        else:
            device = torch.device("cpu")
        for rank, device_id in enumerate(gpus):
            mp.Process(target=run, args=(rank, len(gpus), device, device_id)).start()


    def run(rank, n_gpus, device, device_id):
        use_amp = device.type == "cuda"
        return use_amp
    """


def _cuda_literals(found, line):
    return {f.severity for f in found.get(line, []) if f.code == "NPU003"}


def test_type_of_a_device_the_code_built_is_compared_as_a_choice(engine):
    found = findings_by_line(engine, TRAIN, "rvc/train/train.py")
    assert _cuda_literals(found, 16) == {"warning"}
    assert _cuda_literals(found, 17) == {"warning"}


def test_type_of_a_tensors_device_stays_an_error(engine):
    found = findings_by_line(engine, TENSOR_DEVICE, "train/loop.py")
    assert _cuda_literals(found, 6) == {"error"}
    found = findings_by_line(engine, EXPORT, "utils/export_util.py")
    assert _cuda_literals(found, 11) == {"error"}     # `device` also bound from a call's tuple
    found = findings_by_line(engine, PARAMETER_DEVICE, "tools/delta_embedding_dump.py")
    assert _cuda_literals(found, 10) == {"error"}     # `device` also a parameter: the caller's device
    found = findings_by_line(engine, PROCESS_DEVICE, "rvc/train/train.py")
    assert _cuda_literals(found, 15) == {"warning"}   # the process's args hand it the built device
