"""Distributed rules (NPU1xx) on realistic code: backend constants flowing into init_process_group, env dicts
handed to launchers, HCCL-specific restrictions (reduce ops, recv without src, fp64 collectives, world sizes),
and log/assert messages that mention NCCL and must stay silent."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules, rules_by_code
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def findings(src: str, product: str = "a2"):
    engine = ENGINE if product == "a2" else StaticEngine(load_rules(), product=product)
    result = engine.analyze_bytes(textwrap.dedent(src).encode(), "dist_utils.py")
    assert result.error is None, result.error
    return result.findings


LAUNCHER = '''\
import os
import subprocess
import torch
import torch.distributed as dist
from torch.distributed import ReduceOp

BACKEND = "nccl"
_DEVICE_BACKENDS = {"cuda": "nccl", "cpu": "gloo"}


def init_distributed(rank: int, world_size: int, backend: str = "nccl"):
    """Initialise NCCL (or gloo on CPU) and check the NCCL version."""
    # NCCL_ASYNC_ERROR_HANDLING makes hangs fail fast
    os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")
    if not dist.is_nccl_available():
        raise RuntimeError("NCCL is not available; install a CUDA build")
    dist.init_process_group(BACKEND, rank=rank, world_size=world_size)
    assert dist.get_backend() == "nccl", "expected the nccl backend"
    if torch.cuda.nccl.version() < (2, 18):
        print("old NCCL")
    flags = torch.zeros(1, dtype=torch.int32)
    dist.all_reduce(flags, op=ReduceOp.BOR)
    return dist.new_group(list(range(world_size)), backend=_DEVICE_BACKENDS["cuda"])


def spawn_workers(n):
    env = dict(os.environ, NCCL_DEBUG="INFO", NCCL_IB_DISABLE="1", NCCL_BUFFSIZE=str(8 << 20))
    subprocess.run(["torchrun", f"--nproc-per-node={n}", "train.py"], env=env, check=True)
'''


def test_launcher():
    fs = findings(LAUNCHER)
    lines: dict[int, set[str]] = {}
    for f in fs:
        lines.setdefault(f.line, set()).add(f.code)
    expect = {7: "NPU101", 8: "NPU101", 11: "NPU101", 14: "NPU120", 15: "NPU121", 16: "NPU104", 18: "NPU101",
              19: "NPU101", 20: "NPU103", 23: "NPU106", 28: "NPU121"}
    for line, code in expect.items():
        assert code in lines.get(line, set()), f"line {line}: expected {code}, got {lines.get(line)}"
    for quiet in (12, 13, 17, 21):
        assert quiet not in lines, f"line {quiet} flagged: {lines[quiet]}"
    assert all(f.category == "distributed" for f in fs if f.code.startswith("NPU1"))
    subs = {(f.line, f.symbol): f for f in fs}
    assert subs[(14, "TORCH_NCCL_ASYNC_ERROR_HANDLING")].substitution == "TORCH_HCCL_ASYNC_ERROR_HANDLING"
    assert subs[(14, "TORCH_NCCL_ASYNC_ERROR_HANDLING")].fix == "safe"
    buff = subs[(28, "NCCL_BUFFSIZE")]
    # paired by spelling only (no source read pairs the names or states their units): no automatic rewrite
    assert "HCCL_BUFFSIZE" in buff.substitution and "values differ" in buff.substitution
    # HCCL_SOCKET_IFNAME is in none of the sources read (Ascend pages, torch_npu 2.14.0): no name is invented
    assert "name no HCCL counterpart" in subs[(15, "NCCL_SOCKET_IFNAME")].substitution
    assert subs[(23, "torch.distributed.ReduceOp.BOR")].severity == "error"
    assert subs[(18, "nccl")].message.endswith("(via BACKEND)")   # the constant followed into the call


def test_every_ddp_nccl_variable_has_an_answer():
    """Each NCCL_* / TORCH_NCCL_* variable torch itself lists has an entry: an HCCL name or 'no ... counterpart'."""
    import ast
    import inspect

    import torch.nn.parallel.distributed as ddp

    src = inspect.getsource(ddp._dump_DDP_relevant_env_vars)
    names = [n.value for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and ("NCCL_" in n.value)]
    rules = rules_by_code()
    known = set(rules["NPU120"].symbols) | set(rules["NPU121"].symbols)
    assert names and not [n for n in names if n not in known]
    for code in ("NPU120", "NPU121"):
        for name, d in rules[code].symbols.items():
            assert d.substitution and (d.replace or d.fix in ("none", "unsafe")), name


def test_recv_without_source_and_with_it():
    src = """
        import torch.distributed as dist
        def pipeline_step(buf, prev_rank):
            dist.recv(buf)
            dist.recv(buf, src=prev_rank)
            dist.recv(buf, prev_rank)
            req = dist.irecv(buf, tag=7)
    """
    lines = {f.line for f in findings(src) if f.code == "NPU109"}
    assert lines == {4, 7}


def test_fp64_collective_where_the_dtype_is_visible():
    src = """
        import torch
        import torch.distributed as dist
        def reduce_metrics(total, count, dev):
            dist.all_reduce(torch.tensor([total, count], dtype=torch.float64, device=dev))
            dist.all_reduce(total.double())
            dist.all_reduce(torch.tensor([total, count], dtype=torch.float32, device=dev))
            dist.broadcast(torch.zeros(3, dtype=torch.float64), src=0)
    """
    fs = [f for f in findings(src) if f.code == "NPU111"]
    assert {f.line for f in fs} == {5, 6}          # broadcast takes float64 on HCCL
    assert fs[0].severity == "error"
    assert all(f.severity == "warning" for f in findings(src, product="950") if f.code == "NPU111")


def test_world_size_literal():
    src = """
        import torch.distributed as dist
        dist.init_process_group("hccl", rank=r, world_size=6)
        dist.init_process_group("hccl", rank=r, world_size=8)
    """
    assert [f.line for f in findings(src) if f.code == "NPU110"] == [3]


def test_conditional_rule_leaves_the_name_to_the_next_rule():
    """NPU109 (recv without src) is conditional: when src is given, the name stays free for the next rule."""
    from dataclasses import replace

    base = rules_by_code()["NPU109"]
    always = replace(base, code="NPU999", name="test-recv", when={}, severity="info")
    engine = StaticEngine(load_rules() + (always,))
    src = "import torch.distributed as dist\ndist.recv(buf)\ndist.recv(buf, src=0)\n"
    got = [(f.line, f.code) for f in engine.analyze_bytes(src.encode(), "x.py").findings]
    assert got == [(2, "NPU109"), (3, "NPU999")]


def test_fp64_on_gather_stacks_on_the_compatible_mode_finding():
    src = "import torch, torch.distributed as dist\ndist.gather(torch.zeros(2, dtype=torch.float64), dst=0)\n"
    assert {"NPU108", "NPU111"} <= {f.code for f in findings(src)}


@pytest.mark.parametrize("src", [
    'import logging\nlogging.getLogger(__name__).info("NCCL_DEBUG=INFO set")\n',
    'def f():\n    """Uses the nccl backend."""\n',
    '# dist.init_process_group("nccl")\nx = 1\n',
    'raise RuntimeError("nccl backend failed: set NCCL_P2P_DISABLE=1")\n',
])
def test_messages_are_silent(src):
    assert [f for f in findings(src) if f.category == "distributed"] == []


def test_data_parallel_and_process_group_nccl():
    src = """
        import torch
        from torch.distributed.distributed_c10d import ProcessGroupNCCL
        model = torch.nn.DataParallel(model)
        opts = ProcessGroupNCCL.Options(is_high_priority_stream=True)
    """
    codes = {(f.line, f.code) for f in findings(src)}
    assert {(3, "NPU102"), (4, "NPU112"), (5, "NPU102")} <= codes


def _gen_module(name: str):
    import importlib
    import sys
    from pathlib import Path

    gen = Path(__file__).resolve().parent.parent / "rules" / "gen"
    if str(gen) not in sys.path:
        sys.path.insert(0, str(gen))
    return importlib.import_module(name)


def test_generated_hccl_rules_are_current():
    """rules/distributed_hccl.yaml is what rules/gen/hccl_rules.py builds from op_tables/hccl.json today."""
    import yaml

    mod = _gen_module("hccl_rules")
    committed = yaml.safe_load(mod.OUT.read_text())
    assert mod.build(mod.load()) == committed, "rerun: python rules/gen/hccl_rules.py"
