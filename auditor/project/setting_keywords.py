"""Config settings the tree's own Python passes to a call under another name (t24b, issue 15). LTX-Video-Trainer's
YAML says `acceleration: {mixed_precision_mode: "bf16", load_text_encoder_in_8bit: true}` and its trainer reads them
into library arguments:

    Accelerator(mixed_precision=self._config.acceleration.mixed_precision_mode, ...)
    load_ltxv_components(load_text_encoder_in_8bit=self._config.acceleration.load_text_encoder_in_8bit)
        -> load_text_encoder(load_in_8bit=load_text_encoder_in_8bit)      (BitsAndBytesConfig)

The key's own name matches no settings rule, but the keyword it is passed as does: the line is the setting
`mixed_precision: bf16` (NPU212) and `load_in_8bit: true` (NPU441). setting_reads' per-file fact records each read
passed as a keyword (`passed`) and each name passed on under another keyword (`forwards`, one step: a parameter handed
to the function that uses it); this pass matches the YAML line as each such keyword, with the settings rules the
config reader uses (ProjectMatchers.match_setting). A key is found under its section (`acceleration`), a top-level
key of a Hydra group file under its folder, as setting_reads reads them. Nothing is run.

A YAML config's keyed scalars are a per-file fact (`keys_fact`, summary key FACT), read in the worker once per file and
kept in the cache entry: a warm run parses no YAML again.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from auditor.findings import FileResult
from auditor.project.configs import _scalars
from auditor.project.hits import ProjectMatchers
from auditor.project.makefile import call_finding
from auditor.project.setting_reads import _CHOICE_CODES, _CI_PARTS, _CONFIG_SUFFIXES, _saved_run_config, tree_reads
from auditor.source import MAX_FILE_BYTES, SourceError, read_source
from auditor.suppress import Suppressions, covered

FACT = "setting_keys"       # the summary key of a YAML config's keyed scalars (auditor/cache.py FACTS)


def config_file(rel: str) -> bool:
    """A YAML file whose keys the tree's Python may read (not a CI file, whose keys the CI service reads)."""
    rel = rel.replace("\\", "/")
    return rel.endswith(_CONFIG_SUFFIXES) and not any(p in rel for p in _CI_PARTS)


def keys_fact(data: bytes) -> list | None:
    """A YAML config's string scalars under a plain key, as the summary keeps them (JSON-ready): [line, column of the
    value's text, dotted path, value stripped, the suppression code sets at the line] each; None when it does not
    parse."""
    text = data.decode("utf-8", errors="replace")
    try:
        roots = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except (ValueError, yaml.YAMLError):
        return None
    lines = text.splitlines()
    suppressions = Suppressions.of(lines, text)
    out = []
    for doc in roots:
        for dotted, key, value, env_entry in _scalars(doc, "", False):
            if env_entry or key is value or not isinstance(value.value, str) or "." in str(key.value):
                continue
            line = value.start_mark.line + 1
            col = value.start_mark.column + 1
            col += lines[line - 1][col - 1:col] in ("'", '"') if line <= len(lines) else 0
            out.append([line, col, dotted, value.value.strip(), suppressions.directives_at(line, line)])
    return out


def _held_keys(result: FileResult, path: Path) -> list | None:
    """The config's fact from its summary; a result without one (a summary a caller built by hand) reads the file."""
    held = (result.summary or {}).get(FACT)
    if held is not None:
        return held if isinstance(held, list) else None
    try:
        return keys_fact(read_source(path, MAX_FILE_BYTES)[0])
    except (OSError, SourceError):
        return None

def _keywords(reads, sections: list[str] | None, key: str) -> list[tuple[str, str]]:
    """The keywords the code passes the key as (not its own name), and those a tree function passes them on as
    (`load_text_encoder_in_8bit=cfg.acceleration.load_text_encoder_in_8bit`, then `load_in_8bit=<that parameter>`).
    Its own name too where a trainer takes it (`Trainer(accelerator=cfg.train.accelerator)`: bros' `train:` section,
    which the config reader alone does not take for Lightning's, pd37). None for a key the code stores by the
    hardware it finds before any read (setting_reads' `picked`, pd47). Each with the text the keyword gets, `{}`
    where the value goes (a read formatted into a string: `slurm_gres=f"gpu:{n},VRAM:{args.vram}"`, tp51b).
    sections None: any section (a top-level key of a file the code loads by its path)."""
    def among(s: str) -> bool:
        return sections is None or s in sections

    if any(among(s) and (s, key) in reads.picked for s, _ in reads.picked):
        return []
    passed = {w for s, k, w in reads.passed if k == key and among(s)}
    first = sorted(passed - {key})
    onward = sorted({w2 for n, w2 in reads.forwards if n in passed and w2 != key} - passed)
    own = [key] if any(among(s) and k == key for s, k in reads.to_trainer) else []
    formatted = sorted({(w, t) for s, k, w, t in reads.formatted if k == key and among(s) and w != key})
    return [(w, "{}") for w in first + onward + own] + formatted


def _loaded_by_path(rel: str, reads) -> bool:
    """The tree's Python names the config by its path from the root (`ex.add_config('cfgs/submit.yaml')`: sacred,
    `OmegaConf.load("configs/x.yaml")`): the code loads that file itself, so its top-level keys are the keys it reads
    under whatever name it holds the loaded mapping (tp51b)."""
    for path in reads.config_paths:
        path = path.removeprefix("./")
        if rel == path or "/" in path and rel.endswith("/" + path):
            return True
    return False


def apply_setting_keywords(results: list[FileResult], root: Path, rules, product: str = "a2") -> None:
    """Add a finding to each YAML config line whose key the tree's code passes as a keyword a settings rule reads."""
    top = (root if root.is_dir() else root.parent).resolve()
    reads = None
    m: ProjectMatchers | None = None       # built once, when a config first needs them (as local_builds does)
    for result in results:
        if not config_file(result.path):
            continue
        path = Path(result.path)
        path = path if path.is_absolute() else top / path
        try:
            rel = path.resolve().relative_to(top).as_posix()
        except (OSError, ValueError):
            continue
        held = _held_keys(result, path)
        if held is None:
            continue
        if reads is None:
            reads = tree_reads(top, results)
            if not reads.passed and not reads.formatted:
                return
        m = m or ProjectMatchers.build(tuple(rules))
        have = {f.line for f in result.findings}
        saved = _saved_run_config(path)
        loaded_by_path: bool | None = None
        for entry in held:
            try:
                line, col, dotted, raw, directives = entry
            except (TypeError, ValueError):
                continue
            parts = dotted.split(".")
            # a top-level key of a Hydra group file sits under the group: its folder (setting_reads, t23c)
            sections = [parts[-2]] if len(parts) > 1 else rel.split("/")[-2:-1]
            if line in have or not sections:
                continue
            if len(parts) == 1 and loaded_by_path is None:
                loaded_by_path = _loaded_by_path(rel, reads)
            for keyword, text in _keywords(reads, None if len(parts) == 1 and loaded_by_path else sections, parts[-1]):
                rule = m.match_setting(keyword, text.replace("{}", raw))
                if rule is None or (keyword == parts[-1] and (rule.code not in _CHOICE_CODES or saved)):
                    continue        # under its own name only a choice (not a count or a dtype: decisions 26, 30), and
                    # not in a run's saved config, which no trainer reads (pd35)
                if covered(directives, rule.code):
                    break
                symbol = f"{dotted}: {raw}"
                how = "it to a trainer" if keyword == parts[-1] else f"`{parts[-1]}`"
                message = rule.message.replace("{symbol}", symbol) + f" (the tree's code passes {how} as `{keyword}=`)"
                result.findings.append(call_finding(rule, product, result, (line, col, col + len(raw)), message,
                                                    symbol, {"keyword": keyword}))
                have.add(line)
                break
