"""The staged-migration checklist (`audit stages`): single card, one machine, multi-node, as markdown.

Each stage lists the exact commands to run (this tool's, torch_npu's, msprobe's), what to record, the pass
criteria, and the environment variables to set. Facts about the variables (default, products, meaning,
advice) come from op_tables/env.json, built from Ascend's environment-variable pages (Ascend/pytorch
docs/zh/api/environment_variable/) and msprof-analyze's advisor rules; entries whose only source is not a
public page are left out. The product's name and bf16 support come from op_tables/products.json. The
memory arithmetic is mixed-precision AdamW's 16 bytes per parameter and its ZeRO shardings (Rajbhandari
et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC 2020,
https://arxiv.org/abs/1910.02054, section 3.1 and figure 1).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from auditor.data import tables_dir

MODEL_SIZES = ("125m", "1b", "7b", "13b", "70b")
EXECUTE_MAX_PARAMS = 150_000_000    # execute mode's size guard (auditor/execute/step.py MAX_PARAMS)
BYTES_ADAMW_MIXED = 16              # ZeRO paper 3.1: fp16/bf16 weights 2 + gradients 2 + fp32 master, m, v 12
ENV_PAGES = "https://gitcode.com/Ascend/pytorch/blob/master/docs/zh/api/environment_variable/"
MSPROF_ANALYZE = "https://gitcode.com/Ascend/msprof-analyze (msprof_analyze/advisor/rules/en/environment_variable_info.yaml)"
NPU_SMI_TOPO = "https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/re/npu/npusmi_069.html"
MSPROBE_DOCS = "https://gitcode.com/Ascend/msprobe (docs: dump, compare; PyPI mindstudio-probe)"

# Why each variable matters at each stage: our words; every fact about the variable itself comes from env.json.
STAGE_ENV = {
    "single": [
        ("TORCH_NPU_FALLBACK_CPU_DISABLE", "set to 1 for one run: an operator without an NPU kernel then raises "
                                           "instead of silently running on the CPU, so every fallback is found"),
        ("ASCEND_LAUNCH_BLOCKING", "set to 1 only while debugging an error: operators run synchronously and the "
                                   "Python stack points at the failing one (slow; unset for timing)"),
        ("INF_NAN_MODE_ENABLE", "keep the default (INF_NAN mode) so inf/nan propagate as on the GPU and the "
                                "dump comparison sees them"),
        ("PYTORCH_NPU_ALLOC_CONF", "the caching allocator's settings; compare peak memory with the same setting "
                                   "on both sides (PYTORCH_CUDA_ALLOC_CONF is its CUDA twin)"),
        ("TASK_QUEUE_ENABLE", "operator dispatch queue; leave it on (default) when timing a step"),
        ("ACL_OP_COMPILER_CACHE_MODE", "operator compile cache: the first steps compile, so time later steps"),
    ],
    "node": [
        ("TORCH_HCCL_ASYNC_ERROR_HANDLING", "turn collective errors and timeouts into a process exit instead of "
                                            "a hang"),
        ("TORCH_HCCL_BLOCKING_WAIT", "blocking wait() for collectives while validating: a stuck rank raises"),
        ("TORCH_HCCL_DESYNC_DEBUG", "on a collective timeout, report which rank is out of step"),
        ("HCCL_EVENT_TIMEOUT", "how long a collective's event may take; raise it for long first steps"),
        ("P2P_HCCL_BUFFSIZE", "point-to-point (isend/irecv, pipeline parallelism) communicator buffer"),
        ("CPU_AFFINITY_CONF", "bind each card's host threads to its CPU cores (see `npu-smi info -t topo` for "
                              "the CPU-NPU affinity)"),
        ("NPU_ASD_ENABLE", "feature-value detection: flags silent data corruption in activations' gradients "
                           "during long runs"),
        ("RANK_TABLE_FILE", "optional on one machine: a rank table fixes which device each rank uses and how "
                            "HCCL links them; without it HCCL negotiates the links (the default)"),
    ],
    "multi": [
        ("RANK_TABLE_FILE", "a rank table describes every node's devices and addresses for HCCL link setup; "
                            "without it HCCL negotiates the links itself"),
        ("HCCL_ALGO", "the cross-server collective algorithm; leave it unset (automatic) unless profiling "
                      "shows a better choice"),
        ("HCCL_EVENT_TIMEOUT", "cross-node collectives are slower to start: raise the timeout before suspecting "
                               "a hang"),
    ],
}


class StagesError(ValueError):
    """A size or product the checklist cannot be made for: the CLI exits 2 with the message."""


@dataclass(frozen=True)
class Plan:
    params: float
    product: str
    product_title: str
    bf16: bool
    nodes: int
    cards_per_node: int
    entry: str

    @property
    def cards(self) -> int:
        return self.nodes * self.cards_per_node

    @property
    def amp(self) -> str:
        return "bf16" if self.bf16 else "fp16"


def parse_size(text: str) -> float:
    """'7b', '7B', '125m', '1.5b', '7000000000' -> parameters."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmbt]?)\s*", text.lower())
    if not m:
        raise StagesError(f"--model-size {text!r}: give a number of parameters such as 7b, 13b, 350m or 7000000000")
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[m.group(2)]
    if value < 1e6:
        raise StagesError(f"--model-size {text!r}: {value:,.0f} parameters is too small to plan stages for")
    return value


@lru_cache(maxsize=None)
def _table(name: str) -> dict:
    return json.loads((tables_dir() / name).read_text(encoding="utf-8"))


def _product(product: str) -> tuple[str, str, bool]:
    from auditor.target import TargetError, resolve_target

    try:
        target = resolve_target(None, product)
    except TargetError as exc:
        raise StagesError(str(exc)) from None
    profile = _table("products.json")["profiles"].get(target.product, {})
    # True / False / "unverified": only a source that says yes makes bf16 the candidate
    bf16 = profile.get("dtypes", {}).get("bfloat16", {}).get("supported", "unverified")
    return target.product, profile.get("title") or target.describe(), bf16


def _source_link(source: str) -> str:
    """A public address for an env.json source ('pytorch/docs/environment_variable/...md:1 (...)')."""
    links = []
    for part in source.split(";"):
        part = part.strip()
        m = re.match(r"pytorch/docs/environment_variable/(\S+?\.md)", part)
        if m:
            links.append(ENV_PAGES + m.group(1))
        elif part.startswith("msprof-analyze/"):
            links.append(MSPROF_ANALYZE)
    return ", ".join(dict.fromkeys(links))


def _env_rows(stage: str, product: str) -> list[str]:
    variables = _table("env.json")["variables"]
    rows = []
    for name, why in STAGE_ENV[stage]:
        v = variables.get(name)
        if v is None:
            continue
        link = _source_link(v.get("source", ""))
        if not link:
            continue   # only facts a user can open
        if v.get("products") and product not in v["products"]:
            continue
        default = v.get("default")
        advice = v.get("advice")
        rows.append(f"| `{name}` | {why} | {('`' + str(default).strip('`') + '`') if default is not None else '—'} | "
                    f"{('`' + advice + '`') if advice else '—'} | {link} |")
    if not rows:
        return []
    return ["| variable | why at this stage | default | advice in the table | source |", "|---|---|---|---|---|", *rows]


def _gib(n: float) -> str:
    return f"{n / 2**30:,.0f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def _memory(plan: Plan, cards: int) -> list[str]:
    p = plan.params
    states = p * BYTES_ADAMW_MIXED
    rows = [f"Model states in mixed-precision AdamW: {p / 1e9:.2f}B parameters x {BYTES_ADAMW_MIXED} bytes = "
            f"{_gib(states)} before activations (ZeRO paper, section 3.1). Per card on {cards} card(s):", "",
            "| sharding | bytes per parameter per card | model states per card |", "|---|---|---|"]
    for label, per_param in (("none (DDP)", 16.0), ("optimizer states (ZeRO-1)", 4 + 12 / cards),
                             ("+ gradients (ZeRO-2)", 2 + 14 / cards), ("+ weights (ZeRO-3 / FSDP FULL_SHARD)", 16 / cards)):
        rows.append(f"| {label} | {per_param:.2f} | {_gib(p * per_param)} |")
    rows += ["", "Compare the per-card figure plus activations with the card's HBM as `npu-smi info` reports it."]
    return rows


def checklist(model_size: str, product: str, *, nodes: int = 1, cards_per_node: int = 8, entry: str = "train.py") -> str:
    if nodes < 1 or cards_per_node < 1:
        raise StagesError("--nodes and --cards-per-node must be at least 1")
    params = parse_size(model_size)
    code, title, bf16 = _product(product)
    plan = Plan(params, code, title, bf16 is True, nodes, cards_per_node, entry)
    command = (f"audit stages --model-size {model_size} --product {product} --nodes {nodes}"
               + (f" --cards-per-node {cards_per_node}" if cards_per_node != 8 else "")
               + (f" --entry {entry}" if entry != "train.py" else ""))
    out = [f"# Staged migration checklist: {params / 1e9:.3g}B-parameter model on {title}, "
           f"{nodes} node(s) x {cards_per_node} cards", "",
           f"Generated by `{command}` (npu-audit). Work through the stages in order; each ends with a pass "
           f"criterion. `{entry}` stands for your training script, `model_small.py` for an entry file whose "
           f"`audit_entry()` builds a reduced config of the same model (see docs/execute.md).", "",
           f"Candidate precision: **{plan.amp}**" + (
               "" if bf16 is True else f" ({title} has no bf16, op_tables/products.json)" if bf16 is False
               else f" (bf16 on {title} is unverified in the sources, op_tables/products.json)")
           + ". Thresholds in `audit compare` are msprobe's (op_tables/msprobe_thresholds.json).", ""]
    out += _stage_single(plan)
    out += _stage_node(plan)
    out += _stage_multi(plan)
    out += ["## Not covered", "",
            "* `audit compare` compares single-process dumps; for the multi-card stages compare the loss curves "
            "you log (this tool does not dump per-rank runs yet).",
            "* The CUDA and NPU paths of `--execute --dump` are written against torch's and torch_npu's APIs but "
            "have not been run on a GPU or NPU by this project's tests.",
            "* Pass criteria for step time and memory (`--max-time-ratio 1.5`, `--max-memory-ratio 1.2`) are this "
            "tool's defaults, not published Ascend numbers: set your own.", ""]
    return "\n".join(out)


def _stage_single(plan: Plan) -> list[str]:
    amp = plan.amp
    small = "model_small.py"
    fits = plan.params <= EXECUTE_MAX_PARAMS
    size_note = ("" if fits else
                 f"The full model ({plan.params / 1e9:.3g}B parameters) is above execute mode's 150M-parameter "
                 f"size guard (its model states alone are {_gib(plan.params * BYTES_ADAMW_MIXED)}, see stage 2): dump a "
                 f"reduced config of the same blocks (fewer layers and a smaller hidden size, at most 150M "
                 f"parameters; `--hf-config small_config.json` works for transformers models).")
    lines = ["## Stage 1: single card", "",
             "Goal: the code runs on one NPU, no operator falls back to the CPU in the step, and one training "
             "step matches the GPU module by module.", ""]
    if size_note:
        lines += [size_note, ""]
    lines += [
        "Commands (GPU machine):", "", "```sh",
        f"audit check . --product {plan.product} --format markdown -o stage1-static.md",
        f"audit {plan.entry} --trace --product {plan.product} --format json -o stage1-trace.json",
        f"audit {small} --execute --device cuda --amp fp32 --dump dumps/gpu-fp32 --steps 5",
        f"audit {small} --execute --device cuda --amp {amp} --dump dumps/gpu-{amp} --steps 5 --inputs dumps/gpu-fp32/inputs.pt",
        "```", "",
        "Copy `dumps/` to the NPU machine, then:", "", "```sh",
        "npu-smi info",
        'python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__, torch.npu.is_available())"',
        f"TORCH_NPU_FALLBACK_CPU_DISABLE=1 audit {small} --execute --device npu --amp {amp}",
        f"audit {small} --execute --device npu --amp {amp} --dump dumps/npu-{amp} --steps 5 --inputs dumps/gpu-fp32/inputs.pt",
        f"audit compare dumps/gpu-{amp} dumps/npu-{amp} --format markdown -o stage1-compare.md",
        f"audit compare dumps/gpu-fp32 dumps/npu-{amp} --format json -o stage1-vs-fp32.json",
        "```", "",
        f"msprobe (Ascend's accuracy tool, {MSPROBE_DOCS}) on the full training script, both machines:", "", "```python",
        "from msprobe.pytorch import PrecisionDebugger",
        'debugger = PrecisionDebugger(task="statistics", dump_path="./msprobe_dump_npu", level="L0")  # _gpu on the GPU; L0: modules',
        "# per step: debugger.start(model) ... forward, backward, optimizer.step() ... debugger.stop(); debugger.step()",
        "```", "", "```sh",
        "msprobe compare -m auto -tp ./msprobe_dump_npu/step0 -gp ./msprobe_dump_gpu/step0 -o ./msprobe_compare -da   # -da: first diff",
        "```", "",
        "Record: `stage1-static.md`, `stage1-trace.json`, the four dump folders (their `manifest.json` holds "
        "device, torch / torch_npu / CANN versions, dtype policy, step time and peak memory), both compare "
        "reports, msprobe's compare output.", "",
        "Pass when:",
        "* `audit check` reports no `error` finding that is not fixed or in a reviewed baseline (`--baseline`);",
        "* the run with `TORCH_NPU_FALLBACK_CPU_DISABLE=1` completes (no CPU fallback in the step);",
        f"* `audit compare dumps/gpu-{amp} dumps/npu-{amp}` exits 0: no NPU290 first divergence, no NPU293 loss "
        f"divergence (msprobe's bars; the loss within 16 x {amp} rtol per step for a pass without warning);",
        f"* `audit compare dumps/gpu-fp32 dumps/npu-{amp}` shows the same: {amp} error stays within its budget;",
        "* step time and peak memory within the ratios you set (`--max-time-ratio`, `--max-memory-ratio`).", "",
        "Environment (from op_tables/env.json):", "", *_env_rows("single", plan.product), ""]
    return lines


def _stage_node(plan: Plan) -> list[str]:
    n = plan.cards_per_node
    lines = [f"## Stage 2: one machine, {n} cards", "",
             "Goal: the distributed job (HCCL backend) trains on one machine with the loss curve of the GPU "
             "machine and the expected speed-up.", "",
             *_memory(plan, n), "",
             "Commands (NPU machine):", "", "```sh",
             "npu-smi info -t topo        # CPU-NPU affinity and the links between the cards",
             f"audit check . --product {plan.product} --select NPU1 --format markdown -o stage2-distributed.md",
             f"torchrun --nproc_per_node {n} {plan.entry}   # with torch.distributed.init_process_group(backend=\"hccl\")",
             "```", "",
             f"`npu-smi info -t topo`: {NPU_SMI_TOPO}. Run the same global batch, seed and steps (at least a few "
             f"hundred) on the GPU machine and log the loss, step time and tokens/s per step on rank 0.", "",
             "Record: the loss curves of both machines, step time and tokens/s, `npu-smi info` memory per card at "
             "the peak, the HCCL environment used, stage2-distributed.md.", "",
             "Pass when:",
             "* `audit check --select NPU1` reports no `error` finding (NCCL-only collectives, backends, env vars);",
             f"* the loss curves agree within the {plan.amp} budget you accepted in stage 1, with no divergence "
             "trend over the run;",
             "* no collective timeout or hang with `TORCH_HCCL_ASYNC_ERROR_HANDLING` and `TORCH_HCCL_DESYNC_DEBUG` "
             "set;",
             f"* throughput on {n} cards at least the target you set against 1 card (scaling efficiency).", "",
             "Environment (from op_tables/env.json):", "", *_env_rows("node", plan.product), ""]
    return lines


def _stage_multi(plan: Plan) -> list[str]:
    if plan.nodes == 1:
        return ["## Stage 3: several machines (super-node / cluster)", "",
                f"Not part of this target (`--nodes 1`). When the job grows, run `audit stages --model-size ... "
                f"--product {plan.product} --nodes N` for the multi-node checklist (rank table, cross-node HCCL "
                "settings, per-card memory on N x cards).", ""]
    n = plan.cards
    lines = [f"## Stage 3: {plan.nodes} machines, {n} cards", "",
             "Goal: the job scales across machines with the same loss curve.", "",
             *_memory(plan, n), "",
             "Commands (each node, NODE_RANK 0 .. N-1):", "", "```sh",
             f"torchrun --nnodes {plan.nodes} --node_rank $NODE_RANK --nproc_per_node {plan.cards_per_node} "
             f"--master_addr $MASTER_ADDR --master_port $MASTER_PORT {plan.entry}",
             "```", "",
             "Record: loss curve against stage 2 at the same global batch, step time, tokens/s per card, the rank "
             "table or negotiation used, HCCL logs of the first step.", "",
             "Pass when: the loss curve matches stage 2's; per-card throughput stays within the scaling target "
             "you set; no collective timeout.", "",
             "Environment (from op_tables/env.json):", "", *_env_rows("multi", plan.product), ""]
    return lines
