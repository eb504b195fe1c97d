#!/usr/bin/env python3
"""Generate rules/third_party_deepspeed.yaml: DeepSpeed's compiled ops (deepspeed.ops.*), split into those
DeepSpeed itself builds for Ascend and those it builds for CUDA only.

Source (read as data from the release archive, never imported): a DeepSpeed sdist
(`--sdist deepspeed-X.tar.gz`; default: the copy `python bench/recall.py fetch` keeps in bench/_corpus/_archives/):
- deepspeed/ops/op_builder/npu/__init__.py: the op builders DeepSpeed's NPU accelerator provides;
- deepspeed/ops/op_builder/*.py: every builder class (the CUDA ones);
- deepspeed/ops/<package>/*.py: which builder each ops module loads, and the names each package re-exports.

An ops module is "built for NPU" when every builder it loads has an NPU version, "CUDA only" when one has
none, and is left alone when it loads no builder (pure PyTorch, runs anywhere).

    python rules/gen/deepspeed_ops.py [--from-sources [--sdist deepspeed-X.tar.gz]]
"""
from __future__ import annotations

import ast
import re
import tarfile
from pathlib import Path

from sources import REPO, RULES_DIR, Pins, SourceError, generator_args, run_main, yaml_text, write_outputs

OUT = RULES_DIR / "third_party_deepspeed.yaml"
DEFAULT_SDIST = REPO / "bench" / "_corpus" / "_archives" / "deepspeed-0.19.8.tar.gz"
BUILDER_RE = re.compile(r"\b([A-Z][A-Za-z0-9]*Builder)\b")
TRITON_RE = re.compile(r"^\s*(?:import triton|from triton)\b", re.M)
NOT_OPS = {"op_builder", "csrc"}
GENERIC_BUILDERS = {"OpBuilder"}     # the base class every accelerator's builders derive from
# op_builder modules of base classes and registries (TORCH_MAJOR, ALL_OPS ...), not ops themselves
GENERIC_BUILDER_MODULES = ("builder", "all_ops")


class Sdist:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise SourceError(f"{path} does not exist (run `python bench/recall.py fetch` or pass --sdist)")
        try:
            self._tar = tarfile.open(path)
        except (OSError, tarfile.TarError) as exc:
            raise SourceError(f"{path}: not a readable sdist ({exc})") from exc
        self.files: dict[str, tarfile.TarInfo] = {}
        for member in self._tar.getmembers():
            if member.isfile() and "/" in member.name:
                self.files[member.name.split("/", 1)[1]] = member    # strip 'deepspeed-X/'
        m = re.match(r"deepspeed-([^/]+?)\.tar\.gz$", path.name)
        self.version = m.group(1) if m else "?"

    def text(self, rel: str) -> str:
        if rel not in self.files:
            raise SourceError(f"the sdist has no {rel}")
        return self._tar.extractfile(self.files[rel]).read().decode("utf-8", errors="replace")

    def under(self, folder: str):
        return sorted(rel for rel in self.files if rel.startswith(folder) and rel.endswith(".py"))


def relative_imports(source: str) -> dict[str, str]:
    """`from .fused_adam import FusedAdam` -> {'FusedAdam': 'fused_adam'} (one level, package re-exports)."""
    out = {}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


def _dotted(rel: str) -> str:
    """deepspeed/ops/adam/__init__.py -> deepspeed.ops.adam; deepspeed/ops/adam/fused_adam.py -> ....fused_adam"""
    parts = rel[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def triton_aliases(source: str) -> list[str]:
    """Names a module binds to triton itself (`import triton.language as tl`): re-exported shims whose
    attributes are kernel-body code, reported once at the kernel by the triton rule, not per line."""
    out = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "triton" or alias.name.startswith("triton."):
                    out.append(alias.asname or alias.name.split(".", 1)[0])
    return out


def builders_defined(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Builder")]


def scan(sd: Sdist) -> dict:
    """What the sdist says: its NPU builders and, per op module / builder name, CUDA-only or NPU-built."""
    npu_builders = set(relative_imports(sd.text("deepspeed/ops/op_builder/npu/__init__.py"))) - {"NotImplementedBuilder"}
    builder_modules: dict[str, str] = {}   # builder class -> its module under op_builder/
    for rel in sd.under("deepspeed/ops/op_builder/"):
        if rel.count("/") == 3:            # deepspeed/ops/op_builder/x.py: the CUDA builders
            for builder in builders_defined(sd.text(rel)):
                builder_modules.setdefault(builder, rel.rsplit("/", 1)[1][:-3])
    all_builders = set(builder_modules)
    npu_symbols: dict[str, dict] = {}
    cuda_symbols: dict[str, dict] = {}
    pure: list[str] = []
    shims: list[str] = []
    # modules that import triton, then those that take it from such a shim (`from ..._triton import triton, tl`)
    triton_modules = {_dotted(rel) for rel in sd.under("deepspeed/ops/") if TRITON_RE.search(sd.text(rel))}
    for rel in sd.under("deepspeed/ops/"):
        if any(f"from {shim} import" in sd.text(rel) for shim in triton_modules):
            triton_modules.add(_dotted(rel))
    for rel in sd.under("deepspeed/ops/"):
        parts = rel[:-3].split("/")
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        if len(parts) < 3 or parts[2] in NOT_OPS:
            continue
        text = sd.text(rel)
        used = set(BUILDER_RE.findall(text)) & (all_builders | npu_builders)
        module = ".".join(parts)
        if _dotted(rel) in triton_modules:
            used.add("Triton")        # Triton kernels: GPU-only, never in op_builder/npu
            shims += [f"{module}.{alias}" for alias in triton_aliases(text)]
        names = [module]
        package_init = "/".join(parts[:-1]) + "/__init__.py"
        if not is_init and package_init in sd.files:
            names += [f"{'.'.join(parts[:-1])}.{n}" for n, mod in relative_imports(sd.text(package_init)).items()
                      if mod == parts[-1]]
        if not used:
            pure += names
            continue
        missing = sorted(used - npu_builders)
        for name in names:
            if missing:
                cuda_symbols[name] = {"substitution": (
                    f"no NPU build in DeepSpeed {sd.version} ({', '.join(missing)} has no op_builder/npu "
                    "version): use the plain PyTorch path (e.g. torch.optim, torch.nn layers) or a torch_npu op")}
            else:
                npu_symbols[name] = {"substitution": (
                    f"keep it: DeepSpeed {sd.version} builds it for Ascend ({', '.join(sorted(used))} in "
                    "op_builder/npu) when its accelerator is npu (torch_npu installed, or DS_ACCELERATOR=npu)")}
    for builder, module in sorted(builder_modules.items()):
        if builder in GENERIC_BUILDERS:
            continue
        # the package re-exports each builder; DeepSpeed's own tree also imports it as the top-level `op_builder`
        names = [f"{pkg}.{builder}" for pkg in ("deepspeed.ops.op_builder", "op_builder")]
        names += [f"{pkg}.{module}.{builder}" for pkg in ("deepspeed.ops.op_builder", "op_builder")]
        for name in names:
            if builder in npu_builders:
                npu_symbols[name] = {"substitution": "keep it: op_builder/npu has an NPU version of this builder; "
                                                     "get it through `get_accelerator().create_op_builder(...)`"}
            else:
                cuda_symbols[name] = {"substitution": f"no NPU version of {builder} in DeepSpeed {sd.version}: the "
                                                      "op it builds is CUDA only; use the PyTorch path"}
    return {"npu_builders": sorted(npu_builders), "npu_symbols": npu_symbols, "cuda_symbols": cuda_symbols,
            "pure": pure, "shims": shims}


def outputs(pins: Pins, sdist: Path = DEFAULT_SDIST) -> dict:
    """{rule file: its text} from the pinned facts (recorded from the sdist when pins.record)."""
    sd = Sdist(sdist) if pins.record else None
    if sd is not None:
        pins.original("deepspeed", sdist.name, sd.version, sdist)
    version = pins.data["originals"]["deepspeed"]["version"]
    found = pins.fact("scan", lambda: scan(sd))
    npu_builders, npu_symbols, cuda_symbols = found["npu_builders"], found["npu_symbols"], found["cuda_symbols"]
    pure, shims = found["pure"], found["shims"]
    note = (f"generated by rules/gen/deepspeed_ops.py from the DeepSpeed {version} sdist: NPU builders = "
            f"{', '.join(sorted(npu_builders))}")
    cuda_rule = {
        "code": "NPU420", "name": "deepspeed-cuda-op", "category": "third_party", "severity": "error",
        "effort": "medium", "fix": "none",
        "message": "`{symbol}` is a DeepSpeed CUDA op with no Ascend build",
        "substitution": "the plain PyTorch path (torch.optim, torch.nn) or a torch_npu fused op",
        "symbols": cuda_symbols,
        "match": [{"qualname": sorted(cuda_symbols) + ["deepspeed.ops.*"]
                   + [f"!{name}" for name in sorted(pure)]
                   + [f"!deepspeed.ops.op_builder.{g}" for g in sorted(GENERIC_BUILDERS)]
                   + [f"!deepspeed.ops.op_builder.{m}" for m in GENERIC_BUILDER_MODULES]
                   + [f"!{shim}.*" for shim in sorted(set(shims))]}],
        "source_note": note,
        "doc": {
            "what": "deepspeed.ops modules and op builders whose kernels DeepSpeed compiles for CUDA only "
                    "(transformer kernels, Evoformer attention, fp quantizer, random-LTD, Triton ops ...).",
            "why": "DeepSpeed's NPU accelerator provides only some op builders; the others fail to build or load "
                   "on an Ascend machine.",
            "use_instead": "The PyTorch code path the op accelerates, or a torch_npu fused op.",
        },
        "examples": {
            "flag": ["from deepspeed.ops.transformer import DeepSpeedTransformerLayer, DeepSpeedTransformerConfig\n"
                     "layer = DeepSpeedTransformerLayer(DeepSpeedTransformerConfig(hidden_size=1024))\n"],
            "ok": ["# deepspeed.ops.transformer kernels are faster on A100\n"
                   "logger.info(\"DeepSpeedTransformerLayer disabled\")\n"],
        },
    }
    npu_rule = {
        "code": "NPU421", "name": "deepspeed-npu-op", "category": "third_party", "severity": "info",
        "effort": "low", "fix": "none",
        "message": "`{symbol}`: DeepSpeed builds this op for Ascend; check its accelerator is npu",
        "substitution": "keep it, with DeepSpeed's npu accelerator (torch_npu installed or DS_ACCELERATOR=npu)",
        "symbols": npu_symbols,
        "match": [{"qualname": sorted(npu_symbols)}],
        "source_note": note,
        "doc": {
            "what": "deepspeed.ops modules (FusedAdam, FusedLamb, FusedLion, CPU Adam/Adagrad/Lion, async I/O, "
                    "inference, quantizer) for which DeepSpeed ships an NPU op builder.",
            "why": "They work on Ascend only through DeepSpeed's npu accelerator, which builds the NPU version at "
                   "first use; a hard-coded CUDA accelerator or a prebuilt CUDA wheel still fails.",
            "use_instead": "The same API with DeepSpeed's npu accelerator.",
        },
        "examples": {
            "flag": ["from deepspeed.ops.adam import FusedAdam\noptimizer = FusedAdam(model.parameters(), lr=1e-4)\n"],
            "ok": ["import torch\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"],
        },
    }
    header = ("# Generated by rules/gen/deepspeed_ops.py: do not edit by hand; rerun the script.\n"
              "# DeepSpeed ops: CUDA-only ones (NPU420) and those DeepSpeed builds for Ascend (NPU421).\n")
    return {OUT: yaml_text(header, {"family": "third_party", "rules": [cuda_rule, npu_rule]})}


def main() -> None:
    ap = generator_args(__doc__.splitlines()[0], wheel=False)
    ap.add_argument("--sdist", type=Path, default=DEFAULT_SDIST, help="DeepSpeed source archive (--from-sources)")
    args = ap.parse_args()
    pins = Pins("deepspeed_ops", record=args.from_sources)
    write_outputs(outputs(pins, args.sdist), pins)


if __name__ == "__main__":
    run_main(main)
