#!/usr/bin/env python3
"""Generate the environment-variable rules: rules/device_env.yaml (NPU004, CUDA/cuBLAS/cuDNN variables) and
rules/distributed_env.yaml (NPU120 TORCH_NCCL_*, NPU121 NCCL_*), each variable with its Ascend name or none.

Sources (read, never typed in):
- CUDA/NCCL side, the installed torch: the env-name vectors of c10d/ProcessGroupNCCL.hpp (TORCH_NCCL_* and
  their legacy NCCL_* aliases), the NCCL list of torch.nn.parallel.distributed._dump_DDP_relevant_env_vars,
  and every CUDA/cuBLAS/cuDNN variable torch reads (getenv / os.environ / check_env in its .py and headers);
- Ascend side: the variable pages in ../shared/ascend/pytorch/docs/environment_variable/ and the other
  Ascend snapshots, the env names torch_npu's headers and Python files use (wheel read as data), and the
  CUDA/NCCL counterparts op_tables/env.json records (committed; the Ascend pages pair no names, so it has none).

A variable's Ascend twin is its counterpart in op_tables/env.json, else its name with NCCL spelled HCCL
(or CUDA spelled NPU) when that name exists on the Ascend side.

    python rules/gen/env_vars.py [--from-sources [--wheel torch_npu-X.whl]]
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from sources import (ASCEND_SHARED, REPO, RULES_DIR, Pins, SourceError, Wheel, generator_args, npu_wheel, run_main,
                     torch_version, yaml_text, write_outputs)

ENV_JSON = REPO / "op_tables" / "env.json"
CUDA_FAMILY = re.compile(r"^(?:CUDA|CUBLAS|CUBLASLT|CUDNN|PYTORCH_CUDA|PYTORCH_NO_CUDA|TORCH_CUDNN|NVIDIA)_[A-Z0-9_]+$")
ENV_READ = re.compile(r"(?:environ|getenv|get_env|check_env|getenv_bool)[^\"'\n]{0,30}[\"']([A-Z][A-Z0-9_]+)[\"']")
ASSIGN_IN_TEXT = re.compile(r"\b([A-Z][A-Z0-9_]+)=")
ASCEND_NAME = re.compile(r"\b((?:TORCH_HCCL|HCCL|ASCEND|PYTORCH_NPU|PYTORCH_NO_NPU|NPU|ACL|TORCH_NPU)_[A-Z0-9_]+)\b")
QUOTED_ASCEND_NAME = re.compile(r"[\"']((?:TORCH_HCCL|HCCL|ASCEND|PYTORCH_NPU|PYTORCH_NO_NPU|NPU|ACL|TORCH_NPU)_[A-Z0-9_]+)[\"']")
CUDA_PREFIXES = ("CUDA_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "PYTORCH_CUDA_", "PYTORCH_NO_CUDA_", "TORCH_CUDNN_",
                 "NVIDIA_")


def _torch_dir() -> Path:
    import torch

    return Path(torch.__file__).resolve().parent


def torch_nccl_vectors() -> dict[str, list[str]]:
    """TORCH_NCCL_X -> [TORCH_NCCL_X, legacy NCCL_X ...] from ProcessGroupNCCL.hpp."""
    header = _torch_dir() / "include/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp"
    if not header.is_file():
        raise SourceError(f"{header} is missing (torch installed without headers?)")
    text = header.read_text()
    out = {}
    for m in re.finditer(r"static std::vector<std::string> (TORCH_NCCL_\w+)\s*=\s*\{([^}]*)\}", text):
        out[m.group(1)] = re.findall(r'"([A-Z0-9_]+)"', m.group(2))
    return out


def ddp_env_list() -> list[str]:
    src = (_torch_dir() / "nn/parallel/distributed.py").read_text()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.FunctionDef) and node.name == "_dump_DDP_relevant_env_vars":
            for sub in ast.walk(node):
                if isinstance(sub, ast.List):
                    return [e.value for e in sub.elts if isinstance(e, ast.Constant)]
    raise SourceError("torch.nn.parallel.distributed._dump_DDP_relevant_env_vars not found")


def torch_cuda_env_reads() -> set[str]:
    names: set[str] = set()
    torch_dir = _torch_dir()
    for path in list(torch_dir.rglob("*.py")) + list((torch_dir / "include").rglob("*.h*")):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if "CUDA" not in text and "CUBLAS" not in text and "CUDNN" not in text:
            continue
        for m in ENV_READ.finditer(text):
            names.add(m.group(1))
        for m in ASSIGN_IN_TEXT.finditer(text):   # "rerun with CUDA_LAUNCH_BLOCKING=1"
            names.add(m.group(1))
    return {n for n in names if CUDA_FAMILY.match(n)}


def ascend_names(wheel: Wheel) -> dict[str, str]:
    """Every Ascend-side variable name we can see -> where it was seen."""
    seen: dict[str, str] = {}
    doc_dir = ASCEND_SHARED / "pytorch/docs/environment_variable"
    if not doc_dir.is_dir():
        raise SourceError(f"{doc_dir} is missing (the Ascend snapshots in ../shared/ascend)")
    for page in sorted(doc_dir.rglob("*.md")):
        stem = page.stem.split("）")[-1]
        if re.fullmatch(r"[A-Z][A-Z0-9_]+", stem):
            seen.setdefault(stem, f"pytorch/docs/environment_variable/{page.relative_to(doc_dir)}")
    for path in sorted(ASCEND_SHARED.rglob("*")):
        if path.suffix in (".md", ".yaml", ".yml") and path.is_file():
            for m in ASCEND_NAME.finditer(path.read_text(errors="replace")):
                seen.setdefault(m.group(1), str(path.relative_to(ASCEND_SHARED)))
    for name, text in wheel.texts((".py", ".h", ".hpp")):
        # in Python only quoted names are variables: `ASCEND_VISIBLE_DEVICES = "ASCEND_RT_VISIBLE_DEVICES"`
        # binds an identifier whose value is the variable
        pattern = QUOTED_ASCEND_NAME if name.endswith(".py") else ASCEND_NAME
        for m in pattern.finditer(text):
            seen.setdefault(m.group(1), f"torch_npu {wheel.version} {name}")
    return seen


def wheel_rebindings(wheel: Wheel) -> dict[str, list[str]]:
    """CUDA/NCCL variable name -> [Ascend name, where]: torch_npu patching an upstream module attribute that holds
    a variable name (`autotune_process.CUDA_VISIBLE_DEVICES = ASCEND_VISIBLE_DEVICES`, the constant being
    "ASCEND_RT_VISIBLE_DEVICES").  The only pairing of names the sources state."""
    out: dict[str, list[str]] = {}
    for name, text in wheel.texts((".py",)):
        if "CUDA_" not in text and "NCCL_" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                  and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                  for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            value = node.value.value if isinstance(node.value, ast.Constant) else (
                consts.get(node.value.id) if isinstance(node.value, ast.Name) else None)
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and isinstance(value, str) and ASCEND_NAME.fullmatch(value)
                        and (CUDA_FAMILY.match(target.attr) or target.attr.startswith("NCCL_"))):
                    out[target.attr] = [value, f"torch_npu {wheel.version} {name}:{node.lineno}"]
    return out


def counterparts() -> dict[str, dict]:
    if not ENV_JSON.is_file():
        raise SourceError(f"{ENV_JSON} is missing: build the coverage tables first (op_tables/)")
    # the Ascend pages pair no CUDA/NCCL name with an Ascend one: twins come from spellings (twin_of)
    return json.loads(ENV_JSON.read_text()).get("cuda_counterparts", {})


def twin_of(name: str, table: dict[str, dict], ascend: dict[str, str],
            rebound: dict[str, list[str]] | None = None) -> tuple[list[str], dict | None, str]:
    """(Ascend names, counterpart row or None, where the pairing comes from)."""
    if rebound and name in rebound:
        return [rebound[name][0]], None, f"torch_npu rebinds it: {rebound[name][1]}"
    row = table.get(name)
    if row is None:
        for pattern, prow in table.items():
            if pattern.endswith("*") and name.startswith(pattern[:-1]):
                cand = prow["ascend"][0].replace("*", name[len(pattern) - 1:])
                if cand in ascend:
                    return [cand], None, f"{prow['source']}; {cand} in {ascend[cand]}"
    if row is not None:
        return list(row["ascend"]), row, row["source"]
    spellings = [name.replace("NCCL", "HCCL"), name.replace("CUDA", "NPU"), name.replace("CUDA", "ASCEND")]
    for cand in dict.fromkeys(spellings):
        if cand != name and cand in ascend:
            return [cand], None, f"same name with HCCL/NPU spelling, seen in {ascend[cand]}"
    return [], None, ""


def symbol_entry(name: str, names: list[str], row: dict | None, kind: str) -> dict:
    if not names:
        what = {"nccl": "HCCL does not read it and the sources read here name no HCCL counterpart",
                "torch_nccl": "torch_npu does not read it and names no TORCH_HCCL_* counterpart",
                "cuda": "the CANN runtime does not read it and the sources read here name no Ascend counterpart"}[kind]
        return {"substitution": f"{what}: drop it on Ascend, or look for a setting of the same purpose in the CANN "
                                "environment-variable reference",
                "fix": "none", "effort": "low"}
    units = ""
    if row and row.get("cuda_unit") != row.get("ascend_unit"):
        units = f"; units differ: {row.get('cuda_unit')} for {name}, {row.get('ascend_unit')} for {names[0]}"
    shown = " or ".join(names)
    entry: dict = {"substitution": f"{shown}{units}"}
    if len(names) == 1:
        entry["replace"] = names[0]
    if len(names) != 1 or units:
        # several candidates, or a value in other units: `audit fix --unsafe-fixes` converts what it can
        entry["fix"] = "unsafe"
        entry["effort"] = "low"
    return entry


def build(pins: Pins, wheel: Wheel | None = None) -> tuple[dict, dict, dict[str, int]]:
    table = counterparts()
    torch_v = torch_version(pins)
    npu_version = pins.data["originals"]["torch_npu"]["version"]
    if pins.record:
        pins.original("ascend_snapshots", "../shared/ascend (Ascend/pytorch, op-plugin, msprof-analyze docs)",
                      "commits in its SOURCES.md", ASCEND_SHARED / "SOURCES.md")
    ascend = pins.fact("ascend_names", lambda: ascend_names(wheel))
    rebound = pins.fact("wheel_rebindings", lambda: wheel_rebindings(wheel))
    vectors = pins.fact("torch_nccl_vectors", torch_nccl_vectors)
    ddp = pins.fact("ddp_env_list", ddp_env_list)
    nccl_names: set[str] = {n for n in ddp if n.startswith("NCCL_")}
    torch_nccl: set[str] = set(vectors) | {n for n in ddp if n.startswith("TORCH_NCCL_")}
    legacy_of: dict[str, str] = {}
    for canon, spellings in vectors.items():
        for s in spellings[1:]:
            legacy_of[s] = canon
            nccl_names.add(s)
    nccl_names |= {k for k in table if k.startswith("NCCL_")}
    cuda_names = pins.fact("torch_cuda_env_reads", torch_cuda_env_reads) | {n for n in ddp if CUDA_FAMILY.match(n)} | {
        k for k in table if CUDA_FAMILY.match(k)}
    # build-toolchain locations (torch.utils.cpp_extension reads them): reported, but as information only;
    # the extension builds themselves are the kernel rules' business
    toolchain = {n for n in cuda_names if n.endswith(("_HOME", "_PATH", "_LIBRARY")) or n == "CUDACXX"}

    sym_torch, sym_nccl, sym_cuda = {}, {}, {}
    for n in sorted(torch_nccl):
        names, row, _ = twin_of(n, table, ascend, rebound)
        sym_torch[n] = symbol_entry(n, names, row, "torch_nccl")
    for n in sorted(nccl_names):
        if n in legacy_of:          # NCCL_BLOCKING_WAIT is the old spelling of TORCH_NCCL_BLOCKING_WAIT
            names, row, _ = twin_of(legacy_of[n], table, ascend, rebound)
            entry = symbol_entry(n, names, row, "torch_nccl")
            entry["substitution"] = entry["substitution"] + f" (legacy spelling of {legacy_of[n]})"
            if "replace" in entry:
                entry.setdefault("fix", "safe")   # the same rename as its TORCH_NCCL_* spelling (NPU120)
        else:
            names, row, _ = twin_of(n, table, ascend, rebound)
            entry = symbol_entry(n, names, row, "nccl")
            if names and row is None:   # paired by name only: NCCL and HCCL value syntaxes differ
                entry.pop("replace", None)
                entry.update(fix="unsafe", effort="low",
                             substitution=entry["substitution"] + " (same purpose; the accepted values differ, "
                                                                  "see the CANN HCCL variable reference)")
        sym_nccl[n] = entry
    cann_home = "ASCEND_HOME_PATH" if "ASCEND_HOME_PATH" in ascend else None
    for n in sorted(cuda_names):
        if n in toolchain:
            where = f" (the CANN toolkit location is {cann_home})" if cann_home else ""
            sym_cuda[n] = {"substitution": f"a CUDA toolkit location: no meaning on Ascend{where}; CUDA extension "
                                           "builds need an Ascend port (see the kernel findings)",
                           "severity": "info", "fix": "none", "effort": "low"}
            continue
        names, row, _ = twin_of(n, table, ascend, rebound)
        sym_cuda[n] = symbol_entry(n, names, row, "cuda")
    hccl_only = sorted(n for n in ascend if n.startswith("HCCL_") and n in ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT"))
    stats = {"torch_nccl": len(sym_torch), "nccl": len(sym_nccl), "cuda": len(sym_cuda),
             "with_twin": sum(1 for d in [*sym_torch.values(), *sym_nccl.values(), *sym_cuda.values()]
                              if d.get("fix") != "none")}
    note = (f"generated by rules/gen/env_vars.py from torch {torch_v.split('+')[0]} (ProcessGroupNCCL.hpp, "
            f"_dump_DDP_relevant_env_vars, env reads), torch_npu {npu_version} (headers, Python), "
            "../shared/ascend env pages and op_tables/env.json counterparts")
    timeouts = (" HCCL's own timeouts (" + ", ".join(hccl_only) + ") have no NCCL twin: set them for large jobs."
                if hccl_only else "")
    distributed = {"family": "distributed", "rules": [
        {
            "code": "NPU120", "name": "torch-nccl-env-var", "category": "distributed", "severity": "warning",
            "effort": "auto", "fix": "safe",
            "message": "environment variable {symbol} configures ProcessGroupNCCL only",
            "substitution": "the TORCH_HCCL_* variable of the same name where torch_npu has one",
            "match": [{"env": ["TORCH_NCCL_*"]}],
            "symbols": sym_torch, "source_note": note,
            "doc": {"what": "TORCH_NCCL_* variables (watchdog, blocking wait, async error handling, flight recorder, "
                            "desync debug) in os.environ, env dicts and launch command strings.",
                    "why": "ProcessGroupHCCL reads TORCH_HCCL_* names (torch_npu ProcessGroupHCCL.hpp); the NCCL ones "
                           "are ignored, so timeouts and debugging silently fall back to defaults.",
                    "use_instead": "The TORCH_HCCL_* twin named in each finding; none where torch_npu has no such switch."},
            "examples": {
                "fix": [{"before": 'import os\nos.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"\n',
                         "after": 'import os\nos.environ["TORCH_HCCL_ASYNC_ERROR_HANDLING"] = "1"\n'}],
                "flag": ["import os\nos.environ[\"TORCH_NCCL_ASYNC_ERROR_HANDLING\"] = \"1\"\n",
                         "import os\nblocking = os.getenv(\"TORCH_NCCL_BLOCKING_WAIT\", \"0\") == \"1\"\n",
                         "import subprocess\nsubprocess.run(\"TORCH_NCCL_TRACE_BUFFER_SIZE=2000 torchrun train.py\", shell=True)\n"],
                "ok": ["import os\nos.environ[\"TORCH_HCCL_ASYNC_ERROR_HANDLING\"] = \"1\"\n",
                       "import logging\nlogging.info(\"set TORCH_NCCL_BLOCKING_WAIT=1 to debug hangs\")\n"]},
        },
        {
            "code": "NPU121", "name": "nccl-env-var", "category": "distributed", "severity": "warning",
            "effort": "low", "fix": "none",
            "message": "environment variable {symbol} is read by NCCL only",
            "substitution": "no HCCL counterpart known: drop it on Ascend (HCCL reads HCCL_* variables)",
            "match": [{"env": ["NCCL_*"]}],
            "symbols": sym_nccl, "source_note": note,
            "doc": {"what": "NCCL_* variables (sockets, InfiniBand, buffers, debug, algorithms) in os.environ, env "
                            "dicts handed to subprocess, and `NCCL_X=... cmd` strings.",
                    "why": "HCCL ignores NCCL_* variables; tuning and network selection must be redone with HCCL's "
                           "names and value formats (the sources read here pair no names and state no units)." + timeouts,
                    "use_instead": "The HCCL variable named in each finding (see the CANN HCCL environment variable "
                                   "reference); delete the ones with no counterpart."},
            "examples": {
                "fix": [{"before": 'import os\nos.environ["NCCL_BLOCKING_WAIT"] = "1"\n',
                         "after": 'import os\nos.environ["TORCH_HCCL_BLOCKING_WAIT"] = "1"\n'}],
                "flag": ["import os\nos.environ[\"NCCL_SOCKET_IFNAME\"] = \"eth0\"\n",
                         "import os\nenv = dict(os.environ, NCCL_DEBUG=\"INFO\")\n",
                         "import os\nos.environ.setdefault(\"NCCL_BUFFSIZE\", str(8 << 20))\n",
                         "IB_VAR = \"NCCL_IB_HCA\"\nimport os\nhca = os.environ.get(IB_VAR)\n"],
                "ok": ["import os\nos.environ[\"HCCL_BUFFSIZE\"] = \"200\"\n",
                       "# export NCCL_DEBUG=INFO when it hangs\nimport os\n",
                       "import warnings\nwarnings.warn(\"NCCL_P2P_DISABLE=1 may slow down training\")\n"]},
        },
    ]}
    device = {"family": "device", "rules": [
        {
            "code": "NPU004", "name": "cuda-env-var", "category": "device", "severity": "warning",
            "effort": "auto", "fix": "safe",
            "message": "environment variable {symbol} is read by the CUDA stack only",
            "substitution": "no Ascend counterpart known: drop it on Ascend",
            "match": [{"env": [p + "*" for p in CUDA_PREFIXES]}],
            "symbols": sym_cuda, "source_note": note,
            "doc": {"what": "CUDA, cuBLAS and cuDNN environment variables (CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, "
                            "PYTORCH_CUDA_ALLOC_CONF, CUBLAS_WORKSPACE_CONFIG, CUDA_DEVICE_MAX_CONNECTIONS ...) set or "
                            "read in code, env dicts and command strings.",
                    "why": "The Ascend runtime reads its own names (ASCEND_RT_VISIBLE_DEVICES, ASCEND_LAUNCH_BLOCKING, "
                           "PYTORCH_NPU_ALLOC_CONF ...); CUDA ones are ignored, so device selection, allocator "
                           "settings and debugging switches silently stop working.",
                    "use_instead": "The Ascend name given in each finding (ASCEND_RT_VISIBLE_DEVICES for "
                                   "CUDA_VISIBLE_DEVICES); remove the ones without a counterpart."},
            "examples": {
                "fix": [{"before": 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n',
                         "after": 'import os\nos.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"\n'}],
                "flag": ["import os\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0,1\"\n",
                         "import subprocess, os\nsubprocess.run(cmd, env=dict(os.environ, CUDA_VISIBLE_DEVICES=\"0\"))\n",
                         "import os\nos.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"expandable_segments:True\"\n",
                         "import os\nos.environ[\"CUBLAS_WORKSPACE_CONFIG\"] = \":4096:8\"\n",
                         "cmd = f\"CUDA_LAUNCH_BLOCKING=1 python train.py --rank {rank}\"\n"],
                "ok": ["import os\nos.environ[\"ASCEND_RT_VISIBLE_DEVICES\"] = \"0\"\n",
                       "print(\"set CUDA_VISIBLE_DEVICES to pick GPUs\")\n",
                       "# CUDA_LAUNCH_BLOCKING=1 helps debugging\nx = 1\n"]},
        },
    ]}
    return device, distributed, stats


def outputs(pins: Pins, wheel: Wheel | None = None) -> dict:
    """{rule file: its text} from op_tables/env.json and the pinned facts."""
    device, distributed, _ = build(pins, wheel)
    header = ("# GENERATED by rules/gen/env_vars.py - do not edit by hand; rerun the script.\n"
              f"# Sources: torch {torch_version(pins)} (installed), torch_npu wheel "
              f"{pins.data['originals']['torch_npu']['name']}, ../shared/ascend, op_tables/env.json.\n")
    return {RULES_DIR / "device_env.yaml": yaml_text(header, device),
            RULES_DIR / "distributed_env.yaml": yaml_text(header, distributed)}


def main() -> None:
    args = generator_args(__doc__.splitlines()[0]).parse_args()
    pins = Pins("env_vars", record=args.from_sources)
    write_outputs(outputs(pins, npu_wheel(pins, args.wheel)), pins)


if __name__ == "__main__":
    run_main(main)
