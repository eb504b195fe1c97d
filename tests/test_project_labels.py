"""The blind draw and label check for project files (bench/project_labels.py), on a small tree made here."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module(tmp_path: Path):
    # a private module name per test, registered so that its dataclasses can resolve their annotations
    name = f"project_labels_under_test_{abs(hash(str(tmp_path)))}"
    spec = importlib.util.spec_from_file_location(name, BENCH / "project_labels.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    mod.HERE = tmp_path / "splits"
    mod.TREES = tmp_path / "trees"
    return mod


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "trees" / "proj"
    files = {
        "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.0\n",
        "setup.py": "from torch.utils.cpp_extension import CUDAExtension\n",
        "docker/Dockerfile.gpu": "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n",
        "scripts/train.sh": "export CUDA_VISIBLE_DEVICES=0\ntorchrun train.py\n",
        "csrc/kernel.cu": "#include <cuda_runtime.h>\n__global__ void k() {}\n",
        "configs/ds.json": '{"bf16": {"enabled": true}}\n',
        "environment.yml": "dependencies:\n  - pytorch-cuda=12.1\n",
        "configs/plain.yaml": "lr: 0.1\n",                      # no GPU word: never drawn
        "build/x.sh": "nvidia-smi\n",                            # an excluded folder: never drawn
        "tools/long.sh": "nvidia-smi\n" + "echo\n" * 400,        # over MAX_LINES: never drawn
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch\nx = torch.ones(1)"), nbformat.v4.new_markdown_cell("GPU"),
                nbformat.v4.new_code_cell(""), nbformat.v4.new_code_cell("x = x.cuda()")]
    (root / "demo.ipynb").write_text(nbformat.writes(nb))
    return root


def _split(mod, tmp_path: Path) -> None:
    (mod.HERE / "t").mkdir(parents=True)
    (mod.HERE / "t" / "sources.json").write_text(json.dumps({"sources": [
        {"name": "proj", "url": "https://github.com/o/proj", "commit": "0" * 40}]}))


def test_draw_takes_every_kind_before_any_twice_and_skips_excluded_files(tmp_path):
    mod = _module(tmp_path)
    _tree(tmp_path)
    _split(mod, tmp_path)
    mod.PER_REPO = 8
    assert mod.select("t") == 0
    files = json.loads((mod.HERE / "t" / "selection.json").read_text())["files"]
    kinds = [f["kind"] for f in files]
    assert sorted(kinds) == sorted(["requirements", "package", "dockerfile", "shell", "cuda", "config", "conda",
                                    "notebook"])
    paths = {f["path"] for f in files}
    assert not paths & {"configs/plain.yaml", "build/x.sh", "tools/long.sh"}
    mod.select("t")
    assert json.loads((mod.HERE / "t" / "selection.json").read_text())["files"] == files   # fixed seed


def test_notebook_lines_count_through_code_cells(tmp_path):
    mod = _module(tmp_path)
    root = _tree(tmp_path)
    # cell 1 has two lines, the empty cell counts one, the markdown cell none
    assert mod.file_lines(root / "demo.ipynb") == ["import torch", "x = torch.ones(1)", "", "x = x.cuda()"]


def test_check_finds_wrong_text_hash_category_and_missing_labels(tmp_path, capsys):
    mod = _module(tmp_path)
    root = _tree(tmp_path)
    _split(mod, tmp_path)
    selection = {"files": [{"repo": "proj", "path": "requirements.txt"}, {"repo": "proj", "path": "demo.ipynb"}]}
    (mod.HERE / "t" / "selection.json").write_text(json.dumps(selection))
    good = {"repo": "proj", "path": "requirements.txt",
            "sha256": hashlib.sha256((root / "requirements.txt").read_bytes()).hexdigest(),
            "lines": [{"line": 1, "category": "device", "note": "cu121 index",
                       "text": "--extra-index-url https://download.pytorch.org/whl/cu121"}]}
    label = mod.label_file("t", "proj", "requirements.txt")
    label.parent.mkdir(parents=True)
    label.write_text(yaml.safe_dump(good))
    assert mod.check("t") == 1                                   # the notebook has no label file
    assert "no label file" in capsys.readouterr().out
    nb_label = {"repo": "proj", "path": "demo.ipynb",
                "sha256": hashlib.sha256((root / "demo.ipynb").read_bytes()).hexdigest(),
                "lines": [{"line": 4, "category": "device", "note": ".cuda()", "text": "x = x.cuda()"}]}
    mod.label_file("t", "proj", "demo.ipynb").write_text(yaml.safe_dump(nb_label))
    assert mod.check("t") == 0
    capsys.readouterr()
    bad = dict(good, sha256="0" * 64, lines=[{"line": 2, "category": "cuda", "note": "x", "text": "torch==9"}])
    label.write_text(yaml.safe_dump(bad))
    assert mod.check("t") == 1
    out = capsys.readouterr().out
    assert "sha256 differs" in out and "bad category" in out and "is not the line" in out
    # a very long line (a one-line data file) is labelled by its start and the sha256 of its text
    line = "--extra-index-url https://download.pytorch.org/whl/cu121"
    hashed = dict(good, lines=[{"line": 1, "category": "device", "note": "cu121 index", "text_start": line[:20],
                                "text_sha256": hashlib.sha256(line.encode()).hexdigest()}])
    label.write_text(yaml.safe_dump(hashed))
    assert mod.check("t") == 0
    hashed["lines"][0]["text_sha256"] = "0" * 64
    label.write_text(yaml.safe_dump(hashed))
    assert mod.check("t") == 1
    assert "text_sha256 / text_start do not match" in capsys.readouterr().out


def test_cap_scores_the_first_positive_lines_in_file_order_and_every_none_line(tmp_path):
    mod = _module(tmp_path)
    items = [{"line": 9, "category": "device"}, {"line": 2, "category": "none"}, {"line": 5, "category": ["device", "precision"]},
             {"line": 1, "category": "device"}, {"line": 12, "category": "none"}, {"line": 7, "category": "kernel"}]
    assert [i["line"] for i in mod.capped(items, 2)] == [1, 2, 5, 12]      # 7 and 9 are past the cap
    assert mod.capped(items, None) == items                                # splits without a cap score everything
    # fixed in each SELECTION.md before labelling
    assert mod.LINE_CAP == {"test4": 40, "test5": 40, "test6": 40, "test7": 40, "test8": 40, "test9": 40, "test10": 40, "test11": 40, "test12": 40,
                            "test13": 40, "test14": 40, "test15": 40, "test16": 40, "test17": 40, "test18": 40, "test19": 40,
                            "test20": 40,
                            "test21": 40,
                            "test22": 40,
                            "test23": 40,
                            "test24": 40,
                            "test25": 40,
                            "test26": 40,
                            "test27": 40,
                            "test28": 40,
                            "test29": 40,
                            "test30": 40,
                            "test31": 40,
                            "test32": 40,
                            "test35": 40,
                            "test38": 40,
                            "test41": 40,
                            "test44": 40,
                            "test46": 40,
                            "test48": 40,
                            "test50": 40,
                            "test52": 40,
                            "test54": 40,
                            "test55": 40,
                            "test57": 40,
                            "test58": 40,
                            "test61": 40,
                            "test62": 40,
                            "test65": 40,
                            "test67": 40,
                            "test69": 40,
                            "test72": 40,
                            "test78": 40,
                            "test80": 40,
                            "test83": 40,
                            "test86": 40,
                            "test89": 40,
                            "test94": 40,
                            "test97": 40,
                            "test100": 40,
                            "test103": 40,
                            "test104": 40,
                            "test107": 40,
                            "test108": 40,
                            "test110": 40,
                            "test111": 40,
                            "test114": 40,
                            "test115": 40,
                            "test117": 40,
                            "test118": 40,
                            "test121": 40,
                            "test122": 40,
                            "test123": 40,
                            "test126": 40,
                            "test128": 40,
                            "test129": 40,
                            "test132": 40,
                            "test134": 40,
                            "test136": 40,
                            "test137": 40,
                            "test138": 40,
                            "test139": 40,
                            "test140": 40,
                            "test141": 40,
                            "test142": 40,
                            "test143": 40,
                            "test144": 40,
                            "test145": 40,
                            "test146": 40,
                            "test147": 40,
                            "test148": 40,
                            "test149": 40,
                            "test150": 40,
                            "test152": 40,
                            "test153": 40,
                            "test156": 40,
                            "test158": 40,
                            "test157": 40,
                            "test159": 40,
                            "test162": 40,
                            "test164": 40,
                            "test163": 40,
                            "test165": 40,
                            "test166": 40,
                            "test167": 40,
                            "test168": 40,
                            "test170": 40,
                            "test171": 40,
                            "test174": 40,
                            "test169": 40,
                            "test173": 40,
                            "test172": 40,
                            "test161": 40,
                            "test160": 40,
                            "test151": 40,
                            "test154": 40,
                            "test155": 40,
                            "tuned_t15": 40,
                            "tuned_t15d": 40, "tuned_t15f": 40, "tuned_t15s": 40, "tuned_t15u": 40, "tuned_t16d": 40,
                            "tuned_t16f": 40, "tuned_t17h": 40, "tuned_t18f": 40,
                            "tuned_t19f": 40, "tuned_t22c": 40}


def test_test4_draws_with_its_own_seed_and_size(tmp_path):
    mod = _module(tmp_path)
    _tree(tmp_path)
    _split(mod, tmp_path)
    mod.DRAWS = {"t": {"seed": 1504, "per_repo": 3}}
    assert mod.select("t") == 0
    drawn = json.loads((mod.HERE / "t" / "selection.json").read_text())
    assert (drawn["seed"], drawn["per_repo"], len(drawn["files"])) == (1504, 3, 3)
    assert [f["kind"] for f in drawn["files"]] == ["conda", "config", "cuda"]   # round-robin in sorted kind order


def test_project_file_splits_share_no_repository():
    """A held-out split is only held out if none of its repositories is in another split."""
    seen: dict[str, str] = {}
    for sources in sorted((BENCH / "project_files").glob("*/sources.json")):
        for src in json.loads(sources.read_text())["sources"]:
            url = src["url"].rstrip("/").lower()
            assert url not in seen, f"{url} is in both {seen[url]} and {sources.parent.name}"
            seen[url] = sources.parent.name
    assert "https://github.com/facebookresearch/detectron2" in seen          # test4 is among them
    assert seen.get("https://github.com/microsoft/unilm") == "test5"


def _redraw_committed(tmp_path, name: str):
    """Draw split `name` again by its rule on the pinned trees (skipped when they are not fetched), check the draw
    is the committed selection.json and that every drawn file, and no other, has a label file; returns the bench
    module, the split's sources and the committed selection."""
    mod = _module(tmp_path)
    split = BENCH / "project_files" / name
    sources = json.loads((split / "sources.json").read_text())["sources"]
    mod.TREES = BENCH / "_projects"
    if not all((mod.TREES / s["name"]).is_dir() for s in sources):
        pytest.skip(f"{name} trees not fetched (python bench/project_files.py fetch --split {name})")
    (mod.HERE / name).mkdir(parents=True)
    (mod.HERE / name / "sources.json").write_text((split / "sources.json").read_text())
    assert mod.select(name) == 0
    committed = json.loads((split / "selection.json").read_text())
    assert json.loads((mod.HERE / name / "selection.json").read_text()) == committed
    labels = {p.name for p in (split / "labels").glob("*.yaml")}
    assert labels == {f["repo"] + "__" + f["path"].replace("/", "__") + ".yaml" for f in committed["files"]}
    return mod, sources, committed


def test_test6_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test6's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1506,
    7 per repository), and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test6")
    assert mod.DRAWS["test6"] == {"seed": 1506, "per_repo": 7}
    assert len({f["repo"] for f in committed["files"]}) >= 12


def test_test7_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test7's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1507,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 56 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test7")
    assert mod.DRAWS["test7"] == {"seed": 1507, "per_repo": 7}
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) >= 12
    # the first draw (7 per repository) is each repository's first files of the extended draw
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test7" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test7") == 0
    first_draw = json.loads((mod.HERE / "test7" / "selection.json").read_text())["files"]
    assert len(first_draw) == 56
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head


def test_test8_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test8's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1508,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 61 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test8")
    assert mod.DRAWS["test8"] == {"seed": 1508, "per_repo": 7}
    assert mod.LINE_CAP["test8"] == 40
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) >= 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test8" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test8") == 0
    first_draw = json.loads((mod.HERE / "test8" / "selection.json").read_text())["files"]
    assert len(first_draw) == 61
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 73


def test_test9_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test9's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1509,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 54 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test9")
    assert mod.DRAWS["test9"] == {"seed": 1509, "per_repo": 7}
    assert mod.LINE_CAP["test9"] == 40
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) >= 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test9" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test9") == 0
    first_draw = json.loads((mod.HERE / "test9" / "selection.json").read_text())["files"]
    assert len(first_draw) == 54
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 66


def test_test10_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test10's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1510,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 57 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test10")
    assert mod.DRAWS["test10"] == {"seed": 1510, "per_repo": 7}
    assert mod.LINE_CAP["test10"] == 40
    assert "test10" not in mod.EXTRA_KINDS                                    # test9's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test10" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test10") == 0
    first_draw = json.loads((mod.HERE / "test10" / "selection.json").read_text())["files"]
    assert len(first_draw) == 57
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 69
    # the extension added three files to each repository that had more than seven candidates, none to the others
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r for r, n in added.items() if n} == {"StableCascade", "VILA", "LLaVA-NeXT", "Video-LLaVA"}
    assert set(added.values()) == {0, 3}


def test_test11_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test11's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1511,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 54 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test11")
    assert mod.DRAWS["test11"] == {"seed": 1511, "per_repo": 7}
    assert mod.LINE_CAP["test11"] == 40
    assert "test11" not in mod.EXTRA_KINDS                                    # test10's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test11" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test11") == 0
    first_draw = json.loads((mod.HERE / "test11" / "selection.json").read_text())["files"]
    assert len(first_draw) == 54
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 63
    # the extension added three files to each repository that had more than seven candidates, none to the others
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r for r, n in added.items() if n} == {"diffusion", "NeMo-Aligner", "IDM-VTON"}
    assert set(added.values()) == {0, 3}


def test_test12_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test12's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1512,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 68 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test12")
    assert mod.DRAWS["test12"] == {"seed": 1512, "per_repo": 7}
    assert mod.LINE_CAP["test12"] == 40
    assert "test12" not in mod.EXTRA_KINDS                                    # test11's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test12" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test12") == 0
    first_draw = json.loads((mod.HERE / "test12" / "selection.json").read_text())["files"]
    assert len(first_draw) == 68
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 92
    # the extension added three files to each repository that had more than seven candidates, none to the others
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r for r, n in added.items() if n} == {"Lumina-T2X", "Pyramid-Flow", "Vim", "VideoLLaMA2", "MoE-LLaVA",
                                                  "LanguageBind", "mPLUG-Owl", "Bunny"}
    assert set(added.values()) == {0, 3}


def test_test13_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test13's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1513,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 67 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test13")
    assert mod.DRAWS["test13"] == {"seed": 1513, "per_repo": 7}
    assert mod.LINE_CAP["test13"] == 40
    assert "test13" not in mod.EXTRA_KINDS                                    # test12's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == 12
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test13" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test13") == 0
    first_draw = json.loads((mod.HERE / "test13" / "selection.json").read_text())["files"]
    assert len(first_draw) == 67
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 87
    # the extension added up to three files to each repository that had more than seven candidates, none to the others
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r: n for r, n in added.items() if n} == {"TRELLIS": 3, "MambaVision": 3, "EVA": 3, "VideoMAE": 3,
                                                     "threestudio": 3, "ml-4m": 3, "tango": 1, "collie": 1}


def test_test14_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test14's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1514,
    7 per repository, then its one extension to 10 fixed before the first draw), the first draw's 58 files are the
    start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test14")
    assert mod.DRAWS["test14"] == {"seed": 1514, "per_repo": 7}
    assert mod.LINE_CAP["test14"] == 40
    assert "test14" not in mod.EXTRA_KINDS                                    # test13's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == 13
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / "test14" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test14") == 0
    first_draw = json.loads((mod.HERE / "test14" / "selection.json").read_text())["files"]
    assert len(first_draw) == 58
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == 64
    # the extension added files only to the repositories with more than seven candidates
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r: n for r, n in added.items() if n} == {"yolov10": 2, "Chinese-Vicuna": 3, "CodeFormer": 1}


# test15 to test29: test14's rule with a new seed (seed 1500 + N, 7 per repository, then the one extension to 10 their
# SELECTION.md fixed before the first draw); per split: (repositories, files of the first draw, files in all, the
# files the extension added per repository)
_EXTENDED_DRAWS = {
    "test15": (12, 60, 71, {"kohya_ss": 3, "so-vits-svc": 1, "VoiceCraft": 1, "Otter": 3, "lama": 3}),
    "test16": (12, 61, 75, {"h2ogpt": 3, "index-tts": 2, "QuaRot": 3, "OmniQuant": 3, "Mantis": 3}),
    "test17": (5, 16, 17, {"deepcompressor": 1}),                          # the five of pool B14 that qualify
    "test18": (10, 39, 48, {"EfficientQAT": 3, "SpargeAttn": 1, "TurboDiffusion": 3, "seed-vc": 2}),
    "test19": (4, 15, 18, {"flow_matching": 3}),                          # the four of pool B16a that qualify
    "test20": (8, 48, 63, {"groundingLMM": 3, "LLM-Shearing": 3, "pyreft": 3, "HALOs": 3, "Online-RLHF": 3}),  # the eight of pool B16b that qualify
    "test21": (15, 65, 76, {"omniserve": 3, "duo-attention": 3, "ShadowKV": 3, "MAGI-1": 2}),  # the 15 of pool B16c that qualify
    "test22": (10, 36, 42, {"Block-Sparse-Attention": 3, "Sparse-VideoGen": 3}),  # the 10 of pool B17a that qualify
    "test23": (16, 62, 75, {"VideoMAEv2": 3, "Open-MAGVIT2": 3, "mdlm": 2, "svox2": 2, "Wonder3D": 3}),  # the 16 of pool B17b that qualify
    "test24": (14, 75, 91, {"V-Express": 1, "hallo3": 2, "StableAnimator": 1, "ControlNeXt": 3, "PSHuman": 3,
                            "Scaffold-GS": 3, "CUT3R": 3}),                  # the 14 of pool B18a that qualify
    "test25": (9, 34, 40, {"fast3r": 3, "EveryDream2trainer": 3}),  # the 9 of pool B18b that qualify
    "test27": (9, 42, 48, {"OpenManus-RL": 2, "VL-RLHF": 3, "KVCache-Factory": 1}),  # the 4 of pool B19b and 5 of its extension that qualify
    "test28": (11, 50, 65, {"VideoX-Fun": 3, "SLAM-LLM": 3, "FunCodec": 3, "distil-whisper": 3,
                            "Qwen2-VL-Finetune": 3}),  # the 10 of pool B20 and 1 of its reserve that qualify
    "test29": (10, 41, 50, {"Llama2-Chinese": 3, "generative-recommenders": 3,
                            "Time-LLM": 3}),  # the 8 of pool B21 and 2 of its reserve that qualify
}


@pytest.mark.parametrize("split", sorted(_EXTENDED_DRAWS))
def test_extended_selection_is_exactly_what_its_rule_draws(tmp_path, split):
    """The split's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees, the first
    draw's files are the start of it, the extension added files only to the repositories with more than seven
    candidates, and every drawn file, and no other, has a label file."""
    repos, first_files, all_files, added_by_repo = _EXTENDED_DRAWS[split]
    mod, sources, committed = _redraw_committed(tmp_path, split)
    assert mod.DRAWS[split] == {"seed": 1500 + int(split[4:]), "per_repo": 7}
    assert mod.LINE_CAP[split] == 40
    assert split not in mod.EXTRA_KINDS                                       # test14's kinds, nothing added
    assert {s.get("per_repo") for s in sources} == {10}                      # the extension, for every repository
    assert len({f["repo"] for f in committed["files"]}) == repos
    first = [dict(s, per_repo=7) for s in sources]
    (mod.HERE / split / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select(split) == 0
    first_draw = json.loads((mod.HERE / split / "selection.json").read_text())["files"]
    assert len(first_draw) == first_files
    for repo in {f["repo"] for f in committed["files"]}:
        mine = [f for f in committed["files"] if f["repo"] == repo]
        head = [f for f in first_draw if f["repo"] == repo]
        assert mine[:len(head)] == head
    assert len(committed["files"]) == all_files
    added = {r: sum(f["repo"] == r for f in committed["files"]) - sum(f["repo"] == r for f in first_draw)
             for r in {f["repo"] for f in committed["files"]}}
    assert {r: n for r, n in added.items() if n} == added_by_repo


def test_test26_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test26's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1526,
    7 per repository, no extension), the first draw's 33 files (its first seven repositories) are the start of it
    after the amendment appended six repositories, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test26")
    assert mod.DRAWS["test26"] == {"seed": 1526, "per_repo": 7}
    assert mod.LINE_CAP["test26"] == 40
    assert "test26" not in mod.EXTRA_KINDS
    assert all("per_repo" not in s for s in sources)                          # no extension to 10
    assert len(sources) == 13 and len(committed["files"]) == 52
    first = sources[:7]                                                       # the sources fixed before the first draw
    (mod.HERE / "test26" / "sources.json").write_text(json.dumps({"sources": first}))
    assert mod.select("test26") == 0
    first_draw = json.loads((mod.HERE / "test26" / "selection.json").read_text())["files"]
    assert len(first_draw) == 33
    assert committed["files"][:33] == first_draw


# test65 on: test58's rule with a new seed (7 files per repository, the 40-line file cap, no extra kinds); the split,
# its seed, its repositories and its drawn files, as each SELECTION.md records them
SEVEN_PER_REPOSITORY_DRAWS = [("test65", 1665, 16, 61), ("test67", 1667, 15, 83), ("test69", 1669, 14, 80),
                              ("test72", 1672, 16, 76), ("test78", 1778, 12, 68), ("test80", 1780, 13, 66),
                              ("test83", 1783, 15, 69), ("test86", 1786, 14, 63),
                              ("test89", 1789, 15, 73), ("test94", 1794, 13, 63), ("test97", 1797, 14, 63),
                              ("test100", 1800, 15, 82), ("test103", 1803, 14, 53), ("test104", 1804, 12, 60),
                              ("test107", 1807, 12, 62), ("test108", 1808, 13, 71),
                              ("test110", 1810, 14, 68), ("test111", 1811, 13, 44),
                              ("test114", 1814, 12, 64), ("test115", 1815, 14, 65),
                              ("test117", 1817, 14, 77), ("test118", 1818, 13, 57),
                              ("test121", 1821, 15, 74), ("test122", 1822, 16, 79),
                              ("test123", 1823, 13, 75),
                              ("test126", 1826, 16, 82),
                              ("test128", 1828, 16, 82), ("test129", 1829, 16, 77),
                              ("test132", 1832, 16, 75),
                              ("test134", 1834, 14, 64),
                              ("test136", 1836, 14, 52),
                              ("test137", 1837, 14, 69),
                              ("test138", 1838, 12, 72),
                              ("test139", 1839, 12, 54),
                              ("test140", 1840, 12, 51),
                              ("test141", 1841, 12, 35),
                              ("test142", 1842, 14, 56),
                              ("test143", 1843, 14, 47),
                              ("test144", 1844, 14, 58),
                              ("test145", 1845, 13, 43),
                              ("test146", 1846, 14, 46),
                              ("test147", 1847, 15, 86),
                              ("test148", 1848, 14, 58),
                              ("test149", 1849, 16, 72),
                              ("test150", 1850, 14, 36),
                              ("test152", 1852, 16, 43),
                              ("test153", 1853, 16, 50),
                              ("test151", 1851, 16, 63),
                              ("test156", 1856, 13, 32),
                              ("test154", 1854, 15, 54),
                              ("test155", 1855, 14, 48),
                              ("test158", 1858, 14, 37),
                              ("test157", 1857, 12, 33),
                              ("test159", 1859, 16, 51),
                              ("test162", 1862, 15, 59),
                              ("test161", 1861, 13, 31),
                              ("test160", 1860, 16, 44),
                              ("test164", 1864, 14, 49),
                              ("test163", 1863, 12, 42),
                              ("test165", 1865, 13, 41),
                              ("test166", 1866, 14, 42),
                              ("test167", 1867, 14, 54),
                              ("test168", 1868, 13, 52),
                              ("test170", 1870, 15, 41),
                              ("test171", 1871, 12, 35),
                              ("test169", 1869, 12, 54),
                              ("test173", 1873, 14, 36),
                              ("test174", 1874, 13, 36),
                              ("test172", 1872, 14, 43)]


@pytest.mark.parametrize("split, seed, repositories, files", SEVEN_PER_REPOSITORY_DRAWS)
def test_seven_per_repository_selection_is_exactly_what_its_rule_draws(tmp_path, split, seed, repositories, files):
    """The split's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (its seed, 7 per
    repository), and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, split)
    assert mod.DRAWS[split] == {"seed": seed, "per_repo": 7}
    assert mod.LINE_CAP[split] == 40
    assert split not in mod.EXTRA_KINDS
    assert len(sources) == repositories and len(committed["files"]) == files


def test_tuned_t15d_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t15d's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1525,
    5 per repository, fifteen repositories after its one extension), the first draw's 27 files (the first nine
    repositories) are the start of it, and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t15d")
    assert mod.DRAWS["tuned_t15d"] == {"seed": 1525, "per_repo": 5}
    assert len(sources) == 15 and len(committed["files"]) == 36
    (mod.HERE / "tuned_t15d" / "sources.json").write_text(json.dumps({"sources": sources[:9]}))
    assert mod.select("tuned_t15d") == 0
    first_draw = json.loads((mod.HERE / "tuned_t15d" / "selection.json").read_text())["files"]
    assert len(first_draw) == 27 and committed["files"][:27] == first_draw


def test_tuned_t15f_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t15f's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1535,
    4 per repository, test8's kinds plus the `build` kind), and every drawn file, and no other, has a label file; the
    added kind changes no other split's kinds."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t15f")
    assert mod.DRAWS["tuned_t15f"] == {"seed": 1535, "per_repo": 4}
    assert len(sources) == 9 and len(committed["files"]) == 36
    assert {f["kind"] for f in committed["files"]} >= {"build", "cuda", "package"}
    assert mod._kind("CMakeLists.txt", "tuned_t15f") == "build" and mod._kind("CMakeLists.txt", "test8") is None


def test_tuned_t15s_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t15s's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (test14's
    rule, seed 1599, 7 per repository, no extension), and every drawn file, and no other, has a label file;
    pytorch2.0_ttnn ships no candidate file and draws nothing."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t15s")
    assert mod.DRAWS["tuned_t15s"] == {"seed": 1599, "per_repo": 7}
    assert mod.LINE_CAP["tuned_t15s"] == 40 and "tuned_t15s" not in mod.EXTRA_KINDS
    assert len(sources) == 8 and len(committed["files"]) == 40
    drawn = {r: sum(f["repo"] == r for f in committed["files"]) for r in {s["name"] for s in sources}}
    assert drawn == {"Real-ESRGAN": 7, "NeMo-RL": 7, "FlagAttention": 1, "Pretrained-Language-Model": 7,
                     "neural-speed": 4, "LLM-TPU": 7, "pytorch2.0_ttnn": 0, "FlagCX": 7}


def test_tuned_t15u_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t15u's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (test15's
    rule, seed 1521, 6 per repository, no extension), and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t15u")
    assert mod.DRAWS["tuned_t15u"] == {"seed": 1521, "per_repo": 6}
    assert mod.LINE_CAP["tuned_t15u"] == 40 and "tuned_t15u" not in mod.EXTRA_KINDS
    assert len(sources) == 10 and len(committed["files"]) == 35
    drawn = {r: sum(f["repo"] == r for f in committed["files"]) for r in {s["name"] for s in sources}}
    assert drawn == {"MegaTTS3": 1, "EditAnything": 3, "FoundationPose": 6, "edm2": 1, "RoboticsDiffusionTransformer": 4,
                     "UniAD": 6, "Pointcept": 6, "prismatic-vlms": 1, "openvla": 1, "diffusion_policy": 6}


def test_tuned_t16d_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t16d's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (test18's
    kinds and filter, seed 1621, 6 per repository, no extension), and every drawn file, and no other, has a label
    file."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t16d")
    assert mod.DRAWS["tuned_t16d"] == {"seed": 1621, "per_repo": 6}
    assert mod.LINE_CAP["tuned_t16d"] == 40 and "tuned_t16d" not in mod.EXTRA_KINDS
    assert len(sources) == 10 and len(committed["files"]) == 37
    drawn = {r: sum(f["repo"] == r for f in committed["files"]) for r in {s["name"] for s in sources}}
    assert drawn == {"direct-preference-optimization": 1, "BrushNet": 6, "MotionCtrl": 2, "LoFTR": 6, "EasyVolcap": 6,
                     "ZoeDepth": 2, "Amphion": 6, "understand-r1-zero": 4, "Open-Reasoner-Zero": 1, "MetaMath": 3}


def test_tuned_t17h_selection_is_exactly_what_its_rule_draws(tmp_path):
    """tuned_t17h's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (test21's
    kinds and filter, seed 1721, 7 per repository, no extension), and every drawn file, and no other, has a label
    file."""
    mod, sources, committed = _redraw_committed(tmp_path, "tuned_t17h")
    assert mod.DRAWS["tuned_t17h"] == {"seed": 1721, "per_repo": 7}
    assert mod.LINE_CAP["tuned_t17h"] == 40 and "tuned_t17h" not in mod.EXTRA_KINDS
    assert len(sources) == 6 and len(committed["files"]) == 35
    drawn = {r: sum(f["repo"] == r for f in committed["files"]) for r in {s["name"] for s in sources}}
    assert drawn == {"koboldcpp": 7, "PowerInfer": 7, "distributed-llama": 0, "modelscope-agent": 7, "nm-vllm": 7,
                     "candle": 7}


def test_test61_selection_is_exactly_what_its_rule_draws(tmp_path):
    """test61's committed selection.json is the draw its SELECTION.md rule gives on the pinned trees (seed 1661,
    7 per repository, 15 repositories), and every drawn file, and no other, has a label file."""
    mod, sources, committed = _redraw_committed(tmp_path, "test61")
    assert mod.DRAWS["test61"] == {"seed": 1661, "per_repo": 7}
    assert mod.LINE_CAP["test61"] == 40
    assert len(sources) == 15 and len({f["repo"] for f in committed["files"]}) == 15
    assert len(committed["files"]) == 52
