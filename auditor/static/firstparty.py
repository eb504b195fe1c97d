"""First-party packages of an audited tree (ruff's "known-first-party", found the same way: the packages that sit
at the root of what is audited, or under its `src/`). Auditing bitsandbytes' own repository, `import
bitsandbytes` in its tests and modules is the project's own code, not a dependency to replace: the rules that
name a package (bitsandbytes, flash_attn, apex, Triton kernel modules) do not report the project's own package.
Calls into the project's own operator namespace (`torch.ops.bitsandbytes.*` in bitsandbytes) are its API
likewise. Its CUDA code is still reported where it is (`.cu` files, `torch.cuda` calls, kernels)."""
from __future__ import annotations

from collections.abc import Iterable

# Rule categories whose findings name a package (a dependency), as opposed to a PyTorch API or a device string.
PACKAGE_CATEGORIES = frozenset({"third_party", "attention", "apex", "kernel"})
# Rules that report a project's own modules by what their path names (t14c: NPU324, `*.*flash_attn*.*`): kept there.
OWN_MODULE_RULES = frozenset({"project-flash-attention-module"})


def first_party_packages(rels: Iterable[str]) -> frozenset[str]:
    """Top-level package names of the audited tree, from the relative paths of its files: `pkg/__init__.py`
    and `src/pkg/__init__.py`."""
    out = set()
    for rel in rels:
        parts = rel.replace("\\", "/").split("/")
        if parts[0] == "src":
            parts = parts[1:]
        if len(parts) == 2 and parts[1] == "__init__.py" and parts[0].isidentifier():
            out.add(parts[0])
    return frozenset(out)


def is_first_party(finding, packages: frozenset[str]) -> bool:
    """A package finding whose symbol is a dotted name inside one of the tree's own packages."""
    if not packages or finding.category not in PACKAGE_CATEGORIES or not finding.symbol:
        return False
    if finding.name in OWN_MODULE_RULES:
        return False        # the rule is about the project's own module (`vllm.vllm_flash_attn` in vLLM's tree)
    parts = finding.symbol.split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) > 2:
        return parts[2] in packages     # `torch.ops.bitsandbytes.*`: the project's own operator library
    return parts[0] in packages and parts[0] != "torch"


def drop_first_party(results: list, packages: frozenset[str]) -> int:
    """Remove package findings about the tree's own packages from each FileResult; returns how many."""
    dropped = 0
    if not packages:
        return 0
    for result in results:
        kept = [f for f in result.findings if not is_first_party(f, packages)]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped
