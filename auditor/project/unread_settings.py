"""Settings nothing reads (t18h): a CUDA setting in a project's own YAML config (`device: cuda`, `dist_backend:
nccl`, `enable_xformers_memory_efficient_attention: true`) whose key no Python file of the tree names is a leftover,
not a finding (docs/project-files.md, policy: settings nothing reads). A config a library or tool reads whole
(DeepSpeed, accelerate, Lightning and its Hydra trainer group files, Hydra / LDM `_target_` instantiation, CI /
compose / Kubernetes manifests, Cog, HfArgumentParser argument files, any JSON) keeps its findings, and so does any
key whose name appears as a word in the tree's Python or notebooks: an attribute, a subscript, a `get()`, a parameter
a `**cfg` splat fills all name it."""
from __future__ import annotations

import os
import re
from pathlib import Path

from auditor.findings import FileResult

# YAML only: the JSON configs of the trees read are mostly files a library or a model loader reads whole
# (transformers' config.json: ClapConfig's `enable_fusion`; DeepSpeed), and the project bench's test16 / test18 labels
# count a vendored BigVGAN config.json's `"dist_backend": "nccl"` as a finding
_CONFIG_SUFFIXES = (".yaml", ".yml")
# files a tool reads whole by their name (Cog's `build: gpu: true`, a GitHub action's metadata)
_TOOL_CONFIG_NAMES = frozenset({"cog.yaml", "action.yml", "action.yaml"})
_CODE_SUFFIXES = (".py", ".ipynb")
# the symbol configs.scan_config_roots gives a setting finding: `dotted.key.path: value`
_SETTING_SYMBOL_RE = re.compile(r"([A-Za-z_][\w.-]*): ")
_WORD_RE = re.compile(rb"[A-Za-z_]\w*")
# a config a library reads whole: its keys are the library's, whatever the tree's Python names
_LIBRARY_CONFIG_RE = re.compile(
    r"""^\s*["']?(?:_target_|class_path|target|zero_optimization|train_micro_batch_size_per_gpu|train_batch_size|"""
    r"""distributed_type|compute_environment|trainer|lightning|jobs|steps|stages|services|apiVersion|"""
    r"""runs-on)["']?\s*:""", re.M)
# trees that read an argument file into a library's dataclass (transformers' HfArgumentParser, LLaMA-Factory, TRL):
# a key such as `bf16` or `ddp_backend` is then the library's field, never named in the tree
_LIBRARY_ARGUMENT_FILE_WORDS = frozenset({b"HfArgumentParser", b"parse_yaml_file", b"parse_json_file", b"TrlParser",
                                          b"llamafactory", b"llmtuner", b"from_json_file", b"from_yaml_file"})
_MAX_CODE_BYTES = 4 * 1024 * 1024
# only folders that hold no code of the project (auditor.discover imports auditor.project: its DEFAULT_EXCLUDE
# would be an import cycle); any other folder's words only keep more findings
_SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".npu-audit-cache"})


def _setting_key(finding, lines: list[str]) -> str | None:
    """The key of a setting finding, when the finding's line is that key's own `key: value` line."""
    m = _SETTING_SYMBOL_RE.match(finding.symbol or "")
    if m is None or not 1 <= finding.line <= len(lines):
        return None
    key = m.group(1).rsplit(".", 1)[-1]
    head = lines[finding.line - 1].split(":", 1)[0].strip().strip("\"'-").strip().strip("\"'")
    return key if head.lstrip("-").replace("-", "_") == key.lstrip("-").replace("-", "_") else None


def _code_words(root: Path) -> set[bytes] | None:
    """Every word of the tree's Python files and notebooks (one pass, names only); None when it holds none (a config
    audited on its own, away from the code that reads it: nothing is known)."""
    words: set[bytes] = set()
    read = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_FOLDERS]
        for name in files:
            if not name.endswith(_CODE_SUFFIXES):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as fh:
                    words.update(_WORD_RE.findall(fh.read(_MAX_CODE_BYTES)))
                read += 1
            except OSError:
                continue
    return words if read else None


def apply_unread_settings(results: list[FileResult], root: Path) -> int:
    """Drop the setting findings of the tree's own configs whose key nothing in the tree names. Returns how many."""
    candidates: list[tuple[FileResult, dict[int, str]]] = []
    for r in results:
        low = r.path.lower()
        if not low.endswith(_CONFIG_SUFFIXES) or not r.findings or low.rsplit("/", 1)[-1] in _TOOL_CONFIG_NAMES:
            continue
        if any("trainer" in part or "lightning" in part for part in low.split("/")[:-1]):
            continue      # a Hydra trainer group file (lama's `trainer/*.yaml`: `kwargs: {gpus: -1}`): Lightning's keys
        try:
            text = (root / r.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _LIBRARY_CONFIG_RE.search(text):
            continue
        lines = text.splitlines()
        keys = {id(f): k for f in r.findings if (k := _setting_key(f, lines)) is not None}
        if keys:
            candidates.append((r, keys))
    if not candidates:
        return 0
    words = _code_words(root)
    if words is None or words & _LIBRARY_ARGUMENT_FILE_WORDS:
        return 0
    dropped = 0
    for r, keys in candidates:
        kept = [f for f in r.findings if id(f) not in keys or keys[id(f)].encode() in words
                or keys[id(f)].replace("-", "_").encode() in words]
        dropped += len(r.findings) - len(kept)
        r.findings = kept
    return dropped
