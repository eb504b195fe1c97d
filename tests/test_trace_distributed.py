"""`--trace --world-size N`: one rank of a real DDP / FSDP2 / DTensor job on the fake process group.

Expected volumes are computed from the fixtures' own parameter counts (not from the tool's output):
DDP all-reduces every gradient once; FSDP2 all-gathers each unit's shard (in the mixed-precision param
dtype) and reduce-scatters it (in the reduce dtype); Megatron-style TP all-reduces each block's output in
the forward and its input gradient in the backward; sequence parallelism turns those into all-gather +
reduce-scatter pairs.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.target import resolve_target
from auditor.trace import _Placer
from auditor.trace.child import run_trace
from auditor.trace.collectives import LayoutError, judge_collectives, mesh_groups, parse_layout

FIXTURES = Path(__file__).parent / "fixtures" / "trace" / "distributed"
F32, BF16 = 4, 2


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def trace(name: str, world_size: int = 8, mesh=None, entry=None) -> dict:
    layout = parse_layout(world_size, mesh)
    return run_trace(str(FIXTURES / name), entry, None, None, layout)


def step_calls(result: dict, op: str, phase: str | None = None) -> list[dict]:
    return [c for c in result["collectives"] if c["op"] == op and (phase is None or c["phase"] == phase)]


def total_bytes(calls) -> int:
    return sum(c["bytes"] * c["count"] for c in calls)


# -- DDP -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ddp():
    return trace("ddp_mlp.py")


def test_ddp_all_reduce_bytes_per_step_match_gradient_bytes(ddp):
    hidden, classes = 1024, 10
    grads = 4 * (hidden * hidden + hidden) + hidden * classes + classes          # the fixture's MLP
    assert ddp["trainable_parameters"] == grads
    reduced = total_bytes(step_calls(ddp, "all_reduce", "backward"))
    assert abs(reduced - grads * F32) <= 0.02 * grads * F32
    assert all(c["reduce_op"] == "SUM" and c["group_size"] == 8 for c in step_calls(ddp, "all_reduce"))
    # from the second step DDP's reducer rebuilds buckets (1 MB first, then 25 MB): same bytes, more calls
    [steady] = ddp["distributed"]["ddp_buckets"]
    assert sum(steady["bucket_bytes"]) == grads * F32 and steady["calls"] == 2
    # DDP's construction broadcasts the module state once: set-up, not per step
    assert [c["phase"] for c in step_calls(ddp, "broadcast")] == ["setup"]


def test_ddp_collectives_go_to_the_line_that_wrapped_the_model(ddp):
    ddp_line = line_of(FIXTURES / "ddp_mlp.py", "model = DDP(model")
    frames = {c["frame"][:2] for c in step_calls(ddp, "all_reduce")}
    assert frames == {(str(FIXTURES / "ddp_mlp.py"), ddp_line)}
    # the NCCL set-up ran against the fake group; the request is kept for the report
    assert ddp["distributed"]["requested_backends"] == {"nccl": 1}
    assert ddp["distributed"]["wrappers"] == {"ddp": 1}


# -- FSDP2 -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fsdp2():
    return trace("fsdp2_blocks.py")


def test_fsdp2_all_gather_and_reduce_scatter_match_sharded_parameter_bytes(fsdp2):
    dim, ffn, vocab, layers, world = 512, 2048, 4096, 4, 8
    block = 2 * dim + dim * ffn + ffn + ffn * dim + dim        # LayerNorm + up + down
    root = vocab * dim + dim * vocab                           # embedding + output (unsharded by blocks)
    assert fsdp2["parameters"] == layers * block + root
    source = FIXTURES / "fsdp2_blocks.py"
    block_line = line_of(source, "fully_shard(block")
    root_line = line_of(source, "fully_shard(model")

    gathers = step_calls(fsdp2, "all_gather_into_tensor")
    scatters = step_calls(fsdp2, "reduce_scatter_tensor")
    # every unit gathers its shard in the param dtype (bf16): forward once, backward again (resharded)
    assert total_bytes(c for c in gathers if c["phase"] == "forward") == (layers * block + root) // world * BF16
    assert total_bytes(c for c in gathers if c["phase"] == "backward") == layers * block // world * BF16
    # and reduce-scatters its gradient shard once in the reduce dtype (fp32)
    assert total_bytes(scatters) == (layers * block + root) // world * F32
    assert {c["bytes"] for c in scatters} == {block // world * F32, root // world * F32}
    assert all(c["buffer_bytes"] == c["bytes"] * world for c in gathers + scatters)
    assert {c["dtype"] for c in gathers} == {"bfloat16"} and {c["dtype"] for c in scatters} == {"float32"}
    assert {c["reduce_op"] for c in scatters} == {"AVG"}
    # backward collectives land on the fully_shard line of the module they belong to
    lines = {(c["phase"], c["bytes"]): c["frame"][1] for c in scatters}
    assert lines == {("backward", block // world * F32): block_line, ("backward", root // world * F32): root_line}


# -- DTensor tensor parallelism ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def tp():
    return trace("tp_mlp.py")


@pytest.fixture(scope="module")
def sequence_parallel():
    return trace("tp_mlp.py", entry="sequence_parallel_entry")


def test_tp_mlp_all_reduces_each_block_once_forward_and_once_backward(tp):
    batch, seq, dim, layers = 4, 256, 1024, 2
    activation = batch * seq * dim * F32
    down_line = line_of(FIXTURES / "tp_mlp.py", "return self.w2(")
    for phase in ("forward", "backward"):
        calls = step_calls(tp, "all_reduce", phase)
        assert sum(c["count"] for c in calls) == layers
        assert {c["bytes"] for c in calls} == {activation}
        assert {c["frame"][1] for c in calls} == {down_line}
    # proj: ColwiseParallel with a replicated output gathers the activation in the forward
    [gather] = step_calls(tp, "all_gather_into_tensor", "forward")
    assert gather["buffer_bytes"] == activation and gather["bytes"] == activation // 8
    assert not step_calls(tp, "reduce_scatter_tensor")
    # the weights were distributed from rank 0 once, at parallelize_module
    assert {c["phase"] for c in step_calls(tp, "scatter")} == {"setup"}


def test_sequence_parallel_turns_the_all_reduce_into_all_gather_and_reduce_scatter(sequence_parallel):
    batch, seq, dim, layers = 4, 256, 1024, 2
    shard = batch * seq * dim * F32 // 8
    assert not step_calls(sequence_parallel, "all_reduce")
    for op in ("all_gather_into_tensor", "reduce_scatter_tensor"):
        for phase in ("forward", "backward"):
            per_layer = step_calls(sequence_parallel, op, phase)
            assert sum(c["count"] for c in per_layer) == layers, (op, phase)
            assert {c["bytes"] for c in per_layer} == {shard}
    # Shard(-1) -> Shard(1) after proj: the all-to-all a GPU (or NPU) runs, not gloo's all-gather stand-in
    assert {c["phase"] for c in step_calls(sequence_parallel, "all_to_all_single")} == {"forward", "backward"}


def test_2d_mesh_groups_are_named_by_their_dimension():
    result = trace("fsdp_tp_2d.py", world_size=8, mesh="dp=2,tp=4")
    target = resolve_target("2.14", "a2")
    _, section = judge_collectives(result, target, _Placer(FIXTURES, FIXTURES / "fsdp_tp_2d.py", None, None))
    groups = {(c["op"], c["group"]) for c in section["calls"] if c["phase"] != "setup"}
    assert ("all_reduce", "tp (4: 0-3)") in groups
    assert ("all_gather_into_tensor", "dp (2: 0,4)") in groups
    assert ("reduce_scatter_tensor", "dp (2: 0,4)") in groups
    tp_shard = 2 * 256 * 1024 // 4                           # one block's weights on one tp rank
    assert {c["bytes"] for c in section["calls"] if c["op"] == "reduce_scatter_tensor"} == {tp_shard // 2 * F32}


def test_another_rank_sees_its_own_groups():
    result = run_trace(str(FIXTURES / "fsdp_tp_2d.py"), None, None, None, parse_layout(None, "dp=2,tp=4", rank=5))
    target = resolve_target("2.14", "a2")
    _, section = judge_collectives(result, target, _Placer(FIXTURES, FIXTURES / "fsdp_tp_2d.py", None, None))
    groups = {c["group"] for c in section["calls"]}
    assert groups == {"tp (4: 4-7)", "dp (2: 1,5)"}
    assert {c["dtype"] for c in section["calls"]} == {"float32"}      # scatter's receivers too


# -- HCCL checks -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def metrics():
    source = FIXTURES / "metrics_sync.py"
    result = trace("metrics_sync.py", world_size=4)
    return source, judge_collectives(result, resolve_target("2.14", "a2"), _Placer(FIXTURES, source, None, None))


def test_unsupported_reduce_op_is_reported_at_the_call(metrics):
    source, (findings, _) = metrics
    # torch_npu's source (ProcessGroupHCCL.cpp unsupportedOp) raises for BOR on every line: an error, at the
    # user's line
    [bor] = [f for f in findings if f.code in ("NPU161", "NPU165") and f.symbol.endswith(".BOR")]
    assert bor.line == line_of(source, "dist.all_reduce(skip, op=")       # the static pass sees only the dict
    assert bor.code == "NPU161" and bor.severity == "error" and bor.source == "trace"
    assert bor.symbol == "torch.distributed.ReduceOp.BOR"
    assert bor.data["groups"] == ["world (4: 0-3)"] and bor.data["dtypes"] == ["int32"]
    assert not [f for f in findings if f.symbol == "torch.distributed.ReduceOp.BAND"]   # never issued


def test_unsupported_dtype_is_reported_at_the_call(metrics):
    source, (findings, _) = metrics
    [fp64] = [f for f in findings if f.code == "NPU163"]
    assert fp64.line == line_of(source, "dist.all_reduce(running)")
    assert "float64" in fp64.message and "torch-distributed.md" in fp64.data["coverage_source"]


def test_group_sizes_hccl_rejects_are_reported():
    result = trace("fsdp2_blocks.py", world_size=6)
    source = FIXTURES / "fsdp2_blocks.py"
    findings, _ = judge_collectives(result, resolve_target("2.14", "a2"), _Placer(FIXTURES, source, None, None))
    rejected = {f.symbol for f in findings if f.code == "NPU164"}
    assert rejected == {"torch.distributed.all_gather_into_tensor[group of 6]",
                        "torch.distributed.reduce_scatter_tensor[group of 6]"}


def test_fsdp2_average_is_reported_as_emulated(fsdp2):
    # AVG: torch_npu's getHcclReduceOp (ProcessGroupHCCL.cpp, master) runs a SUM and divides: the emulation
    # finding, a warning (severity policy: runs, but slower)
    source = FIXTURES / "fsdp2_blocks.py"
    findings, section = judge_collectives(fsdp2, resolve_target("2.14", "a2"), _Placer(FIXTURES, source, None, None))
    assert {f.code for f in findings} == {"NPU162"}
    assert {f.severity for f in findings} == {"warning"}
    assert [r["collective"] for r in section["rows"]] == [
        "reduce_scatter_tensor", "all_gather_into_tensor", "total per step"]


# -- layout flags, CLI and JSON ------------------------------------------------------------------------

def test_parse_layout():
    assert parse_layout(None, None) is None
    assert parse_layout(8, None) == {"world_size": 8, "rank": 0, "mesh": []}
    assert parse_layout(None, "dp=2, tp=4") == {"world_size": 8, "rank": 0, "mesh": [("dp", 2), ("tp", 4)]}
    for world, mesh in ((8, "dp=2,tp=2"), (None, "dp"), (None, "dp=0"), (0, None), (None, "tp=2,tp=2")):
        with pytest.raises(LayoutError):
            parse_layout(world, mesh)


def test_mesh_groups_follow_row_major_rank_order():
    groups = mesh_groups({"world_size": 16, "rank": 5, "mesh": [("pp", 2), ("dp", 2), ("tp", 4)]})
    assert groups[(4, 5, 6, 7)] == "tp"
    assert groups[(1, 5)] == "dp"
    assert groups[(5, 13)] == "pp"


def _cli(*args, cwd=FIXTURES):
    return subprocess.run([sys.executable, "-m", "auditor.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ,
                                            "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})


def test_cli_usage_errors():
    bad = _cli("ddp_mlp.py", "--world-size", "8")
    assert bad.returncode == 2 and "--world-size and --mesh go with --trace" in bad.stderr
    bad = _cli("ddp_mlp.py", "--trace", "--world-size", "8", "--mesh", "dp=3,tp=2")
    assert bad.returncode == 2 and "has 6 ranks but --world-size is 8" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_json_has_a_top_level_collectives_list():
    run = _cli("metrics_sync.py", "--trace", "--world-size", "4", "--format", "json", "--no-cache")
    doc = json.loads(run.stdout)
    assert doc["errors"] == []
    for call in doc["collectives"]:
        assert {"op", "reduce_op", "dtype", "bytes", "group_size", "count", "path", "line"} <= set(call)
    sync = [c for c in doc["collectives"] if c["op"] == "all_reduce" and c["phase"] == "forward"]
    assert {(c["reduce_op"], c["dtype"], c["bytes"], c["path"]) for c in sync} == {
        ("BOR", "int32", 4, "metrics_sync.py"), ("SUM", "float64", 8, "metrics_sync.py")}
    rows = [(r["collective"], r["when"]) for r in doc["sections"]["collectives"]["rows"]]
    assert rows[-2:] == [("total per step", ""), ("broadcast", "set-up (once)")]     # DDP's set-up last
    assert {"NPU161", "NPU163"} <= {f["code"] for f in doc["findings"]}   # BOR raises (torch_npu source)


def test_expert_parallel_all_to_all_in_bf16_is_reported_forward_and_backward():
    source = FIXTURES / "moe_all_to_all.py"
    result = trace("moe_all_to_all.py")
    findings, section = judge_collectives(result, resolve_target("2.14", "a2"), _Placer(FIXTURES, source, None, None))
    tokens = 1024 * 512 * 2                                               # TOKENS x DIM in bf16
    calls = {(c["phase"], c["line"]): (c["count"], c["bytes"]) for c in section["calls"]}
    forward_line = line_of(source, "dist.all_to_all_single(out, x.contiguous())")
    backward_line = line_of(source, "dist.all_to_all_single(out, grad.contiguous())")
    assert calls == {("forward", forward_line): (2, tokens), ("backward", backward_line): (2, tokens)}
    assert {(f.code, f.line) for f in findings} == {("NPU163", forward_line), ("NPU163", backward_line)}


def test_entry_arguments_are_passed_by_name_only_when_declared():
    from auditor.entry import entry_arguments

    context = {"world_size": lambda: 8, "rank": lambda: 0, "device_mesh": lambda: pytest.fail("built unasked")}
    assert entry_arguments(lambda: None, context) == {}
    assert entry_arguments(lambda world_size, rank=3: None, context) == {"world_size": 8, "rank": 0}
    assert entry_arguments(lambda: None, None) == {}
