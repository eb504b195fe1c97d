"""Lead, session 54 (review of session 53's change): facts a tree pass reads from files no summary held are kept in
the files' summaries, so a warm run reads no file for them."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq53c import _GSAM, _gsam_tree
from tests.test_tree_facts import _findings


def _recipe_contexts(run) -> set[str]:
    return {str(f.data.get("context")) for r in run.results if r.path.endswith(f"{_GSAM}Dockerfile") for f in r.findings}


def test_a_warm_run_reads_no_launch_file_for_the_copies_recipes(tmp_path: Path):
    # `_named_recipes` (tq53c) read every launch file and shell script outside the copies on each run; the words
    # holding a `/` that each spells are now kept in its summary (review53)
    from auditor.runner import run_static

    make = "gsam:\n\tdocker build -f data_process/util_codes/groundingsam2/Dockerfile -t gsam .\n"
    root = _gsam_tree(tmp_path / "tree", **{"Makefile": make, "scripts/run.sh": "#!/bin/bash\ncd data_process && ls\n"})
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert _recipe_contexts(cold) and "unreached" not in _recipe_contexts(cold)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _findings(warm) == _findings(cold)
    assert warm.project_reads == 0


def test_a_recipe_named_by_no_launch_file_stays_unreached_on_the_warm_run(tmp_path: Path):
    """Control: the kept words of a script that names another path do not name the copy's Dockerfile."""
    from auditor.runner import run_static

    root = _gsam_tree(tmp_path / "tree", **{"scripts/build.sh": "docker build -f docker/Dockerfile.train .\n"})
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert _recipe_contexts(cold) == {"unreached"}
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _recipe_contexts(warm) == {"unreached"}
    assert warm.project_reads == 0


def test_opted_in_import_lines_are_read_once_per_module(monkeypatch):
    # review53: the backend context and the gates of one file both asked for them; the module's memo answers the second
    import ast

    import auditor.static.backends as backends

    tree = ast.parse("from transformers import AutoTokenizer\n\nif args.use_quantization:\n"
                     "    from transformers import BitsAndBytesConfig\n")
    calls = []
    real = backends._option_test
    monkeypatch.setattr(backends, "_option_test", lambda node: (calls.append(node), real(node))[1])
    first = backends.opted_in_import_lines(tree)
    assert first == {4}
    assert backends.opted_in_import_lines(tree) is first
    assert len(calls) == 1
    assert backends.opted_in_import_lines(ast.parse("import torch\nif args.x:\n    from torch import nn\n")) == {3}


def test_one_reader_says_which_calls_log_what_they_are_given():
    # review53: unreached_defs' own regex (`_log_api_usage_once`, `logger_*`) and astutil.MESSAGE_CALLS (`error`,
    # `exception`, `critical`) were two readers of one idea
    from auditor.static.astutil import MESSAGE_CALLS, logs_its_arguments

    for name in ("print", "logger.error", "log.exception", "logging.critical", "warnings.warn", "torch._C._log_api_usage_once",
                 "_log_api_usage", "logger_info", "log_rank_0", "print_rank_0", "warn_once", *MESSAGE_CALLS):
        assert logs_its_arguments(name), name
    for name in ("importlib.import_module", "catalog.get", "dialog", "build_model", "registry.get", "blog_post"):
        assert not logs_its_arguments(name), name
