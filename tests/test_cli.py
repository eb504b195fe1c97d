"""The command line as CI uses it: exit codes, config in pyproject.toml, baseline, select/ignore,
the cache and the process pool giving identical results, explain and rules."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from auditor.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "gpt_train.py"


def audit(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys, *args: str) -> tuple[int, dict]:
    code, out, _ = audit(capsys, *args, "--format", "json", "--no-cache")
    return code, json.loads(out)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.distributed as dist\n"
        "dist.init_process_group(backend='nccl')\nmodel = Net().cuda()\ntorch.cuda.synchronize()\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("x = y.cuda()\n")
    return tmp_path


def test_fail_on_levels(project, capsys):
    assert as_json(capsys, str(project), "--fail-on", "never")[0] == 0
    code, doc = as_json(capsys, str(project), "--fail-on", "warning")
    assert code == 1 and doc["summary"]["by_severity"]["error"] > 0   # plain CUDA lines are errors (issue 11)
    clean = project / "clean.py"
    clean.write_text("import os\n")
    assert as_json(capsys, str(clean), "--fail-on", "info")[0] == 0


def test_json_contract(project, capsys):
    _, doc = as_json(capsys, str(project))
    assert set(doc) >= {"tool", "findings", "errors", "summary"}
    fields = {"code", "name", "category", "severity", "effort", "path", "line", "col", "end_line", "end_col",
              "message", "substitution", "fix", "source", "symbol", "fingerprint"}
    for f in doc["findings"]:
        assert fields <= set(f)
        assert f["source"] == "static" and len(f["fingerprint"]) == 16
    assert doc["tool"]["target"]["product"] == "a2"


def test_select_ignore_and_per_file_ignores_from_pyproject(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.npu-audit]\nignore = ["NPU002"]\nper-file-ignores = { "tests/*" = ["device"] }\n')
    _, doc = as_json(capsys, str(project))
    codes = {f["code"] for f in doc["findings"]}
    assert "NPU002" not in codes and "NPU001" in codes
    assert all(not f["path"].startswith("tests/") for f in doc["findings"])
    _, doc = as_json(capsys, str(project), "--select", "NPU002")   # the flag replaces the config's select
    assert {f["code"] for f in doc["findings"]} == set()            # ...but config ignore still applies
    assert main([str(project), "--config", str(project / "none.toml")]) == 2


def test_bad_config_is_a_usage_error(project, capsys):
    (project / "pyproject.toml").write_text('[tool.npu-audit]\nselekt = ["NPU0"]\n')
    code, _, err = audit(capsys, str(project))
    assert code == 2 and "unknown keys" in err


def test_invalid_pyproject_without_our_table_is_a_warning(project, capsys):
    # a project's own broken pyproject.toml (a duplicate key, as some real trees ship) holds no settings of ours
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nname = "demo2"\n'
                                            'dependencies = ["torch==2.1.0+cu118"]\n')
    code, out, err = audit(capsys, str(project), "--format", "json", "--no-cache", "--fail-on", "never")
    assert "is not valid TOML" in err and "default settings" in err
    doc = json.loads(out)
    assert {f["code"] for f in doc["findings"]} >= {"NPU001"}         # the other files are audited
    # the file itself is still one that could not be audited: the run exits 2 unless --ignore-errors
    assert code == 2 and [e["path"] for e in doc["errors"]] == ["pyproject.toml"]
    # the same file naming our table, or given by --config, still stops the run
    (project / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["NPU002"\n')
    code, _, err = audit(capsys, str(project), "--no-cache")
    assert code == 2 and "is not valid TOML" in err
    (project / "other.toml").write_text('[project]\nname = "a"\nname = "b"\n')
    code, _, err = audit(capsys, str(project), "--no-cache", "--config", str(project / "other.toml"))
    assert code == 2 and "is not valid TOML" in err


def test_target_from_pyproject(project, capsys):
    (project / "pyproject.toml").write_text('[tool.npu-audit]\nproduct = "910b"\ntorch-npu = "2.5.1"\n')
    _, doc = as_json(capsys, str(project))
    assert doc["tool"]["target"]["torch_npu"] == "v2.5" and doc["tool"]["target"]["product"] == "a2"


def test_baseline_reports_only_new_findings(project, capsys, tmp_path):
    baseline = tmp_path / "baseline.json"
    code, _, err = audit(capsys, str(project), "--write-baseline", str(baseline), "--no-cache")
    assert code == 0 and baseline.exists()
    code, doc = as_json(capsys, str(project), "--baseline", str(baseline), "--fail-on", "info")
    assert code == 0 and doc["findings"] == []
    # Lines moved and a new finding added: only the new one is reported.
    src = (project / "train.py").read_text()
    (project / "train.py").write_text("# a new header comment\n\n" + src + "torch.cuda.empty_cache()\n")
    code, doc = as_json(capsys, str(project), "--baseline", str(baseline), "--fail-on", "info")
    assert code == 1
    assert [f["symbol"] for f in doc["findings"]] == ["torch.cuda.empty_cache"]
    assert doc["summary"]["baseline_suppressed"] > 0


def test_cache_and_workers_give_identical_results(tmp_path, capsys):
    tree = tmp_path / "repo"
    tree.mkdir()
    for i in range(40):                                   # enough files for the pool to start
        shutil.copy(EXAMPLE, tree / f"train_{i}.py")
    cache = tmp_path / "cache"

    def findings(*flags):
        code, out, _ = audit(capsys, str(tree), "--format", "json", *flags)
        return json.loads(out)["findings"]

    cold_serial = findings("--no-cache", "--jobs", "1")
    cold_pool = findings("--no-cache", "--jobs", "2")
    fill = findings("--cache-dir", str(cache))
    warm = findings("--cache-dir", str(cache))
    assert cold_serial == cold_pool == fill == warm
    assert len(cold_serial) > 40
    assert list(cache.glob("results-*.json"))
    # an edited file is re-analysed, the others come from the cache
    (tree / "train_0.py").write_text("x = y.cuda()\n")
    after = findings("--cache-dir", str(cache))
    assert [f for f in after if f["path"] == "train_0.py"][0]["line"] == 1


def test_output_file_and_formats(project, capsys, tmp_path):
    for fmt in ("console", "concise", "json", "sarif", "github", "markdown", "csv"):
        out = tmp_path / f"report.{fmt}"
        code = main([str(project), "--format", fmt, "--output", str(out), "--no-cache", "--fail-on", "never"])
        assert code == 0 and out.read_text().strip(), fmt
    text = (tmp_path / "report.concise").read_text()
    assert "train.py:4:" in text and "NPU001" in text


def test_statistics(project, capsys):
    code, out, _ = audit(capsys, str(project), "--statistics", "--no-cache", "--fail-on", "never")
    assert "NPU001" in out and "NPU002" in out


def test_explain_and_rules(capsys):
    code, out, _ = audit(capsys, "explain", "NPU001")
    assert code == 0 and "## Why it matters on Ascend" in out and ".cuda()" in out
    code, out, _ = audit(capsys, "explain", "cuda-tensor-method")
    assert code == 0
    from auditor.rules import rules_by_code
    unused = next(f"NPU{n:03d}" for n in range(999, 0, -1) if f"NPU{n:03d}" not in rules_by_code())
    assert audit(capsys, "explain", unused)[0] == 2         # a well-formed code no rule has
    code, out, _ = audit(capsys, "rules", "--format", "json")
    rules = json.loads(out)
    assert code == 0 and {"NPU001", "NPU501"} <= {r["code"] for r in rules}


def test_example_audit_finds_every_family_it_contains(capsys):
    code, doc = as_json(capsys, str(EXAMPLE), "--fail-on", "never")
    assert doc["summary"]["total"] >= 15
    assert doc["errors"] == []


def test_dynamic_modes_without_torch_are_a_clear_usage_error(project, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, _, err = audit(capsys, str(project / "train.py"), "--trace", "--no-cache")
    assert code == 2 and "need PyTorch" in err


def test_excludes_default_config_and_flag(project, capsys):
    for folder in ("venv/lib", "third_party/nccl", "legacy", "src/build", "pkg/dist"):
        (project / folder).mkdir(parents=True)
        (project / folder / "m.py").write_text("x = y.cuda()\n")
    (project / "pkg" / "dist" / "__init__.py").write_text("")    # a package named dist, not build output
    (project / "pyproject.toml").write_text('[tool.npu-audit]\nexclude = ["third_party/*"]\n')
    _, doc = as_json(capsys, str(project), "--exclude", "legacy/")
    paths = {f["path"] for f in doc["findings"]}
    # venv/ and build/ by default, the rest as asked
    assert paths == {"train.py", "tests/test_x.py", "pkg/dist/m.py"}


def test_inline_suppression_applies_to_trace_findings(tmp_path, capsys):
    src = (Path(__file__).resolve().parent / "fixtures" / "trace" / "handwritten_llm.py").read_text()
    line = "        penalty = torch.lgamma(self.prior).sum()"
    assert line in src
    model = tmp_path / "model.py"
    model.write_text(src.replace(line, line + "  # npu-audit: ignore[NPU550]"))
    code, out, _ = audit(capsys, str(model), "--trace", "--no-cache", "--format", "json", "--fail-on", "never")
    doc = json.loads(out)
    traced = [f for f in doc["findings"] if f["source"] == "trace"]
    assert traced, "the trace produced no findings at all"
    lgamma_line = src.splitlines().index(line) + 1
    assert not [f for f in traced if f["code"] == "NPU550" and f["line"] == lgamma_line]
    assert doc["summary"]["inline_suppressed"] >= 1


def test_findings_do_not_depend_on_the_folder_the_audit_runs_from(tmp_path, capsys, monkeypatch):
    # `audit tree` from the parent folder read every path with the folder's name in front, so the tree's root
    # `tools/` folder (scripts a user runs by hand: entries) was no root folder and its code read as unreached
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "tools").mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "model.py").write_text("import torch\n\n\ndef build():\n    return torch.nn.Linear(2, 2)\n")
    (tree / "app.py").write_text("import gradio as gr\nfrom pkg.model import build\n\n\ndef main():\n"
                                 "    gr.Interface(fn=build().cuda(), inputs='text', outputs='text').launch()\n\n\n"
                                 "if __name__ == '__main__':\n    main()\n")
    (tree / "tools" / "convert.py").write_text("import torch\nfrom pkg.model import build\n\n\ndef convert(path):\n"
                                               "    model = build()\n    model.cuda()\n"
                                               "    torch.save(model.state_dict(), path)\n")

    def run(where, target):
        monkeypatch.chdir(where)
        _, doc = as_json(capsys, "check", target)
        return doc

    inside = run(tree, ".")
    outside = run(tmp_path, "tree")
    assert {(f["path"], f["line"], f["code"]) for f in inside["findings"]} >= {("tools/convert.py", 7, "NPU001")}
    assert [("tree/" + f["path"], f["line"], f["code"], f["severity"]) for f in inside["findings"]] == \
        [(f["path"], f["line"], f["code"], f["severity"]) for f in outside["findings"]]


def test_a_folder_given_through_a_symbolic_link_is_named_from_where_it_resolves(tmp_path, capsys, monkeypatch):
    # `bench/_projects/x` where `_projects` links elsewhere: the walk's paths did not lie under the resolved root, so
    # every file was named by its absolute path (and a tree pass indexing a path's folders by its name stopped)
    real = tmp_path / "data" / "tree"
    (real / "tools").mkdir(parents=True)
    (real / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    (real / "tools" / "export.py").write_text("import torch\n\n\ndef export(m):\n    return m.cuda()\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "links").symlink_to(tmp_path / "data")
    monkeypatch.chdir(work)
    code, doc = as_json(capsys, "check", "links/tree", "--fail-on", "never")
    assert code == 0 and not doc["errors"]
    paths = {f["path"] for f in doc["findings"]}
    assert paths == {"train.py", "tools/export.py"}
    monkeypatch.chdir(real)
    _, inside = as_json(capsys, "check", ".", "--fail-on", "never")
    assert [(f["path"], f["line"], f["code"], f["severity"]) for f in inside["findings"]] == \
        [(f["path"], f["line"], f["code"], f["severity"]) for f in doc["findings"]]
