"""The recall bench (bench/recall.py): label parsing, scoring, and the labels shipped in bench/corpus/.

Scoring is tested on a small real snippet (open_clip_train's autocast helper) and hand-written
`audit --format json` documents, so it runs without the downloaded corpus or the CLI.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("recall_bench", REPO / "bench" / "recall.py")
recall = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = recall   # dataclasses look their module up here
spec.loader.exec_module(recall)

SNIPPET = '''\
import torch
from contextlib import suppress
from functools import partial


def get_autocast(precision, device_type='cuda'):
    # 'amp' means fp16 autocast on cuda
    if precision =='amp':
        amp_dtype = torch.float16
    elif precision == 'amp_bfloat16' or precision == 'amp_bf16':
        amp_dtype = torch.bfloat16
    else:
        return suppress

    return partial(torch.amp.autocast, device_type=device_type, dtype=amp_dtype)
'''

LABELS = {
    "package": "open-clip-torch",
    "version": "3.3.0",
    "path": "open_clip_train/precision.py",
    "lines": [
        {"line": 6, "category": "device", "note": "'cuda' default", "text": "def get_autocast(precision, device_type='cuda'):"},
        {"line": 7, "category": "none", "note": "comment", "text": "# 'amp' means fp16 autocast on cuda"},
        {"line": 9, "category": "precision", "note": "fp16", "text": "amp_dtype = torch.float16"},
        {"line": 11, "category": "precision", "note": "bf16", "text": "amp_dtype = torch.bfloat16"},
        {"line": 15, "category": ["precision", "device"], "note": "autocast",
         "text": "return partial(torch.amp.autocast, device_type=device_type, dtype=amp_dtype)"},
    ],
}
KEY = "open-clip-torch/open_clip_train/precision.py"


def finding(line: int, category: str, code: str = "NPU001", path: str = KEY) -> dict:
    return {"path": path, "line": line, "col": 1, "category": category, "code": code}


@pytest.fixture
def bench(tmp_path, monkeypatch):
    """A corpus with one real file and its labels, wired into the module's folders."""
    corpus = tmp_path / "_corpus"
    src = corpus / "open-clip-torch-3.3.0" / "open_clip_train" / "precision.py"
    src.parent.mkdir(parents=True)
    src.write_text(SNIPPET)
    labels_dir = tmp_path / "split" / "labels"
    labels_dir.mkdir(parents=True)
    doc = dict(LABELS, sha256=recall.sha256_of(src))
    (labels_dir / "open-clip-torch__open_clip_train__precision.py.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(recall, "CORPUS_DIR", corpus)
    monkeypatch.setattr(recall, "SPLITS", {"dev": labels_dir.parent})
    return tmp_path


def test_score_counts_recall_right_category_false_hits_and_unlabelled(bench):
    labels = recall.load_all_labels("dev")
    doc = {"findings": [
        finding(6, "device"),
        finding(7, "device", "NPU002"),             # a comment flagged: false hit
        finding(9, "precision", "NPU201"),
        finding(15, "precision", "NPU202"),         # one finding covers both labelled categories' line
        finding(3, "precision", "NPU203"),          # unlabelled line: listed for review
        finding(1, "device", path="elsewhere/x.py"),  # not a sampled file: ignored
    ]}
    r = recall.score(labels, doc)
    assert r["per_category"]["device"] == {"labelled": 2, "found": 2, "right_category": 1,
                                           "recall": 100.0, "recall_right_category": 50.0}
    assert r["per_category"]["precision"]["labelled"] == 3
    assert r["per_category"]["precision"]["found"] == 2
    assert r["per_category"]["precision"]["recall"] == pytest.approx(66.7)
    assert [m["line"] for m in r["misses"]["precision"]] == [11]
    assert r["misses"]["precision"][0]["text"] == "amp_dtype = torch.bfloat16"
    assert [(w["line"], w["category"], w["found_as"]) for w in r["wrong_category"]] == [(15, "device", ["precision"])]
    assert [(h["line"], h["codes"]) for h in r["false_hits"]] == [(7, ["NPU002"])]
    assert r["false_hit_rate"] == 100.0
    assert [(u["file"], u["line"]) for u in r["unlabelled_flagged"]] == [(KEY, 3)]
    assert r["total"]["labelled"] == 5 and r["total"]["found"] == 4


def test_run_with_findings_file_prints_table_and_json(bench, capsys):
    findings = bench / "audit.json"
    findings.write_text(json.dumps({"tool": {}, "findings": [finding(6, "device"), finding(3, "precision")],
                                    "errors": [], "summary": {}}))
    assert recall.main(["run", "--findings", str(findings)]) == 0
    out = capsys.readouterr().out
    assert "device" in out and "missed [precision] (3):" in out
    assert f"{KEY}:11: amp_dtype = torch.bfloat16" in out
    assert f"{KEY}:3: NPU001 (precision): from functools import partial" in out

    assert recall.main(["run", "--findings", str(findings), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["dev"]
    assert result["per_category"]["device"]["found"] == 1
    assert result["unlabelled_flagged"][0]["text"] == "from functools import partial"


def test_drifted_corpus_file_is_a_usage_error(bench, capsys):
    src = bench / "_corpus" / "open-clip-torch-3.3.0" / "open_clip_train" / "precision.py"
    src.write_text("\n" + SNIPPET)    # every line moves down by one
    findings = bench / "audit.json"
    findings.write_text(json.dumps({"findings": []}))
    assert recall.main(["run", "--findings", str(findings)]) == 2
    err = capsys.readouterr().err
    assert "sha256 differs" in err and "text drifted" in err and "Traceback" not in err


def test_missing_corpus_says_to_fetch(bench, capsys):
    (bench / "_corpus" / "open-clip-torch-3.3.0" / "open_clip_train" / "precision.py").unlink()
    assert recall.main(["check"]) == 2
    assert "run `python bench/recall.py fetch`" in capsys.readouterr().out


@pytest.mark.parametrize("doc, message", [
    ({"package": "p", "version": "1", "path": "a.py", "lines": [{"line": 1, "category": "gpu"}]}, "unknown category 'gpu'"),
    ({"package": "p", "version": "1", "path": "a.py", "lines": [{"line": 1}]}, "needs line and category"),
    ({"package": "p", "version": "1", "lines": []}, "missing keys ['path']"),
    ({"package": "p", "version": "1", "path": "a.py",
      "lines": [{"line": 1, "category": "device"}, {"line": 1, "category": "none"}]}, "labelled twice"),
    ({"package": "p", "version": "1", "path": "a.py", "lines": [{"line": 1, "category": ["none", "device"]}]},
     "cannot be combined"),
])
def test_bad_labels_are_rejected_with_a_clear_message(tmp_path, doc, message):
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(doc))
    with pytest.raises(recall.BenchError, match=message.replace("[", r"\[").replace("]", r"\]")):
        recall.parse_labels(p)


def test_audit_output_without_findings_is_rejected(bench, capsys):
    bad = bench / "audit.json"
    bad.write_text(json.dumps({"error": "boom"}))
    assert recall.main(["run", "--findings", str(bad)]) == 2
    assert "'findings' list" in capsys.readouterr().err


def shipped(split):
    return [recall.parse_labels(p) for p in sorted((recall.SPLITS[split] / "labels").glob("*.yaml"))]


def test_shipped_labels_are_well_formed_and_cover_the_brief():
    """The committed ground truth: >= 20 files, >= 6 code bases, every static category labelled."""
    labels = shipped("dev")
    assert len(labels) >= 20
    assert len({lf.package for lf in labels}) >= 6
    cats = {c for lf in labels for ll in lf.lines.values() for c in ll.categories}
    assert cats == set(recall.CATEGORIES)
    assert sum(1 for lf in labels for ll in lf.lines.values() if not ll.categories) >= 100
    sources = {(s["name"], s["version"]) for s in recall.load_sources("dev")}
    for lf in labels:
        assert (lf.package, lf.version) in sources, lf.labels_path.name
        assert lf.sha256 and all(ll.text for ll in lf.lines.values()), lf.labels_path.name


def test_test_split_is_blind_of_dev_and_big_enough():
    """The test split: >= 10 code bases the dev set does not use, >= 200 labelled lines."""
    labels = shipped("test")
    dev_bases = {s["name"] for s in recall.load_sources("dev")}
    test_sources = {(s["name"], s["version"]) for s in recall.load_sources("test")}
    assert len({lf.package for lf in labels}) >= 10
    assert not {lf.package for lf in labels} & dev_bases
    assert sum(len(lf.lines) for lf in labels) >= 200
    for lf in labels:
        assert (lf.package, lf.version) in test_sources, lf.labels_path.name
        assert lf.sha256 and all(ll.text for ll in lf.lines.values()), lf.labels_path.name


@pytest.mark.parametrize("split", ["dev", "test", "fresh", "fresh2"])
def test_shipped_labels_match_the_corpus_when_fetched(split):
    labels = shipped(split)
    if not all(lf.corpus_file.exists() for lf in labels):
        pytest.skip("corpus not fetched (python bench/recall.py fetch)")
    assert [p for lf in labels for p in recall.check_against_corpus(lf)] == []


def test_paths_audited_from_a_parent_folder_map_to_the_sampled_file(bench):
    labels = recall.load_all_labels("dev")
    doc = {"findings": [finding(9, "precision", path="/tmp/elsewhere/" + KEY),
                        finding(6, "device", path="./" + KEY)]}
    r = recall.score(labels, doc)
    assert r["per_category"]["precision"]["found"] == 1
    assert r["per_category"]["device"]["found"] == 1


@pytest.mark.parametrize("split", ["fresh", "fresh2", "test3", "test4", "test5", "test6", "test7", "test8", "test9",
                                   "test10", "test11", "test12", "test13", "test14", "test15", "test16", "test17", "test18",
                                   "test19", "test20", "test21", "test22", "test23", "test24", "test25", "test26",
                                   "test27", "test28", "test34", "test36", "test37", "test39", "test40", "test42", "test43",
                                   "test45", "test47", "test49", "test51", "test53", "test56", "test59",
                                   "test60", "test63", "test64", "test66", "test68", "test70", "test71", "test73",
                                   "test75", "test77", "test76", "test79", "test82", "test81", "test84", "test85", "test87",
                                   "test88", "test90", "test91", "test93", "test92", "test95", "test96", "test98",
                                   "test99", "test102", "test101", "test106", "test105", "test109", "test112",
                                   "test113", "test116", "test119", "test120", "test124",
                                   "test125", "test127", "test130", "test131", "test133", "test135", "tuned_t14d",
                                   "tuned_t14g", "tuned_s15c",
                                   "tuned_t16c"])
def test_fresh_splits_use_code_bases_no_other_split_uses(split):
    labels = shipped(split)
    used = {s["name"] for other in recall.SPLITS if other != split for s in recall.load_sources(other)}
    assert len({lf.package for lf in labels}) >= 5
    assert not {lf.package for lf in labels} & used
    assert all(lf.sha256 and all(ll.text for ll in lf.lines.values()) for lf in labels)


@pytest.mark.parametrize("split", ["test", "fresh", "fresh2"])
def test_blind_split_files_are_exactly_the_ones_the_selection_rule_draws(split):
    """bench/select_test.py applied to the pinned archives gives the labelled files, no more, no fewer."""
    select_test = _load_select_test()
    labels = shipped(split)
    if not all(lf.corpus_file.exists() for lf in labels):
        pytest.skip(f"{split} corpus not fetched (python bench/recall.py --split {split} fetch)")
    per = max(sum(1 for lf in labels if lf.package == name) for name in {lf.package for lf in labels})
    drawn = {(src["name"], path) for src, path in select_test.draw(per, split)}
    assert drawn == {(lf.package, lf.path) for lf in labels}


def test_test3_files_are_exactly_what_its_rule_draws():
    """test3's main rounds and per-category top-ups (its SELECTION.md), stopping points read from
    its labels, give the labelled files, no more, no fewer, and need no further file."""
    select_test = _load_select_test()
    labels = shipped("test3")
    if not all(lf.corpus_file.exists() for lf in labels):
        pytest.skip("test3 corpus not fetched (python bench/recall.py --split test3 fetch)")
    drawn, needed = select_test.resolve_test3({(lf.package, lf.path): lf for lf in labels})
    assert needed is None
    assert len(drawn) == len({d[:2] for d in drawn})           # no file drawn twice
    assert {d[:2] for d in drawn} == {(lf.package, lf.path) for lf in labels}
    assert len({lf.package for lf in labels}) >= 10
    # Without the labels of a drawn file the rule stops there and asks for that file.
    last = drawn[-1][:2]
    partial = {(lf.package, lf.path): lf for lf in labels if (lf.package, lf.path) != last}
    assert select_test.resolve_test3(partial)[1] == last


def _load_select_test():
    """bench/select_test.py as a module (the bench folder is not a package)."""
    spec = importlib.util.spec_from_file_location("select_test", REPO / "bench" / "select_test.py")
    select_test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(select_test)
    return select_test


def _replay(select_test, labels, split):
    """The rule of test4 to test8 (bench/corpus_test4|5|6|7|8/SELECTION.md), stopping points read from the labels:
    main rounds 1-2, per-category top-up (>= 20 must-flag lines, at most 12 files per category; from test25 on the
    split's TOPUP_RULES entry),
    then further main rounds, one file at a time, until >= 350 must-flag (line, category) pairs,
    then test4's apex supplement. From test16 on, at most MAX_FILES_PER_CODE_BASE[split] files of one code base in
    the whole split: a file of a code base at that limit is skipped like a file already drawn (test16's
    SELECTION.md). Returns the drawn (code base, path) keys in order and the first drawn file with no labels."""
    sources = recall.load_sources(split)
    cap = getattr(select_test, "MAX_FILES_PER_CODE_BASE", {}).get(split)

    def full(name):
        return cap is not None and sum(1 for n, _ in drawn if n == name) >= cap
    orders: dict[str, list[str]] = {}
    for src, path in select_test.draw(None, split):
        orders.setdefault(src["name"], []).append(path)
    drawn: list[tuple[str, str]] = []
    must = {c: 0 for c in recall.CATEGORIES}

    def take(key):
        drawn.append(key)
        if key not in labels:
            return False
        for ll in labels[key].lines.values():
            for c in ll.categories:
                must[c] += 1
        return True

    for rnd in range(2):
        for src in sources:
            order = orders.get(src["name"], [])
            if rnd < len(order) and not take((src["name"], order[rnd])):
                return drawn, drawn[-1]
    # test25 on: the split's own top-up order, target and cap (select_test.TOPUP_RULES); earlier splits 20 and 12.
    rule = getattr(select_test, "TOPUP_RULES", {}).get(split, {})
    target, topup_cap = rule.get("target", 20), rule.get("cap", 12)
    for cat in rule.get("order", recall.CATEGORIES):
        taken = 0
        cat_target = rule.get("targets", {}).get(cat, target)   # test27 on: a category's own target
        for src, path in select_test.topup_order(cat, split):
            if must[cat] >= cat_target or taken >= topup_cap:
                break
            if (src["name"], path) in drawn or full(src["name"]):
                continue
            taken += 1
            if not take((src["name"], path)):
                return drawn, drawn[-1]
    rnd = 2
    while sum(must.values()) < 350 and any(rnd < len(o) for o in orders.values()):
        for src in sources:
            order = orders.get(src["name"], [])
            if sum(must.values()) >= 350:
                break
            if rnd >= len(order) or (src["name"], order[rnd]) in drawn or full(src["name"]):
                continue
            if not take((src["name"], order[rnd])):
                return drawn, drawn[-1]
        rnd += 1
    # The apex supplement (SELECTION.md): its own pool and order, until the split has >= 20 apex
    # must-flag lines, 12 supplement files, or the pool is dry.
    if not any(s.get("supplement") == "apex" for s in sources):
        return drawn, None
    taken = 0
    for src, path in select_test.supplement_order("apex", split):
        if must["apex"] >= 20 or taken >= 12:
            break
        taken += 1
        if not take((src["name"], path)):
            return drawn, drawn[-1]
    return drawn, None


def test_test4_files_are_exactly_what_its_rule_draws():
    """test4's labelled files are the draw its SELECTION.md rule gives, no more, no fewer."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("test4")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("test4 corpus not fetched (python bench/recall.py --split test4 fetch)")
    drawn, needed = _replay(select_test, labels, "test4")
    assert needed is None
    assert len(drawn) == len(set(drawn))
    assert set(drawn) == set(labels)
    assert len({name for name, _ in drawn}) >= 12
    # Without the labels of a drawn file the rule stops there and asks for that file.
    partial = {k: v for k, v in labels.items() if k != drawn[-1]}
    assert _replay(select_test, partial, "test4")[1] == drawn[-1]
    # The supplement's files come from its code bases only, after all 71 files of the main draw.
    supplement = {s["name"] for s in recall.load_sources("test4") if s.get("supplement") == "apex"}
    pool = [(src["name"], path) for src, path in select_test.supplement_order("apex", "test4")]
    assert [k for k in drawn if k[0] in supplement] == drawn[71:] == pool[:len(drawn) - 71]
    apex = sum("apex" in ll.categories for lf in labels.values() for ll in lf.lines.values())
    assert len(drawn) - 71 in (len(pool), 12) or apex >= 20     # it stopped where the rule says


def _replayed_draw(split: str, min_code_bases: int):
    """The labelled files of a blind split replayed against its SELECTION.md rule (test5's rule, kept by test6 to
    test8; or, under a deadline clause, a prefix of it): returns the select_test module and the labelled files in
    draw order, after checking they are the draw, no more, no fewer, and that without the labels of the last drawn
    file the rule stops there and asks for that file."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped(split)}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip(f"{split} corpus not fetched (python bench/recall.py --split {split} fetch)")
    drawn, needed = _replay(select_test, labels, split)
    labelled = drawn if needed is None else drawn[:-1]
    assert len(labelled) == len(set(labelled))
    assert set(labelled) == set(labels)
    assert len({name for name, _ in labelled}) >= min_code_bases
    partial = {k: v for k, v in labels.items() if k != labelled[-1]}
    assert _replay(select_test, partial, split)[1] == labelled[-1]
    return select_test, labelled


def _first_two_rounds(select_test, labelled: list, split: str) -> list:
    """Main rounds 1-2 come first and in sources.json order: two files per code base."""
    first_two = [(src["name"], path) for src, path in select_test.draw(2, split)]
    assert len(first_two) == 2 * len(recall.load_sources(split))
    assert labelled[:len(first_two)] == first_two[0::2] + first_two[1::2]
    return first_two


def test_test5_files_are_exactly_what_its_rule_draws():
    _replayed_draw("test5", 12)


def test_test6_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test6", 12)          # test5's rule on pool A3
    _first_two_rounds(select_test, labelled, "test6")


def test_test7_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test7", 10)          # test6's rule on pool A4
    first_two = _first_two_rounds(select_test, labelled, "test7")
    # The apex pool's only file is a main-round file, so the apex top-up draws nothing.
    apex_pool = [(src["name"], path) for src, path in select_test.topup_order("apex", "test7")]
    assert apex_pool and set(apex_pool) <= set(first_two)


def test_test8_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test8", 10)          # test7's rule on pool A5
    _first_two_rounds(select_test, labelled, "test8")
    # The distributed and apex pools ran dry: every file of them was drawn (main rounds or top-up).
    for category in ("distributed", "apex"):
        pool = {(src["name"], path) for src, path in select_test.topup_order(category, "test8")}
        assert pool and pool <= set(labelled)


def test_test9_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test9", 10)          # test8's rule on pool A6
    _first_two_rounds(select_test, labelled, "test9")
    # Top-up (SELECTION.md outcome): distributed 5 files, precision 12 (the cap), apex 1 (its whole pool),
    # attention 12 (the cap), each in its pool's order, skipping files drawn before.
    at = 24
    for category, taken in (("distributed", 5), ("precision", 12), ("apex", 1), ("attention", 12)):
        pool = [(src["name"], path) for src, path in select_test.topup_order(category, "test9")]
        fresh = [k for k in pool if k not in labelled[:at]]
        assert labelled[at:at + taken] == fresh[:taken]
        at += taken
    assert len(select_test.topup_order("apex", "test9")) == 1                # the apex pool ran dry


def test_test10_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test10", 10)         # test9's rule on pool A7
    _first_two_rounds(select_test, labelled, "test10")
    # Top-up (SELECTION.md outcome): distributed 4 files (its whole pool after the main rounds), precision 12 (the
    # cap), apex 2 (its whole pool after the precision top-up), attention 6, each in its pool's order, skipping files
    # drawn before; device, kernel and third_party needed none.
    at = 24
    for category, taken in (("distributed", 4), ("precision", 12), ("apex", 2), ("attention", 6)):
        pool = [(src["name"], path) for src, path in select_test.topup_order(category, "test10")]
        fresh = [k for k in pool if k not in labelled[:at]]
        assert labelled[at:at + taken] == fresh[:taken]
        at += taken
    for category in ("distributed", "apex"):                                 # these pools ran dry
        pool = {(src["name"], path) for src, path in select_test.topup_order(category, "test10")}
        assert pool and pool <= set(labelled)
    # The draw stopped at 350 must-flag pairs with a further main-round file.
    labels = {(lf.package, lf.path): lf for lf in shipped("test10")}
    pairs = [sum(len(ll.categories) for ll in labels[k].lines.values()) for k in labelled]
    assert sum(pairs) >= 350 > sum(pairs[:-1])
    assert len(labelled) > at


def test_test11_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test11", 12)         # test10's rule on pool A8
    # Main rounds 1-2 in sources.json order: pool A8 is small, so boltz, chai_lab, pykeen and torchani (one eligible
    # file each) give one file and round 2 only has the other eight code bases.
    orders = [(src["name"], [p for s, p in select_test.draw(None, "test11") if s["name"] == src["name"]])
              for src in recall.load_sources("test11")]
    main = [(name, order[rnd]) for rnd in range(2) for name, order in orders if rnd < len(order)]
    assert len(main) == 20 and labelled[:20] == main
    # Top-up (SELECTION.md outcome): precision 5 files, its whole pool after the main rounds, in its pool's order;
    # device needed none, the distributed and apex pools are empty, and the attention and third_party pools' only
    # files (and kernel's) were drawn before their turn.
    pool = [(src["name"], path) for src, path in select_test.topup_order("precision", "test11")]
    assert labelled[20:25] == [k for k in pool if k not in main]
    for category in ("distributed", "apex"):
        assert select_test.topup_order(category, "test11") == []
    for category in ("precision", "attention", "kernel", "third_party"):
        pool_keys = {(src["name"], path) for src, path in select_test.topup_order(category, "test11")}
        assert pool_keys and pool_keys <= set(labelled[:25])
    # Further main rounds ran every code base's order to its end before 350 pairs: every eligible file is drawn.
    assert set(labelled) == {(name, path) for name, order in orders for path in order}
    labels = {(lf.package, lf.path): lf for lf in shipped("test11")}
    assert sum(len(ll.categories) for k in labelled for ll in labels[k].lines.values()) < 350


def test_test12_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test12", 10)         # test11's rule on pool A9
    labels = {(lf.package, lf.path): lf for lf in shipped("test12")}
    # Main rounds 1-2 in sources.json order: local-attention and native-sparse-attention-pytorch have one eligible
    # file each, so round 2 has the other eight code bases.
    orders = [(src["name"], [p for s, p in select_test.draw(None, "test12") if s["name"] == src["name"]])
              for src in recall.load_sources("test12")]
    main = [(name, order[rnd]) for rnd in range(2) for name, order in orders if rnd < len(order)]
    assert len(main) == 18 and labelled[:18] == main

    def pool(category):
        return [(src["name"], path) for src, path in select_test.topup_order(category, "test12")]

    def pairs(keys, category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in keys for ll in labels[k].lines.values())

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn: distributed drew its
    # whole pool (7 files), precision 9 files (the 9th brings it to 20 or more), apex's pool is empty, attention's
    # two files were main-round files, third_party drew the rest of its pool (2 files) and stays under 20.
    dist_pool = [k for k in pool("distributed") if k not in main]
    assert len(dist_pool) == 7 and labelled[18:25] == dist_pool and pairs(labelled[:25], "distributed") >= 20
    prec = [k for k in pool("precision") if k not in labelled[:25]][:9]
    assert labelled[25:34] == prec
    assert pairs(labelled[:33], "precision") < 20 <= pairs(labelled[:34], "precision")
    assert select_test.topup_order("apex", "test12") == []
    assert set(pool("attention")) <= set(main) and pairs(labelled, "attention") < 20
    tp = [k for k in pool("third_party") if k not in labelled[:34]]
    assert len(tp) == 2 and labelled[34:36] == tp and pairs(labelled[:36], "third_party") < 20
    assert pairs(labelled[:18], "device") >= 20 and pairs(labelled[:36], "kernel") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before, until the
    # split has 350 must-flag pairs: the rule ran to its end (no deadline prefix), the last file crossing 350.
    later = [(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
             if rnd < len(order) and (name, order[rnd]) not in labelled[:36]]
    assert labelled[36:] == later[:len(labelled) - 36]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert len(labelled) == 80


def test_test13_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test13", 12)         # test12's rule on pool A10
    labels = {(lf.package, lf.path): lf for lf in shipped("test13")}
    # Main rounds 1-2 in sources.json order: chgnet and spandrel have one eligible file each, so round 2 has the
    # other ten code bases.
    orders = [(src["name"], [p for s, p in select_test.draw(None, "test13") if s["name"] == src["name"]])
              for src in recall.load_sources("test13")]
    main = [(name, order[rnd]) for rnd in range(2) for name, order in orders if rnd < len(order)]
    assert len(main) == 22 and labelled[:22] == main

    def pool(category):
        return [(src["name"], path) for src, path in select_test.topup_order(category, "test13")]

    def pairs(keys, category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in keys for ll in labels[k].lines.values())

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn: device needed none;
    # distributed drew its one-file pool and stays under 20; precision drew 12 files (the cap) and stays under 20;
    # apex drew its whole pool (4 files) and stays under 20; attention's one-file pool was a main-round file; kernel
    # needed none; third_party drew 2 files, the second bringing it to 20 or more.
    assert pairs(main, "device") >= 20
    assert pool("distributed") == [k for k in pool("distributed") if k not in main] == labelled[22:23]
    assert pairs(labelled[:23], "distributed") < 20
    assert labelled[23:35] == [k for k in pool("precision") if k not in labelled[:23]][:12]
    assert pairs(labelled[:35], "precision") < 20
    assert len(pool("apex")) == 4 and labelled[35:39] == pool("apex") and pairs(labelled[:39], "apex") < 20
    assert set(pool("attention")) <= set(main) and pairs(labelled, "attention") < 20
    assert pairs(labelled[:39], "kernel") >= 20
    assert labelled[39:41] == [k for k in pool("third_party") if k not in labelled[:39]][:2]
    assert pairs(labelled[:40], "third_party") < 20 <= pairs(labelled[:41], "third_party")
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before, until the
    # split has 350 must-flag pairs: the rule ran to its end (no deadline prefix), the last file reaching 350.
    later = [(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
             if rnd < len(order) and (name, order[rnd]) not in labelled[:41]]
    assert labelled[41:] == later[:len(labelled) - 41]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert len(labelled) == 79


def test_test14_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test14", 15)         # test13's rule on pool A11
    labels = {(lf.package, lf.path): lf for lf in shipped("test14")}
    # Main rounds 1-2 in sources.json order: gluonts, momentfm, nougat-ocr and python-doctr have one eligible file
    # each, so round 2 has the other eleven code bases.
    orders = [(src["name"], [p for s, p in select_test.draw(None, "test14") if s["name"] == src["name"]])
              for src in recall.load_sources("test14")]
    main = [(name, order[rnd]) for rnd in range(2) for name, order in orders if rnd < len(order)]
    assert len(main) == 26 and labelled[:26] == main

    def pool(category):
        return [(src["name"], path) for src, path in select_test.topup_order(category, "test14")]

    def pairs(keys, category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in keys for ll in labels[k].lines.values())

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn: device needed none;
    # distributed's pool is empty; precision drew 5 files, the fifth bringing it to 20 or more; apex drew the two
    # pool files not drawn before and stays under 20; attention's four files were all main-round files; kernel drew
    # 1 file, bringing it to 20 or more; third_party drew its one-file pool and stays under 20.
    assert pairs(main, "device") >= 20
    assert select_test.topup_order("distributed", "test14") == []
    assert labelled[26:31] == [k for k in pool("precision") if k not in main][:5]
    assert pairs(labelled[:30], "precision") < 20 <= pairs(labelled[:31], "precision")
    apex = [k for k in pool("apex") if k not in labelled[:31]]
    assert len(apex) == 2 and labelled[31:33] == apex and pairs(labelled[:33], "apex") < 20
    assert set(pool("attention")) <= set(main) and pairs(labelled, "attention") < 20
    assert labelled[33:34] == [k for k in pool("kernel") if k not in labelled[:33]][:1]
    assert pairs(labelled[:33], "kernel") < 20 <= pairs(labelled[:34], "kernel")
    assert pool("third_party") == labelled[34:35] and pairs(labelled[:35], "third_party") < 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before: every order
    # ran out before 350 pairs, so the split is every eligible file of the fifteen code bases.
    later = [(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
             if rnd < len(order) and (name, order[rnd]) not in labelled[:35]]
    assert labelled[35:] == later
    assert set(labelled) == {(name, path) for name, order in orders for path in order}
    assert pairs(labelled) < 350
    assert len(labelled) == 64


def test_test15_files_are_exactly_what_its_rule_draws():
    select_test, labelled = _replayed_draw("test15", 13)         # test14's rule on pool A12
    labels = {(lf.package, lf.path): lf for lf in shipped("test15")}
    # Main rounds 1-2 in sources.json order: the five code bases with one eligible file give one, so round 2 has the
    # other eight.
    orders = [(src["name"], [p for s, p in select_test.draw(None, "test15") if s["name"] == src["name"]])
              for src in recall.load_sources("test15")]
    main = [(name, order[rnd]) for rnd in range(2) for name, order in orders if rnd < len(order)]
    assert len(main) == 21 and labelled[:21] == main

    def pool(category):
        return [(src["name"], path) for src, path in select_test.topup_order(category, "test15")]

    def pairs(keys, category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in keys for ll in labels[k].lines.values())

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn: device needed none;
    # distributed, apex and kernel have empty pools; precision drew every undrawn file of its 14-file pool (11, under
    # the cap of 12) and stays under 20; attention then drew every undrawn file of its 11-file pool (6) and stays
    # under 20; third_party's two-file pool was drawn in the main rounds.
    assert pairs(main, "device") >= 20
    assert select_test.topup_order("distributed", "test15") == [] == select_test.topup_order("apex", "test15")
    assert select_test.topup_order("kernel", "test15") == []
    precision = [k for k in pool("precision") if k not in main]
    assert len(precision) == 11 and labelled[21:32] == precision and pairs(labelled[:32], "precision") < 20
    attention = [k for k in pool("attention") if k not in labelled[:32]]
    assert len(attention) == 6 and labelled[32:38] == attention and pairs(labelled[:38], "attention") < 20
    assert set(pool("third_party")) <= set(main) and pairs(labelled, "third_party") < 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before: every order
    # ran out before 350 pairs, so the split is every eligible file of the thirteen code bases.
    later = [(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
             if rnd < len(order) and (name, order[rnd]) not in labelled[:38]]
    assert labelled[38:] == later
    assert set(labelled) == {(name, path) for name, order in orders for path in order}
    assert pairs(labelled) < 350
    assert len(labelled) == 82



class _LimitedDraw:
    """A split drawn by test16's rule (at most `limit` files per code base): its replayed draw, the main rounds 1-2
    and the readings its SELECTION.md outcome is checked with."""

    def __init__(self, split: str, code_bases: int, limit: int = 8):
        self.select_test, self.labelled = _replayed_draw(split, code_bases)
        self.split, self.limit = split, limit
        self.labels = {(lf.package, lf.path): lf for lf in shipped(split)}
        self.orders = [(src["name"], [p for s, p in self.select_test.draw(None, split) if s["name"] == src["name"]])
                       for src in recall.load_sources(split)]
        self.main = [(name, order[rnd]) for rnd in range(2) for name, order in self.orders if rnd < len(order)]

    def pool(self, category):
        return [(src["name"], path) for src, path in self.select_test.topup_order(category, self.split)]

    def pairs(self, keys, category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in keys for ll in self.labels[k].lines.values())

    def open_(self, keys, drawn):
        """keys not drawn yet whose code base is under the file limit when its turn comes (SELECTION.md)."""
        out, taken = [], list(drawn)
        for k in keys:
            if k not in taken and sum(1 for n, _ in taken if n == k[0]) < self.limit:
                out.append(k)
                taken.append(k)
        return out


def test_test16_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test16", 19)         # test15's rule on pool A13, 8 files per code base
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    # Main rounds 1-2 in sources.json order: melotts, scvi-tools and torchfcpe have one eligible file each, so round 2
    # has the other sixteen code bases.
    assert len(main) == 35 and labelled[:35] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew its one-file pool and stays under 20; precision drew 12 files (the cap)
    # and stays under 20; apex's pool is empty; attention drew the three pool files not drawn before (its pool ran dry)
    # and stays under 20; kernel drew one file (lycoris-lora's eighth), the rest of its pool being drawn or
    # lycoris-lora's, and stays under 20; third_party drew 3 files, the third bringing it to 20 or more.
    assert pairs(main, "device") >= 20
    assert pool("distributed") == labelled[35:36] and pairs(labelled[:36], "distributed") < 20
    assert labelled[36:48] == open_(pool("precision"), labelled[:36])[:12] and pairs(labelled[:48], "precision") < 20
    assert select_test.topup_order("apex", "test16") == []
    assert labelled[48:51] == open_(pool("attention"), labelled[:48]) and pairs(labelled[:51], "attention") < 20
    assert labelled[51:52] == open_(pool("kernel"), labelled[:51]) and pairs(labelled[:52], "kernel") < 20
    assert sum(1 for name, _ in labelled[:52] if name == "lycoris-lora") == 8
    assert labelled[52:55] == open_(pool("third_party"), labelled[:52])[:3]
    assert pairs(labelled[:54], "third_party") < 20 <= pairs(labelled[:55], "third_party")
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:55])
    assert labelled[55:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 78


def test_test17_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test17", 14)         # test16's rule on pool A14, 8 files per code base
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    # Main rounds 1-2 in sources.json order: deepface, pufferlib, rotary-embedding-torch and spacy-transformers have one
    # eligible file each, so round 2 has the other ten code bases.
    assert len(main) == 24 and labelled[:24] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed's one-file pool was drawn in round 1 and it stays under 20; precision drew 7
    # files, the seventh bringing it to 20 or more; apex's pool is empty; attention drew every pool file still open
    # (9; mteb and intel-extension-for-transformers reached the limit) and stays under 20; kernel drew its one-file
    # pool and stays under 20; third_party drew 2 files, the second bringing it to 20 or more.
    assert pairs(main, "device") >= 20
    assert pool("distributed") == [labelled[6]] and pairs(labelled, "distributed") < 20
    assert labelled[24:31] == open_(pool("precision"), labelled[:24])[:7]
    assert pairs(labelled[:30], "precision") < 20 <= pairs(labelled[:31], "precision")
    assert select_test.topup_order("apex", "test17") == []
    assert labelled[31:40] == open_(pool("attention"), labelled[:31]) and pairs(labelled[:40], "attention") < 20
    assert pool("kernel") == labelled[40:41] and pairs(labelled[:41], "kernel") < 20
    assert labelled[41:43] == open_(pool("third_party"), labelled[:41])[:2]
    assert pairs(labelled[:42], "third_party") < 20 <= pairs(labelled[:43], "third_party")
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:43])
    assert labelled[43:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 61


def test_test18_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test18", 17)         # test16's rule on pool A15, 8 files per code base
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    # Main rounds 1-2 in sources.json order: eleven code bases have one eligible file each, so round 2 has the other six.
    assert len(main) == 23 and labelled[:23] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew the one pool file not drawn before and stays under 20; precision drew 12
    # files (the cap) and stays under 20; apex's and kernel's pools are empty; attention drew three files (the third is
    # pyiqa's eighth, so the last pool file, also pyiqa's, is skipped) and stays under 20; third_party needed none.
    assert pairs(main, "device") >= 20
    assert labelled[23:24] == open_(pool("distributed"), labelled[:23]) and pairs(labelled[:24], "distributed") < 20
    assert labelled[24:36] == open_(pool("precision"), labelled[:24])[:12] and pairs(labelled[:36], "precision") < 20
    assert select_test.topup_order("apex", "test18") == [] and select_test.topup_order("kernel", "test18") == []
    assert labelled[36:39] == open_(pool("attention"), labelled[:36]) and pairs(labelled[:39], "attention") < 20
    assert sum(1 for name, _ in labelled[:39] if name == "pyiqa") == 8
    assert pairs(labelled[:39], "third_party") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:39])
    assert labelled[39:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 48


def _rounds_until(orders: list, labels: dict, files: int, pairs: int) -> list:
    """A tuning sample's draw: rounds over the code bases in order, one file per code base per round in its seeded
    order, stopping at the first file that brings the split to `files` files and `pairs` must-flag pairs; every drawn
    file must have labels."""
    drawn, count, rnd = [], 0, 0
    while not (len(drawn) >= files and count >= pairs) and any(rnd < len(order) for _, order in orders):
        for name, order in orders:
            if rnd >= len(order) or (len(drawn) >= files and count >= pairs):
                continue
            key = (name, order[rnd])
            assert key in labels, f"the rule draws {key}, which has no labels"
            drawn.append(key)
            count += sum(len(ll.categories) for ll in labels[key].lines.values())
        rnd += 1
    return drawn


def test_tuned_t14d_files_are_exactly_what_its_rule_draws():
    """tuned_t14d (a tuning sample, its SELECTION.md): rounds over the code bases in sources.json order, one file
    per code base per round in each one's seeded order, stopping at the first file that brings the split to at
    least 40 files and 200 must-flag pairs; the labelled files are that prefix, no more, no fewer."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t14d")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t14d corpus not fetched (python bench/recall.py --split tuned_t14d fetch)")
    orders = [(src["name"], select_test.seeded_order(
        src["name"], select_test.eligible(recall.source_dir(src["name"], src["version"])),
        select_test.SEED_PREFIXES["tuned_t14d"])) for src in recall.load_sources("tuned_t14d")]
    drawn = _rounds_until(orders, labels, files=40, pairs=200)
    assert set(drawn) == set(labels)
    assert len(drawn) == 53 and len({name for name, _ in drawn}) == 12


# ludwig's DeepSpeed strategy (test8) and a kernels package whose backend module imports torch_npu: audited as one
# tree, the torch_npu import of one code base would drop NPU418 (DeepSpeed's NPU note) from the other.
LUDWIG_DS = '''\
import deepspeed
import torch


class DeepSpeedStrategy:
    def prepare(self, model, trainer_config, base_config):
        ds_config = {"train_batch_size": trainer_config.batch_size}
        model_engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config)
        return model_engine
'''
KERNELS_BACKENDS = '''\
import importlib.util

if importlib.util.find_spec("torch_npu") is not None:
    import torch_npu  # noqa: F401
    _HAS_NPU = True
else:
    _HAS_NPU = False
'''


@pytest.fixture
def two_code_bases(tmp_path, monkeypatch):
    corpus = tmp_path / "_corpus"
    labels_dir = tmp_path / "split" / "labels"
    labels_dir.mkdir(parents=True)
    for package, version, path, text, lines in [
            ("ludwig", "0.10.4", "ludwig/distributed/deepspeed.py", LUDWIG_DS,
             [{"line": 1, "category": "third_party", "note": "deepspeed", "text": "import deepspeed"}]),
            ("kernels", "0.11.0", "kernels/backends.py", KERNELS_BACKENDS, [])]:
        src = corpus / f"{package}-{version}" / path
        src.parent.mkdir(parents=True)
        src.write_text(text)
        doc = {"package": package, "version": version, "path": path, "sha256": recall.sha256_of(src), "lines": lines}
        (labels_dir / f"{package}__{path.replace('/', '__')}.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(recall, "CORPUS_DIR", corpus)
    monkeypatch.setattr(recall, "SPLITS", {"dev": labels_dir.parent})
    return recall.load_all_labels("dev")


def test_each_code_base_is_audited_as_its_own_root(two_code_bases):
    audit = [sys.executable, "-m", "auditor.cli", "--no-cache"]
    per_base = recall.run_audit(two_code_bases, audit, [])
    hits = {(f["path"], f["line"], f["code"]) for f in per_base["findings"]}
    assert ("ludwig/ludwig/distributed/deepspeed.py", 1, "NPU418") in hits
    r = recall.score(two_code_bases, per_base)
    assert r["per_category"]["third_party"]["found"] == 1 and r["audit_errors"] == []
    # the former model: one tree, where kernels' torch_npu import silenced ludwig's note until tk42 scoped the drop
    # to the files the NPU path covers (auditor/static/ported.py): ludwig's module neither sits beside kernels'
    # backend nor imports it
    one_tree = recall.run_audit(two_code_bases, audit, [], one_tree=True)
    assert ("ludwig/ludwig/distributed/deepspeed.py", 1, "NPU418") in {
        (f["path"], f["line"], f["code"]) for f in one_tree["findings"]}


def test_tuned_t14g_files_are_exactly_what_its_rule_draws():
    """tuned_t14g (a second tuning sample, its SELECTION.md): test7's file rule without stable-fast's vendored
    third_party/cutlass/, rounds over the code bases in sources.json order, one file per code base per round,
    stopping at the first file that brings the split to at least 40 files and 200 must-flag pairs."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t14g")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t14g corpus not fetched (python bench/recall.py --split tuned_t14g fetch)")
    orders = [(src["name"], select_test.seeded_order(
        src["name"], select_test.eligible(recall.source_dir(src["name"], src["version"]), "tuned_t14g"),
        select_test.SEED_PREFIXES["tuned_t14g"])) for src in recall.load_sources("tuned_t14g")]
    assert all(not path.startswith("third_party/cutlass/") and "/third_party/cutlass/" not in path
               for _, order in orders for path in order)
    drawn = _rounds_until(orders, labels, files=40, pairs=200)
    assert set(drawn) == set(labels)
    assert len(drawn) == 64 and len({name for name, _ in drawn}) == 9


def _capped_draw(select_test, labels: dict, split: str, cap: int, target: int, pairs_stop: int) -> list:
    """test15's rule with a per-code-base cap (bench/corpus_tuned_t14w/SELECTION.md): main rounds 1-2; per-category
    top-up in its pool's order (skipping drawn files and code bases at the cap) while the category has fewer than
    `target` must-flag lines, at most 12 files each; then rounds 3, 4, ... (skipping drawn files and capped code
    bases) until `pairs_stop` must-flag pairs. Every drawn file must have labels."""
    orders = [(src["name"], [p for s, p in select_test.draw(None, split) if s["name"] == src["name"]])
              for src in recall.load_sources(split)]
    drawn: list = []

    def count(category=None):
        return sum(len(ll.categories) if category is None else ll.categories.count(category)
                   for k in drawn for ll in labels[k].lines.values())

    def take(key) -> None:
        assert key in labels, f"the rule draws {key}, which has no labels"
        drawn.append(key)

    def open_slot(name) -> bool:
        return sum(1 for n, _ in drawn if n == name) < cap

    for rnd in range(2):
        for name, order in orders:
            if rnd < len(order):
                take((name, order[rnd]))
    for category in recall.CATEGORIES:
        taken = 0
        for src, path in select_test.topup_order(category, split):
            if count(category) >= target or taken >= 12:
                break
            key = (src["name"], path)
            if key not in drawn and open_slot(key[0]):
                take(key)
                taken += 1
    for rnd in range(2, max(len(o) for _, o in orders)):
        for name, order in orders:
            if count() >= pairs_stop:
                return drawn
            if rnd < len(order) and (name, order[rnd]) not in drawn and open_slot(name):
                take((name, order[rnd]))
    return drawn


def test_tuned_t14w_files_are_exactly_what_its_rule_draws():
    """tuned_t14w (a third tuning sample, its SELECTION.md): test15's rule with at most 6 files per code base and a
    150-pair stop. Only four of the twelve brief packages have eligible files; hidet reaches its cap of 6 in the device
    top-up and every other order runs out, so the split is 17 files, under 150 pairs."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t14w")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t14w corpus not fetched (python bench/recall.py --split tuned_t14w fetch)")
    drawn = _capped_draw(select_test, labels, "tuned_t14w", cap=6, target=20, pairs_stop=150)
    assert len(drawn) == len(set(drawn)) and set(drawn) == set(labels)
    per_base = {name: sum(1 for n, _ in drawn if n == name) for name, _ in drawn}
    assert per_base == {"hidet": 6, "autogluon.multimodal": 5, "voicefixer": 5, "dalle2-pytorch": 1}
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()) < 150


def test_tuned_t14y_files_are_exactly_what_its_rule_draws():
    """tuned_t14y (a fourth tuning sample, its SELECTION.md): main rounds only, one file per code base per round in
    sources.json order, at most 6 files per code base, no top-up and no pair stop. No code base has more than 4
    eligible files, so the rule draws all 26."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t14y")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t14y corpus not fetched (python bench/recall.py --split tuned_t14y fetch)")
    orders = [(src["name"], [p for s, p in select_test.draw(None, "tuned_t14y") if s["name"] == src["name"]])
              for src in recall.load_sources("tuned_t14y")]
    drawn = [(name, order[rnd]) for rnd in range(6) for name, order in orders if rnd < len(order)]
    assert len(drawn) == len(set(drawn)) == 26 and set(drawn) == set(labels)


def test_tuned_s15c_files_are_exactly_what_its_rule_draws():
    """tuned_s15c (a fourth tuning sample, its SELECTION.md): main rounds only, at most 6 files per code base, a
    150-pair stop. The stop is never reached (82 pairs), so the split is every code base's first min(6, eligible)
    files in its seeded order: 43 files of 12 code bases."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_s15c")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_s15c corpus not fetched (python bench/recall.py --split tuned_s15c fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_s15c"]
    drawn = [(src["name"], path) for src, path in select_test.draw(cap, "tuned_s15c")]
    assert len(drawn) == len(set(drawn)) == 43 and set(drawn) == set(labels)
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()) < 150



def test_test19_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test19", 13)         # test18's rule on pool A17, 8 files per code base, audited files only
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    # test19's pre-registered eligibility change: a file audit's default discovery skips is not eligible (it removed
    # none of these archives' files); earlier splits keep test10's eligibility.
    # later splits copy test19's rule
    assert select_test.AUDITED_ONLY_SPLITS == {"test19", "test20", "test21", "test22", "test23", "test24", "test25",
                                               "test26", "test27", "test28", "test33", "test34", "test36", "test37",
                                               "test39", "test40", "test42", "test43", "test45", "test47", "test49",
                                               "test51", "test53", "test56", "test59", "test60", "test63", "test64",
                                               "test66", "test68", "test70", "test73", "test75", "test71",
                                               "test77",
                                               "test76", "test79", "test82", "test81", "test84", "test85", "test87",
                                               "test88", "test90", "test91", "test93", "test92", "test95", "test96", "test98",
                                               "test99", "test102", "test101", "test106", "test105", "test109",
                                               "test112", "test113", "test116", "test119", "test120", "test124",
                                               "test125", "test127", "test130", "test131", "test133", "test135",
                                               "tuned_t17c",
                                               "tuned_t18c",
                                               "tuned_t19e",
                                               "tuned_t22a",
                                               "tuned_t22b", "tuned_t25a"}
    # Main rounds 1-2 in sources.json order: four code bases have one eligible file each, so round 2 has the other nine.
    assert len(main) == 22 and labelled[:22] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed's and apex's pools are empty; precision drew its pool's eight files not drawn
    # before (the pool ran dry) and stays under 20; attention's and kernel's one-file pools were drawn before (both stay
    # under 20); third_party reached 20 during the precision top-up.
    assert pairs(main, "device") >= 20
    assert select_test.topup_order("distributed", "test19") == [] and select_test.topup_order("apex", "test19") == []
    assert labelled[22:30] == open_(pool("precision"), labelled[:22]) and pairs(labelled[:30], "precision") < 20
    assert open_(pool("attention"), labelled[:30]) == [] and pairs(labelled[:30], "attention") < 20
    assert open_(pool("kernel"), labelled[:30]) == [] and pairs(labelled[:30], "kernel") < 20
    assert pairs(labelled[:22], "third_party") < 20 <= pairs(labelled[:30], "third_party")
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:30])
    assert labelled[30:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 54


def test_test20_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test20", 23)         # test19's rule on pool A18, 8 files per code base, audited files only
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert "test20" in select_test.AUDITED_ONLY_SPLITS
    # Main rounds 1-2 in sources.json order: seven code bases have one eligible file each, so round 2 has the other 16.
    assert len(main) == 39 and labelled[:39] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew its one-file pool (effdet) and stays under 20; precision drew 12 files (the
    # cap) and stays under 20; apex drew its one-file pool (ART's FBF trainer) and stays under 20; attention drew the
    # three pool files not drawn before (the pool ran dry) and stays under 20; kernel drew 4 files (deepmd-kit reached
    # the limit with the third), the fourth bringing it to 20 or more; third_party drew the three pool files still open
    # (boxmot reached the limit, lama-cleaner was at it) and stays under 20.
    assert pairs(main, "device") >= 20
    assert pool("distributed") == labelled[39:40] and pairs(labelled[:40], "distributed") < 20
    assert labelled[40:52] == open_(pool("precision"), labelled[:40])[:12] and pairs(labelled[:52], "precision") < 20
    assert pool("apex") == labelled[52:53] and pairs(labelled[:53], "apex") < 20
    assert labelled[53:56] == open_(pool("attention"), labelled[:53]) and pairs(labelled[:56], "attention") < 20
    assert labelled[56:60] == open_(pool("kernel"), labelled[:56])[:4]
    assert pairs(labelled[:59], "kernel") < 20 <= pairs(labelled[:60], "kernel")
    assert labelled[60:63] == open_(pool("third_party"), labelled[:60]) and pairs(labelled[:63], "third_party") < 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:63])
    assert labelled[63:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 106


def test_test21_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test21", 19)         # test20's rule on pool A19 (pinned GitHub commits), 8 files per code base
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert "test21" in select_test.AUDITED_ONLY_SPLITS
    # Every source is a pinned commit of its repository, exported from a mirror (no archive, no sha256).
    assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] and "archive" not in s
               for s in recall.load_sources("test21"))
    # Main rounds 1-2 in sources.json order: eight code bases have one eligible file each, so round 2 has the other 11.
    assert len(main) == 30 and labelled[:30] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew its two-file pool and stays under 20; precision drew the four pool files not
    # drawn before (the pool ran dry) and stays under 20; apex drew the four pool files not drawn before (the pool ran
    # dry) and stays under 20; attention's and kernel's pools are empty; third_party had 20 or more after the main rounds.
    assert pairs(main, "device") >= 20 and pairs(main, "third_party") >= 20
    assert pool("distributed") == labelled[30:32] and pairs(labelled[:32], "distributed") < 20
    assert labelled[32:36] == open_(pool("precision"), labelled[:32]) and pairs(labelled[:36], "precision") < 20
    assert labelled[36:40] == open_(pool("apex"), labelled[:36]) and pairs(labelled[:40], "apex") < 20
    assert pool("attention") == [] and pool("kernel") == []
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:40])
    assert labelled[40:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 64


@pytest.mark.parametrize("split, code_bases", [("test24", 16), ("test25", 22), ("test26", 20), ("test27", 20),
                                               ("test28", 22), ("test33", 22), ("test34", 22),
                                               ("test36", 22), ("test37", 22), ("test39", 22), ("test40", 20),
                                               ("test42", 22), ("test43", 22), ("test45", 22), ("test47", 21),
                                               ("test49", 21), ("test51", 20), ("test53", 22), ("test56", 22),
                                               ("test59", 22), ("test60", 19), ("test63", 22), ("test64", 22),
                                               ("test66", 24), ("test68", 23), ("test70", 17),
                                               ("test73", 22), ("test75", 24), ("test71", 24),
                                               ("test77", 19), ("test76", 20), ("test79", 24),
                                               ("test82", 24), ("test81", 24), ("test84", 24), ("test85", 18),
                                               ("test87", 21), ("test88", 24), ("test90", 23),
                                               ("test91", 18), ("test93", 20), ("test92", 24), ("test95", 24), ("test96", 24),
                                               ("test98", 23), ("test99", 23), ("test102", 24), ("test101", 24),
                                               ("test106", 24), ("test105", 24), ("test109", 18),
                                               ("test112", 20), ("test113", 22), ("test116", 24),
                                               ("test119", 23), ("test120", 20), ("test124", 24),
                                               ("test125", 24), ("test127", 23), ("test130", 24),
                                               ("test131", 24), ("test133", 24), ("test135", 24)])
def test_latest_splits_label_exactly_what_their_rule_draws(split, code_bases):
    """test24's rule (main rounds 1-2, top-up, further rounds to 350 pairs, 8 files per code base); test25 and test26
    change only the top-up order, target and cap (their SELECTION.md, select_test.TOPUP_RULES). The labelled files are
    the draw, and without the last file's labels the rule asks for that file."""
    draw = _LimitedDraw(split, code_bases)
    assert split in draw.select_test.AUDITED_ONLY_SPLITS
    assert draw.labelled[:len(draw.main)] == draw.main


def test_test60_files_are_exactly_what_its_rule_draws():
    """test60 (bench/corpus_test60/SELECTION.md): test59's rule with the top-up order kernel, distributed, attention,
    third_party first (targets 30, 30, 30, 25; apex 15; cap 16), 8 files per code base; 22 code bases, three with no
    eligible file. The draw ran to its end: every top-up pool ran dry and the further rounds ran out before 350 pairs."""
    draw = _LimitedDraw("test60", 19)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert select_test.TOPUP_RULES["test60"]["order"][:4] == ("kernel", "distributed", "attention", "third_party")
    assert select_test.SPLIT_TOPUP_WORDS["test60"] is select_test.SPLIT_TOPUP_WORDS["test59"]
    # Main rounds 1-2 in sources.json order: 19 code bases have an eligible file, four of them only one.
    assert len(main) == 34 and labelled[:34] == main
    # Top-up, each pool in its order, skipping drawn files: kernel 6, distributed 2, attention 3, third_party 0,
    # precision 3 new files (each pool ran dry under its target); apex's pool is empty; device is over its target.
    assert labelled[34:40] == open_(pool("kernel"), labelled[:34]) and pairs(labelled[:40], "kernel") < 30
    assert labelled[40:42] == open_(pool("distributed"), labelled[:40]) and pairs(labelled[:42], "distributed") < 30
    assert labelled[42:45] == open_(pool("attention"), labelled[:42]) and pairs(labelled[:45], "attention") < 30
    assert open_(pool("third_party"), labelled[:45]) == [] and pairs(labelled[:45], "third_party") < 25
    assert labelled[45:48] == open_(pool("precision"), labelled[:45]) and pairs(labelled[:48], "precision") < 25
    assert pool("apex") == [] and pairs(main, "device") >= 25
    # Further main rounds from round 3: every order ran out (or reached 8 files) before 350 pairs, so the split is
    # every file the limit allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:48])
    assert labelled[48:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 65


def test_test66_files_are_exactly_what_its_rule_draws():
    """test66 (bench/corpus_test66/SELECTION.md): test64's rule with the top-up order third_party, precision, kernel,
    attention first (targets 35; 20 for the others; cap 16), 8 files per code base; 24 code bases. The draw ran to its
    end: third_party's, attention's and apex's pools ran dry (their open files are in code bases at 8 files), precision
    was over its target after third_party's top-up, kernel and distributed reached theirs, and the pairs were over 350
    before any further round."""
    draw = _LimitedDraw("test66", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert select_test.TOPUP_RULES["test66"]["order"][:4] == ("third_party", "precision", "kernel", "attention")
    assert select_test.SPLIT_TOPUP_WORDS["test66"] is select_test.SPLIT_TOPUP_WORDS["test64"]
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them with one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files.
    assert labelled[45:56] == open_(pool("third_party"), labelled[:45]) and pairs(labelled[:56], "third_party") < 35
    assert pairs(labelled[:56], "precision") >= 35
    assert labelled[56:58] == open_(pool("kernel"), labelled[:56])[:2]
    assert pairs(labelled[:57], "kernel") < 35 <= pairs(labelled[:58], "kernel")
    assert labelled[58:66] == open_(pool("attention"), labelled[:58]) and pairs(labelled[:66], "attention") < 35
    assert labelled[66:72] == open_(pool("apex"), labelled[:66]) and pairs(labelled[:72], "apex") < 20
    assert labelled[72:78] == open_(pool("distributed"), labelled[:72])[:6]
    assert pairs(labelled[:77], "distributed") < 20 <= pairs(labelled[:78], "distributed")
    assert pairs(main, "device") >= 20 and pairs(labelled) >= 350
    assert len(labelled) == 78


def test_test70_files_are_exactly_what_its_rule_draws():
    """test70 (bench/corpus_test70/SELECTION.md): test64's rule with the top-up order attention, kernel, third_party,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 21 code bases, four
    with no eligible file. The draw ran to its end: attention's, kernel's, third_party's and distributed's pools ran dry
    under their targets, precision reached 35, and the further rounds ran out before 350 pairs."""
    draw = _LimitedDraw("test70", 17)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test70"]
    assert rule["order"][:4] == ("attention", "kernel", "third_party", "precision") and rule["target"] == 20
    assert rule["targets"] == {"attention": 35, "kernel": 35, "third_party": 35, "precision": 35} and rule["cap"] == 16
    assert select_test.SPLIT_TOPUP_WORDS["test70"] is select_test.SPLIT_TOPUP_WORDS["test64"]
    # Main rounds 1-2 in sources.json order: 17 code bases have an eligible file, five of them only one.
    assert len(main) == 29 and labelled[:29] == main
    # Top-up, each pool in its order, skipping drawn files: attention 5, kernel 3, third_party 5 new files (each pool
    # ran dry under 35); precision 9 files, the ninth bringing it to 35; apex's pool is empty; distributed drew its
    # one-file pool and stays under 20; device is over its target.
    assert labelled[29:34] == open_(pool("attention"), labelled[:29]) and pairs(labelled[:34], "attention") < 35
    assert labelled[34:37] == open_(pool("kernel"), labelled[:34]) and pairs(labelled[:37], "kernel") < 35
    assert labelled[37:42] == open_(pool("third_party"), labelled[:37]) and pairs(labelled[:42], "third_party") < 35
    assert labelled[42:51] == open_(pool("precision"), labelled[:42])[:9]
    assert pairs(labelled[:50], "precision") < 35 <= pairs(labelled[:51], "precision")
    assert pool("apex") == [] and pairs(main, "device") >= 20
    assert labelled[51:52] == open_(pool("distributed"), labelled[:51]) and pairs(labelled[:52], "distributed") < 20
    # Further main rounds from round 3: every order ran out (or reached 8 files) before 350 pairs, so the split is
    # every file the limit allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:52])
    assert labelled[52:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 76


def test_test73_files_are_exactly_what_its_rule_draws():
    """test73 (bench/corpus_test73/SELECTION.md): test64's rule with the top-up order kernel, third_party, precision,
    attention first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, two
    (TDANet, TEMPO) with no eligible file. The draw ran to its end: kernel's, third_party's, precision's, attention's
    and distributed's pools ran dry under their targets, apex's is empty, and the further rounds reached 350 pairs
    with their last file (every code base then at min(8, eligible) files)."""
    draw = _LimitedDraw("test73", 22)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test73"]
    assert rule["order"][:4] == ("kernel", "third_party", "precision", "attention") and rule["target"] == 20
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "precision": 35, "attention": 35} and rule["cap"] == 16
    assert select_test.SPLIT_TOPUP_WORDS["test73"] is select_test.SPLIT_TOPUP_WORDS["test64"]
    # Main rounds 1-2 in sources.json order: 22 code bases have an eligible file, four of them only one.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files: kernel 10, third_party 3, precision 2 new files (each pool
    # ran dry under 35); attention's three pool files were drawn before; apex's pool is empty; distributed drew its
    # one open file and stays under 20; device is over its target after the main rounds.
    assert labelled[40:50] == open_(pool("kernel"), labelled[:40]) and pairs(labelled[:50], "kernel") < 35
    assert labelled[50:53] == open_(pool("third_party"), labelled[:50]) and pairs(labelled[:53], "third_party") < 35
    assert labelled[53:55] == open_(pool("precision"), labelled[:53]) and pairs(labelled[:55], "precision") < 35
    assert open_(pool("attention"), labelled[:55]) == [] and pairs(labelled[:55], "attention") < 35
    assert pool("apex") == [] and pairs(main, "device") >= 20
    assert labelled[55:56] == open_(pool("distributed"), labelled[:55]) and pairs(labelled[:56], "distributed") < 20
    # Further main rounds from round 3: the last file of the rounds brought the pairs over 350; every code base is then
    # at min(8, eligible) files (earth2mip at 8 of 12).
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:56])
    assert labelled[56:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert len(labelled) == 76


def test_test75_files_are_exactly_what_its_rule_draws():
    """test75 (bench/corpus_test75/SELECTION.md): test64's rule with the top-up order attention, third_party, kernel,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end: attention, third_party and kernel reached 35 in their top-ups, precision was over 35 after the
    main rounds, apex's and distributed's pools ran dry under 20, and the third further-round file reached 350 pairs."""
    draw = _LimitedDraw("test75", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test75"]
    assert rule["order"][:4] == ("attention", "third_party", "kernel", "precision") and rule["target"] == 20
    assert rule["targets"] == {"attention": 35, "third_party": 35, "kernel": 35, "precision": 35} and rule["cap"] == 16
    assert select_test.SPLIT_TOPUP_WORDS["test75"] is select_test.SPLIT_TOPUP_WORDS["test64"]
    # Main rounds 1-2 in sources.json order: 24 code bases, two of them (DeepSeek-MoE, PoSE) with one eligible file.
    assert len(main) == 46 and labelled[:46] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: attention 12 files, the twelfth
    # bringing it to 35; third_party 2 files, kernel 7 files (each the last reaching 35); precision was over 35 after
    # the main rounds; apex drew the one open file of its pool, distributed five (both pools ran dry under 20); device is
    # over its target.
    assert labelled[46:58] == open_(pool("attention"), labelled[:46])[:12]
    assert pairs(labelled[:57], "attention") < 35 <= pairs(labelled[:58], "attention")
    assert labelled[58:60] == open_(pool("third_party"), labelled[:58])[:2]
    assert pairs(labelled[:59], "third_party") < 35 <= pairs(labelled[:60], "third_party")
    assert labelled[60:67] == open_(pool("kernel"), labelled[:60])[:7]
    assert pairs(labelled[:66], "kernel") < 35 <= pairs(labelled[:67], "kernel")
    assert pairs(main, "precision") >= 35 and pairs(main, "device") >= 20
    assert labelled[67:68] == open_(pool("apex"), labelled[:67]) and pairs(labelled[:68], "apex") < 20
    assert labelled[68:73] == open_(pool("distributed"), labelled[:68]) and pairs(labelled[:73], "distributed") < 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files, until 350 pairs: the third file reached it.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:73])
    assert labelled[73:] == later[:3]
    assert pairs(labelled[:75]) < 350 <= pairs(labelled)
    assert len(labelled) == 76


def test_test76_files_are_exactly_what_its_rule_draws():
    """test76 (bench/corpus_test76/SELECTION.md): test75's rule with the top-up order kernel, third_party, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, four
    (SwinIR, GFPGAN, VRT, byol-pytorch) with no eligible file. The draw ran to its end: kernel reached 35 in its
    top-up, third_party's and precision's pools ran dry under 35 (their open files are in code bases at 8 files),
    attention's pool is empty, apex reached 20 in the main rounds, distributed's pool ran dry under 20, and the pairs
    were over 350 before any further round."""
    draw = _LimitedDraw("test76", 20)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test76"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test76"] is select_test.SPLIT_TOPUP_WORDS["test75"]
    # Main rounds 1-2 in sources.json order: 20 code bases have an eligible file, stylegan2-pytorch only one.
    assert len(main) == 39 and labelled[:39] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel 7 files, the seventh
    # bringing it to 35; third_party 3 files (its pool ran dry under 35); attention's pool is empty; precision 8 files
    # (its pool ran dry under 35); apex was at 20 after the main rounds; distributed 4 files (its pool ran dry under
    # 20); device is over its target.
    assert labelled[39:46] == open_(pool("kernel"), labelled[:39])[:7]
    assert pairs(labelled[:45], "kernel") < 35 <= pairs(labelled[:46], "kernel")
    assert labelled[46:49] == open_(pool("third_party"), labelled[:46]) and pairs(labelled[:49], "third_party") < 35
    assert pool("attention") == [] and pairs(labelled, "attention") < 35
    assert labelled[49:57] == open_(pool("precision"), labelled[:49]) and pairs(labelled[:57], "precision") < 35
    assert pairs(main, "apex") >= 20 and pairs(main, "device") >= 20
    assert labelled[57:61] == open_(pool("distributed"), labelled[:57]) and pairs(labelled[:61], "distributed") < 20
    # No further round: the pairs were over 350 after the top-up.
    assert pairs(labelled) >= 350
    assert len(labelled) == 61


def test_test71_files_are_exactly_what_its_rule_draws():
    """test71 (bench/corpus_test71/SELECTION.md): test64's rule with the top-up order third_party, kernel, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end: third_party and precision reached 35, kernel's, attention's, apex's and distributed's pools
    ran dry under their targets (their open files are in code bases at 8 files), and the pairs were over 350 before any
    further round."""
    draw = _LimitedDraw("test71", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test71"]
    assert rule["order"][:4] == ("third_party", "kernel", "attention", "precision") and rule["target"] == 20
    assert rule["targets"] == {"third_party": 35, "kernel": 35, "attention": 35, "precision": 35} and rule["cap"] == 16
    assert select_test.SPLIT_TOPUP_WORDS["test71"] is select_test.SPLIT_TOPUP_WORDS["test64"]
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them (unimatch, ARFlow, sepconv-slomo) with one
    # eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: third_party 8 files, the eighth
    # bringing it to 35; kernel 12 and attention 4 files (both pools ran dry under 35); precision 3 files, the third
    # bringing it to 35; apex's two pool files were drawn before (apex under 20); distributed 6 files (its pool ran dry
    # under 20); device is over its target, and the pairs are over 350, so no further round.
    assert labelled[45:53] == open_(pool("third_party"), labelled[:45])[:8]
    assert pairs(labelled[:52], "third_party") < 35 <= pairs(labelled[:53], "third_party")
    assert labelled[53:65] == open_(pool("kernel"), labelled[:53]) and pairs(labelled[:65], "kernel") < 35
    assert labelled[65:69] == open_(pool("attention"), labelled[:65]) and pairs(labelled[:69], "attention") < 35
    assert labelled[69:72] == open_(pool("precision"), labelled[:69])[:3]
    assert pairs(labelled[:71], "precision") < 35 <= pairs(labelled[:72], "precision")
    assert open_(pool("apex"), labelled[:72]) == [] and pairs(labelled[:72], "apex") < 20
    assert labelled[72:78] == open_(pool("distributed"), labelled[:72]) and pairs(labelled[:78], "distributed") < 20
    assert pairs(main, "device") >= 20 and pairs(labelled) >= 350
    assert len(labelled) == 78


def test_test77_files_are_exactly_what_its_rule_draws():
    """test77 (bench/corpus_test77/SELECTION.md): test75's rule with the top-up order third_party, attention,
    precision, kernel first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 19 code
    bases. The draw ran to its end before the deadline: every top-up pool it used ran dry under its target (their other
    files were drawn in the main rounds or are EasyEdit's, at 8 files), device was over 20 after the main rounds, and
    the further rounds ran out before 350 pairs, so the split is every file the limit allows."""
    draw = _LimitedDraw("test77", 19)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test77"]
    assert rule["order"] == ("third_party", "attention", "precision", "kernel", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"third_party": 35, "attention": 35, "precision": 35, "kernel": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test77"] is select_test.SPLIT_TOPUP_WORDS["test75"]
    assert select_test.SEED_PREFIXES["test77"] == "npu-audit-test-split-77:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test77"] == 8 and "test77" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 19 code bases, five of them (ROME, MEND, Pocket2Mol, 3D Diffusion Policy,
    # TCP) with one eligible file.
    assert len(main) == 33 and labelled[:33] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: third_party 5 files, attention 2,
    # precision 8 (EasyEdit reached 8 files), kernel 5: each pool ran dry under 35; apex's one pool file was drawn in the
    # main rounds (apex under 20); distributed 2 files (its pool ran dry under 20); device was over 20 after the main
    # rounds.
    assert labelled[33:38] == open_(pool("third_party"), labelled[:33]) and pairs(labelled[:38], "third_party") < 35
    assert labelled[38:40] == open_(pool("attention"), labelled[:38]) and pairs(labelled[:40], "attention") < 35
    assert labelled[40:48] == open_(pool("precision"), labelled[:40]) and pairs(labelled[:48], "precision") < 35
    assert sum(1 for name, _ in labelled[:48] if name == "EasyEdit") == 8
    assert labelled[48:53] == open_(pool("kernel"), labelled[:48]) and pairs(labelled[:53], "kernel") < 35
    assert open_(pool("apex"), labelled[:53]) == [] and pairs(labelled[:53], "apex") < 20
    assert labelled[53:55] == open_(pool("distributed"), labelled[:53]) and pairs(labelled[:55], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files: every order ran out (or reached 8 files) before 350 pairs, so the split is min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:55])
    assert labelled[55:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 58


def test_test79_files_are_exactly_what_its_rule_draws():
    """test79 (bench/corpus_test79/SELECTION.md): test75's rule with the top-up order third_party, kernel, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: third_party's pool ran dry under 35, kernel and attention reached 35 in
    their top-ups, precision was over 35 by its turn, apex's and distributed's pools ran dry under 20, device was over
    20 after the main rounds, and the pairs were over 350 before any further round."""
    draw = _LimitedDraw("test79", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test79"]
    assert rule["order"] == ("third_party", "kernel", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"third_party": 35, "kernel": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test79"] is select_test.SPLIT_TOPUP_WORDS["test75"]
    assert select_test.SEED_PREFIXES["test79"] == "npu-audit-test-split-79:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test79"] == 8 and "test79" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them (VITS fast fine-tuning, FuxiCTR, ECON) with
    # one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: third_party 9 files (its pool ran
    # dry under 35); kernel 2 files and attention 4 files, each last one reaching 35; precision was over 35 by its
    # turn; apex drew the one open file of its pool, distributed three (both pools ran dry under 20); device was over 20
    # after the main rounds.
    assert labelled[45:54] == open_(pool("third_party"), labelled[:45]) and pairs(labelled[:54], "third_party") < 35
    assert labelled[54:56] == open_(pool("kernel"), labelled[:54])[:2]
    assert pairs(labelled[:55], "kernel") < 35 <= pairs(labelled[:56], "kernel")
    assert labelled[56:60] == open_(pool("attention"), labelled[:56])[:4]
    assert pairs(labelled[:59], "attention") < 35 <= pairs(labelled[:60], "attention")
    assert pairs(labelled[:60], "precision") >= 35
    assert labelled[60:61] == open_(pool("apex"), labelled[:60]) and pairs(labelled[:61], "apex") < 20
    assert labelled[61:64] == open_(pool("distributed"), labelled[:61]) and pairs(labelled[:64], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 64


def test_test82_files_are_exactly_what_its_rule_draws():
    """test82 (bench/corpus_test82/SELECTION.md): test79's rule with the top-up order kernel, third_party, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel was over 35 after the main rounds, third_party's pool ran dry under
    35, attention's one-file pool was drawn in the main rounds, precision drew 16 files (the cap) and stayed under 35,
    apex's pool was drawn before its turn (under 20), distributed's pool ran dry under 20, device was over 20 after the
    main rounds, and the pairs were over 350 before any further round."""
    draw = _LimitedDraw("test82", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test82"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test82"] is select_test.SPLIT_TOPUP_WORDS["test79"]
    assert select_test.SEED_PREFIXES["test82"] == "npu-audit-test-split-82:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test82"] == 8 and "test82" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them (stormer, AdelaiDet, dd3d) with one eligible
    # file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel was over 35 after the main
    # rounds; third_party drew its four open files (its pool ran dry under 35); attention's pool is stormer's one
    # main-round file; precision drew 16 files (the cap) and stayed under 35; apex's pool was all drawn before its turn;
    # distributed drew its eleven open files (its pool ran dry under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") >= 35
    assert labelled[45:49] == open_(pool("third_party"), labelled[:45]) and pairs(labelled[:49], "third_party") < 35
    assert open_(pool("attention"), labelled[:49]) == []
    assert labelled[49:65] == open_(pool("precision"), labelled[:49])[:16] and pairs(labelled[:65], "precision") < 35
    assert open_(pool("apex"), labelled[:65]) == [] and pairs(labelled[:65], "apex") < 20
    assert labelled[65:76] == open_(pool("distributed"), labelled[:65]) and pairs(labelled[:76], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
def test_test81_files_are_exactly_what_its_rule_draws():
    """test81 (bench/corpus_test81/SELECTION.md): test79's rule with the top-up order kernel, third_party, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its first top-up file, third_party's and
    attention's pools ran dry under 35, precision was over 35 by its turn, apex's pool was empty, distributed's ran dry
    under 20, device was over 20 after the main rounds, and further rounds 3 and 4 ran until the pairs reached 350."""
    draw = _LimitedDraw("test81", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test81"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test81"] is select_test.SPLIT_TOPUP_WORDS["test79"]
    assert select_test.SEED_PREFIXES["test81"] == "npu-audit-test-split-81:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test81"] == 8 and "test81" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, seven of them (IR-QLoRA, ReLoRA, OpenMoE, Hotshot-XL,
    # AudioLDM 2, VALL-E, warp-ctc) with one eligible file.
    assert len(main) == 41 and labelled[:41] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel 1 file, reaching 35;
    # third_party 6 files and attention 12 files (both pools ran dry under 35); precision was over 35 by its turn; apex's
    # pool is empty; distributed drew the one open file of its pool (under 20); device was over 20 after the main rounds.
    assert labelled[41:42] == open_(pool("kernel"), labelled[:41])[:1]
    assert pairs(labelled[:41], "kernel") < 35 <= pairs(labelled[:42], "kernel")
    assert labelled[42:48] == open_(pool("third_party"), labelled[:42]) and pairs(labelled[:48], "third_party") < 35
    assert labelled[48:60] == open_(pool("attention"), labelled[:48]) and pairs(labelled[:60], "attention") < 35
    assert pairs(labelled[:60], "precision") >= 35
    assert pool("apex") == []
    assert labelled[60:61] == open_(pool("distributed"), labelled[:60]) and pairs(labelled[:61], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files, until the split had 350 pairs: the last file drawn (WaveGlow's train.py, in round 4) brought it there.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:61])
    assert labelled[61:] == later[:15]
    assert pairs(labelled[:75]) < 350 <= pairs(labelled)
    assert len(labelled) == 76


def test_test84_files_are_exactly_what_its_rule_draws():
    """test84 (bench/corpus_test84/SELECTION.md): test81's rule with the top-up order kernel, third_party, attention,
    precision first (targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel was over 35 after the main rounds, third_party's pool ran dry under
    35, attention reached 35 with its twelfth top-up file, precision was over 35 by its turn, apex's pool was all drawn
    before its turn, distributed's pool ran dry under 20, device was over 20 after the main rounds, and the pairs were
    over 350 after the top-up, so no further round was drawn."""
    draw = _LimitedDraw("test84", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test84"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test84"] is select_test.SPLIT_TOPUP_WORDS["test81"]
    assert select_test.SEED_PREFIXES["test84"] == "npu-audit-test-split-84:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test84"] == 8 and "test84" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, two of them (dgcnn.pytorch, SA-SSD) with one eligible file.
    assert len(main) == 46 and labelled[:46] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel was over 35 after the main
    # rounds; third_party drew its six open files (its pool ran dry under 35); attention drew 12 files, the last
    # bringing it to 35; precision was over 35 by its turn; apex's two-file pool was drawn before its turn; distributed
    # drew its four open files (its pool ran dry under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") >= 35
    assert labelled[46:52] == open_(pool("third_party"), labelled[:46]) and pairs(labelled[:52], "third_party") < 35
    assert labelled[52:64] == open_(pool("attention"), labelled[:52])[:12]
    assert pairs(labelled[:63], "attention") < 35 <= pairs(labelled[:64], "attention")
    assert pairs(labelled[:64], "precision") >= 35
    assert open_(pool("apex"), labelled[:64]) == [] and pairs(labelled[:64], "apex") < 20
    assert labelled[64:68] == open_(pool("distributed"), labelled[:64]) and pairs(labelled[:68], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 68
def test_test85_files_are_exactly_what_its_rule_draws():
    """test85 (bench/corpus_test85/SELECTION.md): test81's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 18 code bases. The
    draw ran to its end before the deadline: kernel's, third_party's, attention's and precision's pools ran dry under
    35 (precision's when UniFormer reached 8 files), apex's pool held only a file drawn before, distributed's ran dry
    under 20, device was over 20 after the main rounds, and further rounds 3 to 7 drew every file the 8-file limit
    allows, still under 350 pairs."""
    draw = _LimitedDraw("test85", 18)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test85"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test85"] is select_test.SPLIT_TOPUP_WORDS["test81"]
    assert select_test.SEED_PREFIXES["test85"] == "npu-audit-test-split-85:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test85"] == 8 and "test85" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 18 code bases, two of them (MiDaS, CoCLR) with one eligible file.
    assert len(main) == 34 and labelled[:34] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel 5 files, third_party 3
    # files, attention 1 file (each pool ran dry under 35); precision 9 files (dry under 35: the rest of its pool is
    # UniFormer's, which reached 8 files); apex's one pool file was drawn in the main rounds; distributed 2 files (dry
    # under 20); device was over 20 after the main rounds.
    assert labelled[34:39] == open_(pool("kernel"), labelled[:34]) and pairs(labelled[:39], "kernel") < 35
    assert labelled[39:42] == open_(pool("third_party"), labelled[:39]) and pairs(labelled[:42], "third_party") < 35
    assert labelled[42:43] == open_(pool("attention"), labelled[:42]) and pairs(labelled[:43], "attention") < 35
    assert labelled[43:52] == open_(pool("precision"), labelled[:43]) and pairs(labelled[:52], "precision") < 35
    assert sum(1 for name, _ in labelled[:52] if name == "UniFormer") == 8
    assert open_(pool("apex"), labelled[:52]) == [] and pairs(labelled[:52], "apex") < 20
    assert labelled[52:54] == open_(pool("distributed"), labelled[:52]) and pairs(labelled[:54], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit allows.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:54])
    assert labelled[54:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 71



def test_test87_files_are_exactly_what_its_rule_draws():
    """test87 (bench/corpus_test87/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 21 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its fourth top-up file, third_party's and
    attention's pools ran dry under 35, precision was over 35 by its turn, apex's one-file pool was drawn in the main
    rounds, distributed's pool ran dry under 20, device was over 20 after the main rounds, and further rounds 3 on drew
    files until the split had 350 pairs."""
    draw = _LimitedDraw("test87", 21)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test87"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test87"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test87"] == "npu-audit-test-split-87:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test87"] == 8 and "test87" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 21 code bases, three of them (mini-omni, ties-merging, hnet) with one
    # eligible file.
    assert len(main) == 39 and labelled[:39] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel 4 files, the fourth
    # bringing it to 35; third_party 1 file and attention 3 files (both pools ran dry under 35); precision was over 35
    # by its turn; apex's one pool file was drawn in the main rounds; distributed 5 files (dry under 20); device was
    # over 20 after the main rounds.
    assert labelled[39:43] == open_(pool("kernel"), labelled[:39])[:4]
    assert pairs(labelled[:42], "kernel") < 35 <= pairs(labelled[:43], "kernel")
    assert labelled[43:44] == open_(pool("third_party"), labelled[:43]) and pairs(labelled[:44], "third_party") < 35
    assert labelled[44:47] == open_(pool("attention"), labelled[:44]) and pairs(labelled[:47], "attention") < 35
    assert pairs(labelled[:47], "precision") >= 35
    assert open_(pool("apex"), labelled[:47]) == [] and pairs(labelled[:47], "apex") < 20
    assert labelled[47:52] == open_(pool("distributed"), labelled[:47]) and pairs(labelled[:52], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files, until the split had 350 pairs: the last file drawn (mammoth's utils/stats.py) brought it there.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:52])
    assert labelled[52:] == later[:22]
    assert pairs(labelled[:73]) < 350 <= pairs(labelled)
    assert len(labelled) == 74


def test_test88_files_are_exactly_what_its_rule_draws():
    """test88 (bench/corpus_test88/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its thirteenth top-up file, third_party's and
    attention's pools ran dry under 35, precision reached 35 with its tenth top-up file, apex's pool was empty,
    distributed's pool ran dry under 20, device was over 20 after the main rounds, and the pairs were over 350 after
    the top-up, so no further round was drawn."""
    draw = _LimitedDraw("test88", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test88"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test88"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test88"] == "npu-audit-test-split-88:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test88"] == 8 and "test88" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, four of them (OpenLRM, mast3r, CROWN-IBP, MOON) with one
    # eligible file.
    assert len(main) == 44 and labelled[:44] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew 13 files, the last
    # bringing it to 35; third_party drew its eight open files and attention its five (both pools ran dry under 35);
    # precision drew 10 files, the last bringing it to 35; apex's pool is empty; distributed drew its two open files
    # (its pool ran dry under 20); device was over 20 after the main rounds.
    assert labelled[44:57] == open_(pool("kernel"), labelled[:44])[:13]
    assert pairs(labelled[:56], "kernel") < 35 <= pairs(labelled[:57], "kernel")
    assert labelled[57:65] == open_(pool("third_party"), labelled[:57]) and pairs(labelled[:65], "third_party") < 35
    assert labelled[65:70] == open_(pool("attention"), labelled[:65]) and pairs(labelled[:70], "attention") < 35
    assert labelled[70:80] == open_(pool("precision"), labelled[:70])[:10]
    assert pairs(labelled[:79], "precision") < 35 <= pairs(labelled[:80], "precision")
    assert pool("apex") == []
    assert labelled[80:82] == open_(pool("distributed"), labelled[:80]) and pairs(labelled[:82], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 82


def test_test90_files_are_exactly_what_its_rule_draws():
    """test90 (bench/corpus_test90/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, one
    (3D-Generative-SBDD) with no eligible file. The draw ran to its end before the deadline: kernel's, third_party's
    and attention's pools ran dry under 35, precision was over 35 after the main rounds, apex's and distributed's pools
    ran dry under 20, device was over 20 after the main rounds, and the first further round brought the split to 350
    pairs with its eleventh file."""
    draw = _LimitedDraw("test90", 23)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test90"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test90"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test90"] == "npu-audit-test-split-87:"   # as the brief named it
    assert select_test.MAX_FILES_PER_CODE_BASE["test90"] == 8 and "test90" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 23 code bases with an eligible file, six of them with only one.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its two open files,
    # third_party its two, attention its two (each pool ran dry under 35); precision was over 35 after the main rounds;
    # apex drew its two-file pool and distributed its three open files (both ran dry under 20); device was over 20.
    assert labelled[40:42] == open_(pool("kernel"), labelled[:40]) and pairs(labelled[:42], "kernel") < 35
    assert labelled[42:44] == open_(pool("third_party"), labelled[:42]) and pairs(labelled[:44], "third_party") < 35
    assert labelled[44:46] == open_(pool("attention"), labelled[:44]) and pairs(labelled[:46], "attention") < 35
    assert pairs(main, "precision") >= 35
    assert labelled[46:48] == open_(pool("apex"), labelled[:46]) and pairs(labelled[:48], "apex") < 20
    assert labelled[48:51] == open_(pool("distributed"), labelled[:48]) and pairs(labelled[:51], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files, until the split had 350 pairs: the eleventh (LocalMamba's classification/tools/convert.py) brought it there.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:51])
    assert labelled[51:] == later[:10]
    assert pairs(labelled[:60]) < 350 <= pairs(labelled)
    assert len(labelled) == 61


def test_test91_files_are_exactly_what_its_rule_draws():
    """test91 (bench/corpus_test91/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 18 code bases, the
    seeds "npu-audit-test-split-87:..." as the brief gave them. The draw ran to its end before the deadline: kernel
    reached 35 with its first top-up file, third_party's, attention's and apex's pools are empty, precision's and
    distributed's pools ran dry under their targets, device was over 20 after the main rounds, and the further rounds
    ran out (every code base at 8 files or out of eligible files) before 350 pairs."""
    draw = _LimitedDraw("test91", 18)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test91"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test91"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test91"] == "npu-audit-test-split-87:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test91"] == 8 and "test91" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 18 code bases, five of them (BIT_CD, FarSeg, ELiC-ReImplemetation,
    # PSENet, CRAFT-pytorch) with one eligible file.
    assert len(main) == 31 and labelled[:31] == main
    # Top-up, each pool in its order, skipping drawn files: kernel drew one file (torch_radon/__init__.py), which
    # brought it to 35; third_party's and attention's pools are empty; precision drew its two open files (its pool ran
    # dry under 35); apex's pool is empty; distributed drew its one file (under 20); device was over 20 after the main
    # rounds.
    assert pairs(main, "kernel") < 35 and labelled[31:32] == open_(pool("kernel"), main)[:1]
    assert pairs(labelled[:32], "kernel") >= 35
    assert pool("third_party") == [] and pool("attention") == [] and pool("apex") == []
    assert labelled[32:34] == open_(pool("precision"), labelled[:32]) and pairs(labelled[:34], "precision") < 35
    assert labelled[34:35] == open_(pool("distributed"), labelled[:34]) and pairs(labelled[:35], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3: every order ran out (or reached 8 files) before 350 pairs, so the split is
    # every file the limit allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:35])
    assert labelled[35:] == later
    assert pairs(labelled) < 350
    assert len(labelled) == 64


def test_test93_files_are_exactly_what_its_rule_draws():
    """test93 (bench/corpus_test93/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 20 code bases, the
    seeds "npu-audit-test-split-93:...". The draw ran to its end before the deadline: kernel reached 35 with its first
    top-up file, third_party's pool had no open file, attention's pool ran dry under 35, precision reached 35 with its
    second top-up file, apex's pool is empty, distributed's pool ran dry under 20, device was over 20 after the main
    rounds, and the further rounds reached 350 pairs with the split's 67th file."""
    draw = _LimitedDraw("test93", 20)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test93"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test93"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test93"] == "npu-audit-test-split-93:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test93"] == 8 and "test93" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 20 code bases, three of them (NLSPN_ECCV20, FastTD3, parkour) with one
    # eligible file.
    assert len(main) == 37 and labelled[:37] == main
    # Top-up, each pool in its order, skipping drawn files: kernel drew one file, which brought it to 35; third_party's
    # one pool file was drawn in the main rounds; attention drew its two open files (its pool ran dry under 35);
    # precision drew two files, the second bringing it to 35; apex's pool is empty; distributed drew its two open
    # files (under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") < 35 and labelled[37:38] == open_(pool("kernel"), main)[:1]
    assert pairs(labelled[:38], "kernel") >= 35
    assert open_(pool("third_party"), labelled[:38]) == [] and pairs(labelled[:38], "third_party") < 35
    assert labelled[38:40] == open_(pool("attention"), labelled[:38]) and pairs(labelled[:40], "attention") < 35
    assert labelled[40:42] == open_(pool("precision"), labelled[:40])[:2]
    assert pairs(labelled[:41], "precision") < 35 <= pairs(labelled[:42], "precision")
    assert pool("apex") == []
    assert labelled[42:44] == open_(pool("distributed"), labelled[:42]) and pairs(labelled[:44], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping drawn files and code bases at 8
    # files, until the split reached 350 pairs.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:44])
    assert labelled[44:] == later[:len(labelled) - 44]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert len(labelled) == 67
def test_test92_files_are_exactly_what_its_rule_draws():
    """test92 (bench/corpus_test92/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, the
    seeds "npu-audit-test-split-92:...". The draw ran to its end before the 15:20 deadline: kernel reached 35 with its
    second top-up file, third_party's and attention's pools ran dry under 35, precision was over 35 after the main
    rounds, apex's pool was drawn in the main rounds, distributed drew its one open file (under 20), device was over
    20 after the main rounds, and the split had 350 pairs or more after the top-up, so no further round was drawn."""
    draw = _LimitedDraw("test92", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test92"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test92"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test92"] == "npu-audit-test-split-92:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test92"] == 8 and "test92" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, two of them (Spike-Driven-Transformer-V2, TDN) with one
    # eligible file.
    assert len(main) == 46 and labelled[:46] == main
    # Top-up, each pool in its order, skipping drawn files: kernel drew two files, the second bringing it to 35;
    # third_party drew its one open file and its pool ran dry; attention drew its two open files and its pool ran dry;
    # precision was over 35 after the main rounds; apex's two-file pool was drawn in the main rounds; distributed drew
    # its one open file (under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") < 35 and labelled[46:48] == open_(pool("kernel"), main)[:2]
    assert pairs(labelled[:47], "kernel") < 35 <= pairs(labelled[:48], "kernel")
    assert labelled[48:49] == open_(pool("third_party"), labelled[:48]) and pairs(labelled[:49], "third_party") < 35
    assert labelled[49:51] == open_(pool("attention"), labelled[:49]) and pairs(labelled[:51], "attention") < 35
    assert pairs(main, "precision") >= 35
    assert open_(pool("apex"), main) == []
    assert labelled[51:52] == open_(pool("distributed"), labelled[:51]) and pairs(labelled[:52], "distributed") < 20
    assert pairs(main, "device") >= 20
    # No further round: 350 pairs or more after the top-up.
    assert pairs(labelled[:51]) >= 350
    assert len(labelled) == 52
def test_test95_files_are_exactly_what_its_rule_draws():
    """test95 (bench/corpus_test95/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel was over 35 after the main rounds, third_party's pool ran dry under
    35 with two files, attention's pool was empty, precision's pool ran dry under 35 with eight files, apex's with two
    and distributed's with three files under 20, device was over 20 after the main rounds, and round 3 reached 350
    pairs with its sixth file."""
    draw = _LimitedDraw("test95", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test95"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test95"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test95"] == "npu-audit-test-split-95:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test95"] == 8 and "test95" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, each with at least two eligible files.
    assert len(main) == 48 and labelled[:48] == main
    # Top-up: kernel was over 35 after the main rounds; third_party drew its two open files and attention's pool is
    # empty (both under 35); precision drew its eight open files (under 35); apex drew its two and distributed its
    # three open files (both under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") >= 35
    assert labelled[48:50] == open_(pool("third_party"), labelled[:48]) and pairs(labelled[:50], "third_party") < 35
    assert pool("attention") == []
    assert labelled[50:58] == open_(pool("precision"), labelled[:50]) and pairs(labelled[:58], "precision") < 35
    assert labelled[58:60] == open_(pool("apex"), labelled[:58]) and pairs(labelled[:60], "apex") < 20
    assert labelled[60:63] == open_(pool("distributed"), labelled[:60]) and pairs(labelled[:63], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further rounds: round 3 in sources.json order (code bases at 8 files or with no third file skipped) until the
    # split reached 350 pairs, with its sixth file.
    assert pairs(labelled[:63]) < 350 and pairs(labelled[:68]) < 350 <= pairs(labelled)
    assert [name for name, _ in labelled[63:]] == ["SE-SSD", "P4Transformer", "EPNet", "4d-gaussian-splatting",
                                                   "gaussian-grouping", "LangSplat"]
    assert len(labelled) == 69
def test_test96_files_are_exactly_what_its_rule_draws():
    """test96 (bench/corpus_test96/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its seventh top-up file, third_party's pool ran dry
    under 35, attention and precision were over 35 after the kernel and third_party top-ups, apex's and distributed's
    pools ran dry under 20, device was over 20 after the main rounds, and the pairs were over 350 after the top-up, so
    no further round was drawn."""
    draw = _LimitedDraw("test96", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test96"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test96"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test96"] == "npu-audit-test-split-96:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test96"] == 8 and "test96" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them (RoboFlamingo, LayerSkip, SqueezedAttention)
    # with one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew 7 files, the last
    # bringing it to 35; third_party drew its seven open files (its pool ran dry under 35); attention and precision were
    # over 35 by then (MagicDec's flashinfer and bf16 defaults in the kernel and third_party top-ups); apex drew its one
    # open file and distributed its four (both pools ran dry under 20); device was over 20 after the main rounds.
    assert labelled[45:52] == open_(pool("kernel"), labelled[:45])[:7]
    assert pairs(labelled[:51], "kernel") < 35 <= pairs(labelled[:52], "kernel")
    assert labelled[52:59] == open_(pool("third_party"), labelled[:52]) and pairs(labelled[:59], "third_party") < 35
    assert pairs(main, "attention") < 35 <= pairs(labelled[:59], "attention")
    assert pairs(main, "precision") < 35 <= pairs(labelled[:59], "precision")
    assert labelled[59:60] == open_(pool("apex"), labelled[:59]) and pairs(labelled[:60], "apex") < 20
    assert labelled[60:64] == open_(pool("distributed"), labelled[:60]) and pairs(labelled[:64], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 64


def test_test98_files_are_exactly_what_its_rule_draws():
    """test98 (bench/corpus_test98/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 23 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its third top-up file, third_party's pool ran dry
    under 35, attention's pool had no open file, precision's pool ran dry under 35, apex's pool is empty,
    distributed's pool ran dry under 20, device was over 20 after the main rounds, and the 350th pair came with the
    fourth file of round 3 (MICA's utils/masking.py)."""
    draw = _LimitedDraw("test98", 23)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test98"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test98"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test98"] == "npu-audit-test-split-98:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test98"] == 8 and "test98" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 23 code bases, six of them (ThinkTwice, ess, event_cnn_minimal,
    # event_flow, pytorch-tensor-decompositions, tt-pytorch) with one eligible file.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew 3 files, the last
    # (Palu's kernel/abx_rope.py) bringing it to 35; third_party drew its three open files (dry under 35); attention's
    # two pool files were drawn in the main rounds; precision drew its seven open files (dry under 35); apex's pool is
    # empty; distributed drew its four open files (dry under 20); device was over 20 after the main rounds.
    assert labelled[40:43] == open_(pool("kernel"), labelled[:40])[:3]
    assert pairs(labelled[:42], "kernel") < 35 <= pairs(labelled[:43], "kernel")
    assert labelled[43:46] == open_(pool("third_party"), labelled[:43]) and pairs(labelled[:46], "third_party") < 35
    assert open_(pool("attention"), labelled[:46]) == [] and pairs(labelled[:46], "attention") < 35
    assert labelled[46:53] == open_(pool("precision"), labelled[:46]) and pairs(labelled[:53], "precision") < 35
    assert pool("apex") == []
    assert labelled[53:57] == open_(pool("distributed"), labelled[:53]) and pairs(labelled[:57], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:57])
    assert labelled[57:] == later[:len(labelled) - 57]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("MICA", "utils/masking.py")
    assert len(labelled) == 61
def test_test99_files_are_exactly_what_its_rule_draws():
    """test99 (bench/corpus_test99/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 23 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its first top-up file, third_party's and
    attention's pools ran dry under 35, precision was over 35 after those top-ups, apex's pool had no open file left,
    distributed reached 20 with its second top-up file, device was over 20 after the main rounds, and further main
    rounds from round 3 ran until the pairs were over 350."""
    draw = _LimitedDraw("test99", 23)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test99"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test99"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test99"] == "npu-audit-test-split-99:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test99"] == 8 and "test99" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 23 code bases, one of them (distributed-faiss) with one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew one file, which
    # brought it to 35; third_party drew its seven open files and attention its four (both pools ran dry under 35);
    # precision was over 35 after them (fp16 / bf16 lines of their files); apex's three pool files were drawn by then (its pool had no open
    # file, under 20); distributed drew two files, the second bringing it to 20; device was over 20 after the main rounds.
    assert labelled[45:46] == open_(pool("kernel"), labelled[:45])[:1]
    assert pairs(labelled[:45], "kernel") < 35 <= pairs(labelled[:46], "kernel")
    assert labelled[46:53] == open_(pool("third_party"), labelled[:46]) and pairs(labelled[:53], "third_party") < 35
    assert labelled[53:57] == open_(pool("attention"), labelled[:53]) and pairs(labelled[:57], "attention") < 35
    assert pairs(main, "precision") < 35 <= pairs(labelled[:57], "precision")
    assert open_(pool("apex"), labelled[:57]) == [] and pairs(labelled[:57], "apex") < 20
    assert labelled[57:59] == open_(pool("distributed"), labelled[:57])[:2]
    assert pairs(labelled[:58], "distributed") < 20 <= pairs(labelled[:59], "distributed")
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until the pairs were over 350 (eleven files).
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:59])
    assert labelled[59:] == later[:11]
    assert pairs(labelled[:69]) < 350 <= pairs(labelled)
    assert len(labelled) == 70
def test_test102_files_are_exactly_what_its_rule_draws():
    """test102 (bench/corpus_test102/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel was over 35 after the main rounds, the third_party and attention
    pools ran dry under 35, precision reached 35 with its ninth top-up file, apex's pool is empty, distributed's ran
    dry under 20, device was over 20 after the main rounds, and the pairs were over 350 after the top-up, so no further
    round was drawn."""
    draw = _LimitedDraw("test102", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test102"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test102"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test102"] == "npu-audit-test-split-102:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test102"] == 8 and "test102" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them (RAVE, salad, outlier-free-transformers)
    # with one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel was over 35 after the main
    # rounds (ChamferDistancePytorch's JIT builds, MSN's and neural_renderer's extensions, Jetfire's Triton kernels,
    # ShiftAddLLM's quant_cuda); third_party drew its two open files and attention its four (both pools ran dry under
    # 35); precision drew 9 files, the last bringing it to 35; apex's pool is empty; distributed drew its two files
    # (its pool ran dry under 20); device was over 20 after the main rounds.
    assert pairs(main, "kernel") >= 35
    assert labelled[45:47] == open_(pool("third_party"), labelled[:45]) and pairs(labelled[:47], "third_party") < 35
    assert labelled[47:51] == open_(pool("attention"), labelled[:47]) and pairs(labelled[:51], "attention") < 35
    assert labelled[51:60] == open_(pool("precision"), labelled[:51])[:9]
    assert pairs(labelled[:59], "precision") < 35 <= pairs(labelled[:60], "precision")
    assert pool("apex") == []
    assert labelled[60:62] == open_(pool("distributed"), labelled[:60]) and pairs(labelled[:62], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 62
def test_test101_files_are_exactly_what_its_rule_draws():
    """test101 (bench/corpus_test101/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel drew its cap of 16 files under 35, third_party's, attention's and
    precision's pools ran dry under 35 (their open files were drawn or their code bases closed at 8 files), apex was at
    20 after the precision top-up, distributed's pool ran dry under 20, device was over 20 after the main rounds, and
    the pairs were over 350 after the top-up, so no further round was drawn."""
    draw = _LimitedDraw("test101", 24)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test101"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test101"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test101"] == "npu-audit-test-split-101:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test101"] == 8 and "test101" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, six of them (rtdl-revisiting-models, TabSurvey, tabzilla,
    # ViTAS, mcunet, pytorch-3dunet) with one eligible file.
    assert len(main) == 42 and labelled[:42] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its cap of 16 files
    # (still under 35); third_party drew its three open files, attention none (its four files are archai's, closed at
    # 8), precision its thirteen open files (all three pools ran dry under 35); apex was at 20 after the precision
    # top-up; distributed drew its five open files (dry under 20); device was over 20 after the main rounds.
    assert labelled[42:58] == open_(pool("kernel"), labelled[:42])[:16] and pairs(labelled[:58], "kernel") < 35
    assert labelled[58:61] == open_(pool("third_party"), labelled[:58]) and pairs(labelled[:61], "third_party") < 35
    assert open_(pool("attention"), labelled[:61]) == [] and pairs(labelled[:61], "attention") < 35
    assert labelled[61:74] == open_(pool("precision"), labelled[:61]) and pairs(labelled[:74], "precision") < 35
    assert pairs(labelled[:61], "apex") < 20 <= pairs(labelled[:74], "apex")
    assert labelled[74:79] == open_(pool("distributed"), labelled[:74]) and pairs(labelled[:79], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 79


def test_test106_files_are_exactly_what_its_rule_draws():
    """test106 (bench/corpus_test106/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel's, third_party's, precision's and distributed's pools ran dry under
    their targets, attention's open pool was empty, apex's pool is empty, device was over 20 after the main rounds;
    the further rounds drew every file the 8-file limit allows and stopped under 350 pairs."""
    draw = _LimitedDraw("test106", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test106"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test106"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test106"] == "npu-audit-test-split-106:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test106"] == 8 and "test106" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, nine of them (style-aligned, CTR-GCN, HD-GCN,
    # feature-circuits, circuit-tracer, DPText-DETR, SPTS, CLIP4STR, SMART) with one eligible file.
    assert len(main) == 39 and labelled[:39] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its five open files
    # (dry under 35), third_party its one open file, attention none (its four files were drawn in the main rounds),
    # precision its eleven open files (all dry under 35); apex's pool is empty; distributed drew its five open files
    # (dry under 20); device was over 20 after the main rounds.
    assert labelled[39:44] == open_(pool("kernel"), labelled[:39]) and pairs(labelled[:44], "kernel") < 35
    assert labelled[44:45] == open_(pool("third_party"), labelled[:44]) and pairs(labelled[:45], "third_party") < 35
    assert open_(pool("attention"), labelled[:45]) == [] and pairs(labelled[:45], "attention") < 35
    assert labelled[45:56] == open_(pool("precision"), labelled[:45]) and pairs(labelled[:56], "precision") < 35
    assert select_test.topup_order("apex", "test106") == []
    assert labelled[56:61] == open_(pool("distributed"), labelled[:56]) and pairs(labelled[:61], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every order ran out (or reached the limit) before 350 pairs, so the split is every file the limit
    # allows: min(8, eligible) per code base.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:61])
    assert labelled[61:] == later
    assert {name: sum(1 for n, _ in labelled if n == name) for name, _ in orders} == \
        {name: min(8, len(order)) for name, order in orders}
    assert pairs(labelled) < 350
    assert len(labelled) == 73


def test_test105_files_are_exactly_what_its_rule_draws():
    """test105 (bench/corpus_test105/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases. The
    draw ran to its end before the deadline: kernel reached 35 with its seventh top-up file, third_party's pool is
    empty, attention's and precision's pools ran dry under 35, apex's and distributed's open files were all drawn or
    their code bases closed at 8 files, device was over 20 after the main rounds, and the 350th pair came with the
    sixth file of further round 3 (GS-IR's baking.py)."""
    draw = _LimitedDraw("test105", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test105"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test105"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test105"] == "npu-audit-test-split-105:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test105"] == 8 and "test105" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, four of them (graspnet-baseline, doremi, QuRating,
    # LLaMA-Pro) with one eligible file.
    assert len(main) == 44 and labelled[:44] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew 7 files, the seventh
    # (GDRNPP's torch_nndistance.py) bringing it to 35; third_party's pool is empty; attention drew its four open
    # files (dry under 35); precision drew its nine open files (dry under 35; GDRNPP closed at 8 on the way); apex's
    # and distributed's pools had no open file (drawn, or GDRNPP's); device was over 20 after the main rounds.
    assert labelled[44:51] == open_(pool("kernel"), labelled[:44])[:7]
    assert pairs(labelled[:50], "kernel") < 35 <= pairs(labelled[:51], "kernel")
    assert pool("third_party") == []
    assert labelled[51:55] == open_(pool("attention"), labelled[:51]) and pairs(labelled[:55], "attention") < 35
    assert labelled[55:64] == open_(pool("precision"), labelled[:55]) and pairs(labelled[:64], "precision") < 35
    assert sum(1 for name, _ in labelled[:64] if name == "gdrnpp_bop2022") == 8
    assert pool("apex") and open_(pool("apex"), labelled[:64]) == [] and pairs(labelled[:64], "apex") < 20
    assert open_(pool("distributed"), labelled[:64]) == [] and pairs(labelled[:64], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the sixth file of round 3.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:64])
    assert labelled[64:] == later[:len(labelled) - 64]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("GS-IR", "baking.py")
    assert len(labelled) == 70


def test_test109_files_are_exactly_what_its_rule_draws():
    """test109 (bench/corpus_test109/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, six
    with no eligible file. The draw ran to its end before the deadline: kernel's open files were all drawn (dry under
    35), third_party was over 35 after the kernel top-up, attention's pool is empty, precision's open files were all
    drawn (dry under 35; LAVISH closed at 8 on the way), apex's and distributed's pool files were drawn before, device
    was over 20 after the main rounds, and the 350th pair came with the eleventh file of the further rounds
    (VisualVoice's av-separation-with-context/testRealVideo.py)."""
    draw = _LimitedDraw("test109", 18)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test109"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test109"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test109"] == "npu-audit-test-split-109:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test109"] == 8 and "test109" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 18 code bases with an eligible file, four of them (Localizing-Visual-
    # Sounds-the-Hard-Way, SLAVC, Voxurf, DePT) with one.
    assert len(main) == 32 and labelled[:32] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its four open files
    # (dry under 35); third_party was already over 35; attention's pool is empty; precision drew its nine open files
    # (dry under 35; LAVISH closed at 8 on the way); apex's and distributed's pool files were drawn before; device was
    # over 20 after the main rounds.
    assert labelled[32:36] == open_(pool("kernel"), labelled[:32]) and pairs(labelled[:36], "kernel") < 35
    assert pairs(labelled[:36], "third_party") >= 35
    assert pool("attention") == []
    assert labelled[36:45] == open_(pool("precision"), labelled[:36]) and pairs(labelled[:45], "precision") < 35
    assert sum(1 for name, _ in labelled[:45] if name == "LAVISH") == 8
    assert pool("apex") and open_(pool("apex"), labelled[:45]) == [] and pairs(labelled[:45], "apex") < 20
    assert open_(pool("distributed"), labelled[:45]) == [] and pairs(labelled[:45], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the eleventh file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:45])
    assert labelled[45:] == later[:len(labelled) - 45]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("VisualVoice", "av-separation-with-context/testRealVideo.py")
    assert len(labelled) == 56


def test_test112_files_are_exactly_what_its_rule_draws():
    """test112 (bench/corpus_test112/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 20 code bases. The
    draw ran to its end before the deadline: kernel drew its cap of 16 top-up files under 35, third_party's and
    attention's pools are empty, precision's pool ran dry under 35, apex's pool is empty, distributed's pool ran dry
    under 20, device was over 20 after the main rounds, and the pairs were over 350 after the top-up, so no further
    round was drawn."""
    draw = _LimitedDraw("test112", 20)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test112"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test112"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test112"] == "npu-audit-test-split-112:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test112"] == 8 and "test112" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 20 code bases, four of them (EVREAL, v2e, snn_angular_velocity,
    # QmapCompression) with one eligible file.
    assert len(main) == 36 and labelled[:36] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its cap of 16 files
    # and stayed under 35; third_party's and attention's pools are empty; precision drew its three open files (dry
    # under 35); apex's pool is empty; distributed drew its two open files (dry under 20); device was over 20 after the
    # main rounds.
    assert labelled[36:52] == open_(pool("kernel"), labelled[:36])[:16] and pairs(labelled[:52], "kernel") < 35
    assert pool("third_party") == [] and pool("attention") == []
    assert labelled[52:55] == open_(pool("precision"), labelled[:52]) and pairs(labelled[:55], "precision") < 35
    assert pool("apex") == []
    assert labelled[55:57] == open_(pool("distributed"), labelled[:55]) and pairs(labelled[:57], "distributed") < 20
    assert pairs(main, "device") >= 20
    # The pairs were over 350 after the top-up, so no further round was drawn.
    assert pairs(labelled) >= 350
    assert len(labelled) == 57


def test_test113_files_are_exactly_what_its_rule_draws():
    """test113 (bench/corpus_test113/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 22 code bases. The
    draw ran to its end before the 23:10 deadline: kernel reached 35 with its fourth top-up file, third_party's and
    attention's open files were all drawn (dry under 35; FlexPrefill and ChunkLlama closed at 8 on the way), precision
    was over 35 before its turn, apex's pool is empty, distributed's open files were all drawn (dry under 20), device
    was over 20 after the main rounds, and the 350th pair came with the first file of the further rounds (EasyKV's
    test_passkey.py)."""
    draw = _LimitedDraw("test113", 22)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test113"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test113"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test113"] == "npu-audit-test-split-113:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test113"] == 8 and "test113" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 22 code bases, six of them (pyramidinfer, EEND_PyTorch,
    # EfficientConformer, gss, aasist, ClimateNet) with one eligible file.
    assert len(main) == 38 and labelled[:38] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel reached 35 with its fourth
    # file; third_party drew its one open file (dry under 35); attention drew its ten open files (dry under 35);
    # precision was over 35 before its turn; apex's pool is empty; distributed drew its two open files (dry under 20);
    # device was over 20 after the main rounds.
    kernel = open_(pool("kernel"), labelled[:38])
    assert labelled[38:42] == kernel[:4]
    assert pairs(labelled[:41], "kernel") < 35 <= pairs(labelled[:42], "kernel")
    assert labelled[42:43] == open_(pool("third_party"), labelled[:42]) and pairs(labelled[:43], "third_party") < 35
    assert labelled[43:53] == open_(pool("attention"), labelled[:43]) and pairs(labelled[:53], "attention") < 35
    assert sum(1 for name, _ in labelled[:53] if name == "FlexPrefill") == 8
    assert sum(1 for name, _ in labelled[:53] if name == "ChunkLlama") == 8
    assert pairs(labelled[:53], "precision") >= 35
    assert pool("apex") == []
    assert labelled[53:55] == open_(pool("distributed"), labelled[:53]) and pairs(labelled[:55], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the first file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:55])
    assert labelled[55:] == later[:len(labelled) - 55]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("EasyKV", "test_passkey.py")
    assert len(labelled) == 56


def test_test116_files_are_exactly_what_its_rule_draws():
    """test116 (bench/corpus_test116/SELECTION.md): test84's rule (top-up order kernel, third_party, attention,
    precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code base; 24 code bases, all
    with an eligible file. The draw ran to its end before the deadline: kernel's, third_party's, precision's, apex's and
    distributed's open files were all drawn (each dry under its target), attention's pool is empty, device was over 20
    after the main rounds, and the 350th pair came with the fourth file of the further rounds (IMavatar's
    code/utils/rend_util.py)."""
    draw = _LimitedDraw("test116", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test116"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test116"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test116"] == "npu-audit-test-split-116:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test116"] == 8 and "test116" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, five of them (INSTA-pytorch, CDVD-TSP, RQ-VAE-Recommender,
    # DPC, MemDPC) with one eligible file.
    assert len(main) == 43 and labelled[:43] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its four open files
    # (dry under 35); third_party its one (dry under 35); attention's pool is empty; precision drew its three open files
    # (dry under 35); apex its one-file pool (under 20); distributed its one open file (under 20); device was over 20
    # after the main rounds.
    assert labelled[43:47] == open_(pool("kernel"), labelled[:43]) and pairs(labelled[:47], "kernel") < 35
    assert labelled[47:48] == open_(pool("third_party"), labelled[:47]) and pairs(labelled[:48], "third_party") < 35
    assert pool("attention") == []
    assert labelled[48:51] == open_(pool("precision"), labelled[:48]) and pairs(labelled[:51], "precision") < 35
    assert labelled[51:52] == pool("apex") and pairs(labelled[:52], "apex") < 20
    assert labelled[52:53] == open_(pool("distributed"), labelled[:52]) and pairs(labelled[:53], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the fourth file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:53])
    assert labelled[53:] == later[:len(labelled) - 53]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("IMavatar", "code/utils/rend_util.py")
    assert len(labelled) == 57


def test_test119_files_are_exactly_what_its_rule_draws():
    """test119 (bench/corpus_test119/SELECTION.md): test84's rule as test116 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 23 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel passed 35 with
    its second top-up file, third_party's and precision's open files were all drawn (each dry under 35), the attention
    and apex pools are empty, and the 350th pair came with distributed's one open file (DeCLIP's linklink/__init__.py),
    so no further round was drawn."""
    draw = _LimitedDraw("test119", 23)
    select_test, labelled, main = draw.select_test, draw.labelled, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test119"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test119"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test119"] == "npu-audit-test-split-119:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test119"] == 8 and "test119" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 23 code bases, six of them (BEVStereo, LiLT, Descript Audio Codec,
    # Co-SLAM, SimSiam, UniCL) with one eligible file.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel's first two open files
    # (futr3d's and Fast-BEV's setup.py) took it past 35; third_party drew its six open files (dry under 35);
    # attention's pool is empty; precision drew its fourteen open files (dry under 35; Fast-BEV reached 8 files
    # there); apex's pool is empty; distributed's one open file brought the 350th pair.
    assert labelled[40:42] == open_(pool("kernel"), labelled[:40])[:2]
    assert pairs(labelled[:41], "kernel") < 35 <= pairs(labelled[:42], "kernel")
    assert labelled[42:48] == open_(pool("third_party"), labelled[:42]) and pairs(labelled[:48], "third_party") < 35
    assert pool("attention") == [] and pool("apex") == []
    assert labelled[48:62] == open_(pool("precision"), labelled[:48]) and pairs(labelled[:62], "precision") < 35
    assert labelled[62:] == open_(pool("distributed"), labelled[:62]) and pairs(labelled, "distributed") < 20
    assert pairs(main, "device") >= 20
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("DeCLIP", "linklink/__init__.py")
    assert len(labelled) == 63


def test_test120_files_are_exactly_what_its_rule_draws():
    """test120 (bench/corpus_test120/SELECTION.md): test84's rule as test116 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 20 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel reached 35 with
    its fifth top-up file, third_party's and distributed's open files were all drawn (each dry under its target),
    attention's pool is empty, precision's and apex's one-file pools were main-round files, device was over 20 after
    the main rounds, and the 350th pair came with the thirteenth file of the further rounds (PhySG's
    code/utils/rend_util.py)."""
    draw = _LimitedDraw("test120", 20)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test120"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test120"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test120"] == "npu-audit-test-split-120:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test120"] == 8 and "test120" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 20 code bases, six of them (materialgan, torchkbnufft, egt_pytorch, GRPE,
    # humanoid-gym, extreme-parkour) with one eligible file.
    assert len(main) == 34 and labelled[:34] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew five open files and
    # reached 35 with the fifth; third_party drew its three open files (dry under 35); attention's pool is empty;
    # precision's and apex's one-file pools were drawn in the main rounds (dry under 35 / 20); distributed drew its three
    # open files (dry under 20); device was over 20 after the main rounds.
    assert labelled[34:39] == open_(pool("kernel"), labelled[:34])[:5]
    assert pairs(labelled[:38], "kernel") < 35 <= pairs(labelled[:39], "kernel")
    assert labelled[39:42] == open_(pool("third_party"), labelled[:39]) and pairs(labelled[:42], "third_party") < 35
    assert pool("attention") == []
    assert open_(pool("precision"), labelled[:42]) == [] and pairs(labelled[:42], "precision") < 35
    assert open_(pool("apex"), labelled[:42]) == [] and pairs(labelled[:42], "apex") < 20
    assert labelled[42:45] == open_(pool("distributed"), labelled[:42]) and pairs(labelled[:45], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the thirteenth file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:45])
    assert labelled[45:] == later[:len(labelled) - 45]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("PhySG", "code/utils/rend_util.py")
    assert len(labelled) == 58



def test_test124_files_are_exactly_what_its_rule_draws():
    """test124 (bench/corpus_test124/SELECTION.md): test84's rule as test120 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew its four
    open files (dry under 35), third_party's one-file pool was a main-round file, attention's and apex's pools are
    empty, precision drew its two open files (dry under 35), distributed drew its six open files before torchdistill
    reached 8 files (dry under 20), device was over 20 after the main rounds, and the 350th pair came with the ninth
    file of the further rounds (FRN's trainers/frn_train.py)."""
    draw = _LimitedDraw("test124", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test124"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test124"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test124"] == "npu-audit-test-split-124:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test124"] == 8 and "test124" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, four of them (E2FGVI, RePaint, RPMNet, D3Feat) with one
    # eligible file.
    assert len(main) == 44 and labelled[:44] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its four open files
    # (dry under 35); third_party's one-file pool was drawn in the main rounds; attention's and apex's pools are empty;
    # precision drew its two open files (dry under 35); distributed drew its six open files, the rest of its pool being
    # drawn or torchdistill's once it had 8 files (dry under 20); device was over 20 after the main rounds.
    assert labelled[44:48] == open_(pool("kernel"), labelled[:44]) and pairs(labelled[:48], "kernel") < 35
    assert open_(pool("third_party"), labelled[:48]) == [] and pairs(labelled[:48], "third_party") < 35
    assert pool("attention") == [] and pool("apex") == []
    assert labelled[48:50] == open_(pool("precision"), labelled[:48]) and pairs(labelled[:50], "precision") < 35
    assert labelled[50:56] == open_(pool("distributed"), labelled[:50]) and pairs(labelled[:56], "distributed") < 20
    assert sum(1 for name, _ in labelled[:56] if name == "torchdistill") == 8
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the ninth file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:56])
    assert labelled[56:] == later[:len(labelled) - 56]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("FRN", "trainers/frn_train.py")
    assert len(labelled) == 65


def test_test125_files_are_exactly_what_its_rule_draws():
    """test125 (bench/corpus_test125/SELECTION.md): test84's rule as test124 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew six files
    and passed 35 with the sixth (DRRG's nmslib/nms/setup.py), third_party drew its three open files (dry under 35),
    attention's and apex's pools are empty, precision drew its two files (dry under 35), distributed drew its one open
    file (dry under 20), device was over 20 after the main rounds, and the 350th pair came with the ninth file of the
    further rounds (MCD_DA's visda_classification/res_train_main.py)."""
    draw = _LimitedDraw("test125", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test125"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test125"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test125"] == "npu-audit-test-split-125:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test125"] == 8 and "test125" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, eight of them with one eligible file.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel's sixth open file brought
    # it to 35 or more; third_party drew its three open files (dry under 35); attention's and apex's pools are empty;
    # precision drew its two files (dry under 35); distributed drew its one open file (dry under 20); device was over
    # 20 after the main rounds.
    assert labelled[40:46] == open_(pool("kernel"), labelled[:40])[:6]
    assert pairs(labelled[:45], "kernel") < 35 <= pairs(labelled[:46], "kernel")
    assert labelled[46:49] == open_(pool("third_party"), labelled[:46]) and pairs(labelled[:49], "third_party") < 35
    assert pool("attention") == [] and pool("apex") == []
    assert labelled[49:51] == open_(pool("precision"), labelled[:49]) and pairs(labelled[:51], "precision") < 35
    assert labelled[51:52] == open_(pool("distributed"), labelled[:51]) and pairs(labelled[:52], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the ninth file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:52])
    assert labelled[52:] == later[:len(labelled) - 52]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("MCD_DA", "visda_classification/res_train_main.py")
    assert len(labelled) == 61


def test_test127_files_are_exactly_what_its_rule_draws():
    """test127 (bench/corpus_test127/SELECTION.md): test84's rule as test125 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 23 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew eleven
    files and passed 35 with the eleventh (AnyNet's models/spn_t1/setup.py), third_party's, attention's and apex's pools
    are empty, precision drew its three open files (dry under 35), distributed's one pool file was a main-round file,
    device was over 20 after the main rounds, and the 350th pair came with the 23rd file of the further rounds (pase's
    pase/losses.py)."""
    draw = _LimitedDraw("test127", 23)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test127"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test127"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test127"] == "npu-audit-test-split-127:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test127"] == 8 and "test127" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 23 code bases, six of them with one eligible file.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel's eleventh open file
    # brought it to 35 or more; third_party's, attention's and apex's pools are empty; precision drew its three open
    # files (dry under 35); distributed's pool holds only DSMNet's train.py, a main-round file (dry under 20); device
    # was over 20 after the main rounds.
    assert labelled[40:51] == open_(pool("kernel"), labelled[:40])[:11]
    assert pairs(labelled[:50], "kernel") < 35 <= pairs(labelled[:51], "kernel")
    assert pool("third_party") == [] and pool("attention") == [] and pool("apex") == []
    assert labelled[51:54] == open_(pool("precision"), labelled[:51]) and pairs(labelled[:54], "precision") < 35
    assert open_(pool("distributed"), labelled[:54]) == [] and pairs(labelled[:54], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the 23rd file of the further rounds.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:54])
    assert labelled[54:] == later[:len(labelled) - 54]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("pase", "pase/losses.py")
    assert len(labelled) == 77

def test_test130_files_are_exactly_what_its_rule_draws():
    """test130 (bench/corpus_test130/SELECTION.md): test84's rule as test125 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew its five
    open files and third_party its three (both dry under 35), attention's pool is empty, precision drew its two open
    files (dry under 35; imaginaire's third was skipped at 8 files), apex's two files were drawn before (dry under 20),
    distributed drew its one open file (dry under 20), device was over 20 after the main rounds, and the further rounds
    ran out of files before 350 pairs."""
    draw = _LimitedDraw("test130", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test130"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test130"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test130"] == "npu-audit-test-split-130:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test130"] == 8 and "test130" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, seven of them with one eligible file.
    assert len(main) == 41 and labelled[:41] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its five open files
    # and third_party its three (dry under 35); attention's pool is empty; precision drew its two open files (dry under
    # 35); apex's pool had no open file (dry under 20); distributed drew its one open file (dry under 20); device was
    # over 20 after the main rounds.
    assert labelled[41:46] == open_(pool("kernel"), labelled[:41]) and pairs(labelled[:46], "kernel") < 35
    assert labelled[46:49] == open_(pool("third_party"), labelled[:46]) and pairs(labelled[:49], "third_party") < 35
    assert pool("attention") == []
    assert labelled[49:51] == open_(pool("precision"), labelled[:49]) and pairs(labelled[:51], "precision") < 35
    assert open_(pool("apex"), labelled[:51]) == [] and pairs(labelled[:51], "apex") < 20
    assert labelled[51:52] == open_(pool("distributed"), labelled[:51]) and pairs(labelled[:52], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files: every open file was drawn and the split stayed under 350 pairs.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:52])
    assert labelled[52:] == later and pairs(labelled) < 350
    assert len(labelled) == 77


def test_test131_files_are_exactly_what_its_rule_draws():
    """test131 (bench/corpus_test131/SELECTION.md): test84's rule as test130 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew its nine
    open files and third_party its two (both dry under 35), attention's pool is empty, precision drew its five open
    files (dry under 35), apex's pool is empty, distributed drew its three open files (dry under 20), device was over
    20 after the main rounds, and the 350th pair came with the first file of the further rounds."""
    draw = _LimitedDraw("test131", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test131"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test131"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test131"] == "npu-audit-test-split-131:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test131"] == 8 and "test131" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, three of them with one eligible file.
    assert len(main) == 45 and labelled[:45] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its nine open files
    # and third_party its two (dry under 35); attention's pool is empty; precision drew its five open files (dry under
    # 35); apex's pool is empty; distributed drew its three open files (dry under 20); device was over 20 after the
    # main rounds.
    assert labelled[45:54] == open_(pool("kernel"), labelled[:45]) and pairs(labelled[:54], "kernel") < 35
    assert labelled[54:56] == open_(pool("third_party"), labelled[:54]) and pairs(labelled[:56], "third_party") < 35
    assert pool("attention") == []
    assert labelled[56:61] == open_(pool("precision"), labelled[:56]) and pairs(labelled[:61], "precision") < 35
    assert pool("apex") == []
    assert labelled[61:64] == open_(pool("distributed"), labelled[:61]) and pairs(labelled[:64], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the first file of round 3.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:64])
    assert labelled[64:] == later[:len(labelled) - 64]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("pdf-document-layout-analysis", "src/adapters/ml/vgt/ditod/VGT.py")
    assert len(labelled) == 65
def test_test133_files_are_exactly_what_its_rule_draws():
    """test133 (bench/corpus_test133/SELECTION.md): test84's rule as test130 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew its three
    open files and third_party its three (both dry under 35), attention's pool is empty, precision drew its one open
    file (dry under 35), apex's and distributed's pools had no open file (dry under 20), device was over 20 after the
    main rounds, and the further rounds stopped at the file that brought the split to 350 pairs."""
    draw = _LimitedDraw("test133", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test133"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test133"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test133"] == "npu-audit-test-split-133:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test133"] == 8 and "test133" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, eight of them with one eligible file.
    assert len(main) == 40 and labelled[:40] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its three open files
    # and third_party its three (dry under 35); attention's pool is empty; precision drew its one open file (dry under
    # 35); apex's and distributed's pools had no open file (dry under 20); device was over 20 after the main rounds.
    assert labelled[40:43] == open_(pool("kernel"), labelled[:40]) and pairs(labelled[:43], "kernel") < 35
    assert labelled[43:46] == open_(pool("third_party"), labelled[:43]) and pairs(labelled[:46], "third_party") < 35
    assert pool("attention") == []
    assert labelled[46:47] == open_(pool("precision"), labelled[:46]) and pairs(labelled[:47], "precision") < 35
    assert open_(pool("apex"), labelled[:47]) == [] and pairs(labelled[:47], "apex") < 20
    assert open_(pool("distributed"), labelled[:47]) == [] and pairs(labelled[:47], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until the file that brought the split to 350 pairs.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:47])
    assert labelled[47:] == later[:len(labelled) - 47]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("siMLPe", "exps/baseline_amass/train.py")
    assert len(labelled) == 69


def test_test135_files_are_exactly_what_its_rule_draws():
    """test135 (bench/corpus_test135/SELECTION.md): test84's rule as test133 copied it (top-up order kernel,
    third_party, attention, precision first; targets 35 for those four, 20 for the others; cap 16), 8 files per code
    base; 24 code bases, all with an eligible file. The draw ran to its end before the deadline: kernel drew its eight
    open files and third_party its four (both dry under 35), attention's pool is empty, precision drew its three files
    (dry under 35), apex's pool had no open file (dry under 20), distributed drew its one open file (dry under 20),
    device was over 20 after the main rounds, and the further rounds stopped at the file that brought the split to 350
    pairs."""
    draw = _LimitedDraw("test135", 24)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    rule = select_test.TOPUP_RULES["test135"]
    assert rule["order"] == ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device")
    assert rule["target"] == 20 and rule["cap"] == 16
    assert rule["targets"] == {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35}
    assert select_test.SPLIT_TOPUP_WORDS["test135"] is select_test.SPLIT_TOPUP_WORDS["test84"]
    assert select_test.SEED_PREFIXES["test135"] == "npu-audit-test-split-135:"
    assert select_test.MAX_FILES_PER_CODE_BASE["test135"] == 8 and "test135" in select_test.TOPUP_EXCLUDES_SUBTREES
    # Main rounds 1-2 in sources.json order: 24 code bases, four of them with one eligible file.
    assert len(main) == 44 and labelled[:44] == main
    # Top-up, each pool in its order, skipping drawn files and code bases at 8 files: kernel drew its eight open files
    # and third_party its four (dry under 35); attention's pool is empty; precision drew its three files (dry under
    # 35); apex's pool had no open file (dry under 20); distributed drew its one open file (dry under 20); device was
    # over 20 after the main rounds.
    assert labelled[44:52] == open_(pool("kernel"), labelled[:44]) and pairs(labelled[:52], "kernel") < 35
    assert labelled[52:56] == open_(pool("third_party"), labelled[:52]) and pairs(labelled[:56], "third_party") < 35
    assert pool("attention") == []
    assert labelled[56:59] == open_(pool("precision"), labelled[:56]) and pairs(labelled[:59], "precision") < 35
    assert open_(pool("apex"), labelled[:59]) == [] and pairs(labelled[:59], "apex") < 20
    assert labelled[59:60] == open_(pool("distributed"), labelled[:59]) and pairs(labelled[:60], "distributed") < 20
    assert pairs(main, "device") >= 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until the file that brought the split to 350 pairs.
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:60])
    assert labelled[60:] == later[:len(labelled) - 60]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("CCNet", "evaluate.py")
    assert len(labelled) == 73


def test_test22_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test22", 21)         # test21's rule on pool A20 and its recorded extension (pinned commits)
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert "test22" in select_test.AUDITED_ONLY_SPLITS
    assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] and "archive" not in s
               for s in recall.load_sources("test22"))
    # Main rounds 1-2 in sources.json order: six code bases have one eligible file each, so round 2 has the other 15.
    assert len(main) == 36 and labelled[:36] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew the one pool file not drawn before (hyena-dna's copy of safari's
    # distributed.py) and stays under 20; precision had 20 or more after the main rounds; apex drew its two-file pool
    # (the fftconv setup.py of safari and hyena-dna, whose only apex match is a comment) and stays under 20; attention
    # had 20 or more after the main rounds; kernel reached 20 with the apex top-up; third_party's pool is empty.
    assert pairs(main, "device") >= 20 and pairs(main, "precision") >= 20 and pairs(main, "attention") >= 20
    assert labelled[36:37] == open_(pool("distributed"), labelled[:36]) and pairs(labelled[:37], "distributed") < 20
    assert labelled[37:39] == pool("apex") and pairs(labelled[:39], "apex") < 20
    assert pairs(labelled[:37], "kernel") < 20 <= pairs(labelled[:39], "kernel")
    assert pool("third_party") == []
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the seventh file of round 5 (SimCSE's classifier.py).
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:39])
    assert labelled[39:] == later[:len(labelled) - 39]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("SimCSE", "SentEval/senteval/tools/classifier.py")
    assert len(labelled) == 71


def test_test23_files_are_exactly_what_its_rule_draws():
    draw = _LimitedDraw("test23", 18)         # test22's rule on l53's pool (pinned GitHub commits), 8 files per code base
    select_test, labelled, orders, main = draw.select_test, draw.labelled, draw.orders, draw.main
    pool, pairs, open_ = draw.pool, draw.pairs, draw.open_
    assert "test23" in select_test.AUDITED_ONLY_SPLITS
    assert all(len(s["commit"]) == 40 and s["version"] == s["commit"][:12] and "archive" not in s
               for s in recall.load_sources("test23"))
    # Main rounds 1-2 in sources.json order: two code bases have one eligible file each, so round 2 has the other 16.
    assert len(main) == 34 and labelled[:34] == main

    # Top-up (SELECTION.md outcome), each in its pool's order, skipping files already drawn and code bases at 8 files:
    # device needed none; distributed drew the one pool file not drawn before (CenterPoint's tools/train.py) and stays
    # under 20; precision drew 10 files, the tenth bringing it to 20 or more (PVT reached the limit on the way); apex
    # drew 5 files, the fifth bringing it to 20; attention drew the one pool file not drawn before and stays under 20;
    # kernel had 20 or more after the main rounds; third_party's two pool files are poolformer's, which was at 8 files.
    assert pairs(main, "device") >= 20 and pairs(main, "kernel") >= 20
    assert labelled[34:35] == open_(pool("distributed"), labelled[:34]) and pairs(labelled[:35], "distributed") < 20
    assert labelled[35:45] == open_(pool("precision"), labelled[:35])[:10]
    assert pairs(labelled[:44], "precision") < 20 <= pairs(labelled[:45], "precision")
    assert labelled[45:50] == open_(pool("apex"), labelled[:45])[:5]
    assert pairs(labelled[:49], "apex") < 20 <= pairs(labelled[:50], "apex")
    assert labelled[50:51] == open_(pool("attention"), labelled[:50]) and pairs(labelled[:51], "attention") < 20
    assert len(pool("third_party")) == 2 and open_(pool("third_party"), labelled[:51]) == []
    assert pairs(labelled[:51], "third_party") < 20
    # Further main rounds from round 3, one file per code base per round, skipping files drawn before and code bases
    # at 8 files, until 350 pairs: the 350th pair came with the first file of round 4 (PAConv's obj_cls/eval_voting.py).
    later = open_([(name, order[rnd]) for rnd in range(2, max(len(o) for _, o in orders)) for name, order in orders
                   if rnd < len(order)], labelled[:51])
    assert labelled[51:] == later[:len(labelled) - 51]
    assert pairs(labelled[:-1]) < 350 <= pairs(labelled)
    assert labelled[-1] == ("PAConv", "obj_cls/eval_voting.py")
    assert len(labelled) == 65


TRAIN_PY = "import torch\n\n\ndef main():\n    device = torch.device(\"cuda\")\n    torch.cuda.set_device(0)\n" + \
    "".join(f"    x{i} = torch.zeros({i}, device=device)\n" for i in range(16)) + "    torch.cuda.synchronize()\n"


def test_a_pinned_git_commit_is_fetched_from_a_local_mirror_checked_and_drawn(tmp_path, monkeypatch):
    """test21 on: a recall source may be a pinned GitHub commit ("repo", "commit", "version" = the commit's first 12 hex
    digits; no archive or sha256). `fetch` exports it from the local mirror <mirrors>/<owner>+<name>/repo; `check` and
    select_test.py then find the exported tree by name and version, as they find an unpacked archive."""
    import subprocess

    repo = tmp_path / "r"
    run = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True)  # noqa: E731
    (repo / "pkg").mkdir(parents=True)
    run("init", "-q")
    (repo / "pkg" / "train.py").write_text(TRAIN_PY)
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    commit = run("rev-parse", "HEAD").stdout.strip()
    mirrors = tmp_path / "mirrors"
    (mirrors / "o+r").mkdir(parents=True)
    (mirrors / "o+r" / "repo").symlink_to(repo / ".git")

    split = tmp_path / "corpus_test21"
    (split / "labels").mkdir(parents=True)
    source = {"name": "r", "repo": "o/r", "commit": commit, "version": commit[:12], "committed": "2026-12-02"}
    (split / "sources.json").write_text(json.dumps({"sources": [source]}))
    (split / "labels" / "r__pkg__train.py.yaml").write_text(yaml.safe_dump({
        "package": "r", "version": commit[:12], "path": "pkg/train.py", "sha256": "",
        "lines": [{"line": 6, "category": "device", "note": "torch.cuda.set_device", "text": "torch.cuda.set_device(0)"}]}))
    corpus = tmp_path / "_corpus"
    select_test = _load_select_test()
    for mod in (recall, select_test.recall):
        monkeypatch.setattr(mod, "SPLITS", {"test21": split})
        monkeypatch.setattr(mod, "CORPUS_DIR", corpus)
        monkeypatch.setattr(mod, "ARCHIVES_DIR", corpus / "_archives")

    assert recall.main(["--split", "test21", "fetch", "--mirrors", str(mirrors)]) == 0
    assert (corpus / f"r-{commit[:12]}" / "pkg" / "train.py").read_text() == TRAIN_PY
    assert (corpus / "_archives" / f"r-{commit}.tar").is_file()
    assert recall.main(["--split", "test21", "check"]) == 0
    assert [(src["name"], path) for src, path in select_test.draw(None, "test21")] == [("r", "pkg/train.py")]
    assert [(src["name"], path) for src, path in select_test.topup_order("device", "test21")] == [("r", "pkg/train.py")]


def test_tuned_t16c_files_are_exactly_what_its_rule_draws():
    """tuned_t16c (a sixth tuning sample, its SELECTION.md): test18's main rounds, at most 6 files per code base, a
    150-pair stop. Each of the 13 code bases with an eligible file has exactly one, so the split is those 13 files
    (35 pairs: the stop is never reached)."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t16c")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t16c corpus not fetched (python bench/recall.py --split tuned_t16c fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_t16c"]
    drawn = [(src["name"], path) for src, path in select_test.draw(cap, "tuned_t16c")]
    assert len(drawn) == len(set(drawn)) == 13 and set(drawn) == set(labels)
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()) == 35


def test_tuned_t17c_files_are_exactly_what_its_rule_draws():
    """tuned_t17c (a seventh tuning sample, its SELECTION.md): test19's eligibility (audited files only), main rounds,
    at most 6 files per code base, a 150-pair stop that is never reached (41 pairs): 19 files of 6 code bases."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t17c")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t17c corpus not fetched (python bench/recall.py --split tuned_t17c fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_t17c"]
    drawn = [(src["name"], path) for src, path in select_test.draw(cap, "tuned_t17c")]
    assert len(drawn) == len(set(drawn)) == 19 and set(drawn) == set(labels)
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()) == 41


def test_tuned_t19e_files_are_exactly_what_its_rule_draws():
    """tuned_t19e (a ninth tuning sample, its SELECTION.md): test19's eligibility, rounds over the code bases in
    sources.json order, at most 6 files per code base, stopped at 150 pairs after the 30th file; 144 pairs after the
    12 labels that departed from settled policy were removed (its SELECTION.md)."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t19e")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t19e corpus not fetched (python bench/recall.py --split tuned_t19e fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_t19e"]
    per_base: dict[str, list[str]] = {}
    for src, path in select_test.draw(cap, "tuned_t19e"):
        per_base.setdefault(src["name"], []).append(path)
    rounds = [(name, paths[r]) for r in range(cap) for name, paths in per_base.items() if r < len(paths)]
    assert set(rounds[:30]) == set(labels) and len(labels) == 30
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()
               if "none" not in ll.categories) == 144


def test_tuned_t22a_files_are_exactly_what_its_rule_draws():
    """tuned_t22a (a tenth tuning sample, its SELECTION.md): main rounds 1-2 (18 files: two code bases have one eligible
    file), kernel already at 25 pairs, attention's pool empty, then precision's top-up pool in its seeded order,
    skipping drawn files and code bases at 6 files, until the pool ran dry (6 files); 24 files, 172 pairs."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t22a")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t22a corpus not fetched (python bench/recall.py --split tuned_t22a fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_t22a"]
    drawn = [(src["name"], path) for src, path in select_test.draw(2, "tuned_t22a")]
    assert len(drawn) == 18 and select_test.topup_order("attention", "tuned_t22a") == []
    for src, path in select_test.topup_order("precision", "tuned_t22a"):
        if (src["name"], path) in drawn or sum(1 for name, _ in drawn if name == src["name"]) >= cap:
            continue
        drawn.append((src["name"], path))
    assert len(drawn) == len(set(drawn)) == 24 and set(drawn) == set(labels)
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()
               if "none" not in ll.categories) == 172


def test_tuned_t22b_files_are_exactly_what_its_rule_draws():
    """tuned_t22b (a tenth tuning sample, its SELECTION.md): main rounds 1-2, then the precision top-up, which took
    its cap of 12 files (skipping drawn files and code bases at 6) with precision still at 11 pairs; attention's pool
    is empty, kernel was over 25 and 234 pairs needed no further round."""
    select_test = _load_select_test()
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t22b")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t22b corpus not fetched (python bench/recall.py --split tuned_t22b fetch)")
    cap = select_test.MAX_FILES_PER_CODE_BASE["tuned_t22b"]
    drawn = [(src["name"], path) for src, path in select_test.draw(2, "tuned_t22b")]
    assert len(drawn) == 21
    per_base = {name: sum(1 for n, _ in drawn if n == name) for name, _ in drawn}
    taken = 0
    for src, path in select_test.topup_order("precision", "tuned_t22b"):
        key = (src["name"], path)
        if taken == 12:
            break
        if key in drawn or per_base.get(src["name"], 0) >= cap:
            continue
        drawn.append(key)
        per_base[src["name"]] = per_base.get(src["name"], 0) + 1
        taken += 1
    assert select_test.topup_order("attention", "tuned_t22b") == []
    assert set(drawn) == set(labels) and len(labels) == 33
    pairs = [c for lf in labels.values() for ll in lf.lines.values() for c in ll.categories]
    assert len(pairs) == 234 and pairs.count("precision") == 11


def test_a_sampled_file_under_a_dist_package_is_audited(tmp_path, monkeypatch):
    """The copy keeps the `__init__.py` of a `dist/` (or `build/`) package above a sampled file: discovery skips such a
    folder unless it is a package, so without its marker the bench hid a file the user's audit reads (tuned_t17c's
    carefree-learn `cflearn/dist/ml/experiment.py`). No other `__init__.py` comes along."""
    corpus = tmp_path / "_corpus"
    top = corpus / "cflearn-0.5.0"
    (top / "cflearn" / "dist" / "ml").mkdir(parents=True)
    (top / "cflearn" / "__init__.py").write_text("")
    (top / "cflearn" / "dist" / "__init__.py").write_text("")
    (top / "cflearn" / "dist" / "ml" / "__init__.py").write_text("")
    src = top / "cflearn" / "dist" / "ml" / "experiment.py"
    src.write_text("import torch\n\nAVAILABLE = torch.cuda.is_available()\n")
    labels_dir = tmp_path / "split" / "labels"
    labels_dir.mkdir(parents=True)
    doc = {"package": "cflearn", "version": "0.5.0", "path": "cflearn/dist/ml/experiment.py",
           "sha256": recall.sha256_of(src),
           "lines": [{"line": 3, "category": "device", "note": "torch.cuda.is_available()",
                      "text": "AVAILABLE = torch.cuda.is_available()"}]}
    (labels_dir / "cflearn__experiment.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.setattr(recall, "CORPUS_DIR", corpus)
    monkeypatch.setattr(recall, "SPLITS", {"dev": labels_dir.parent})
    labels = recall.load_all_labels("dev")
    found = recall.run_audit(labels, [sys.executable, "-m", "auditor.cli", "--no-cache"], [])
    assert ("cflearn/cflearn/dist/ml/experiment.py", 3) in {(f["path"], f["line"]) for f in found["findings"]}
    assert recall.score(labels, found)["per_category"]["device"]["found"] == 1


def test_tuned_t25a_files_are_exactly_what_its_rule_draws():
    """tuned_t25a (a twelfth tuning sample, its SELECTION.md): per code base, the first 4 files of its seeded pool of
    audited files with 2+ kernel / GPU-library lines; PhiFlow's and Brain-Cog's pools are empty: 27 files, 219 pairs."""
    labels = {(lf.package, lf.path): lf for lf in shipped("tuned_t25a")}
    if not all(lf.corpus_file.exists() for lf in labels.values()):
        pytest.skip("tuned_t25a corpus not fetched (python bench/recall.py --split tuned_t25a fetch)")
    spec = importlib.util.spec_from_file_location("draw_t25a", REPO / "bench" / "corpus_tuned_t25a" / "draw.py")
    draw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(draw)
    drawn = draw.drawn()
    assert len(drawn) == len(set(drawn)) == 27 and set(drawn) == set(labels)
    assert sum(len(ll.categories) for lf in labels.values() for ll in lf.lines.values()
               if "none" not in ll.categories) == 219


def test_with_tree_audits_the_whole_source_folder_and_scores_the_sampled_files(two_code_bases):
    # t26a: a file no label names (a setup.py that builds the extension the sampled file imports) is read as a
    # user's audit of the repository reads it; its own findings are audited but not scored
    top = recall.source_dir("ludwig", "0.10.4")
    (top / "setup.py").write_text("from torch.utils.cpp_extension import CUDAExtension\n"
                                  "ext = CUDAExtension('sparse_ops', ['sparse.cu'])\n")
    audit = [sys.executable, "-m", "auditor.cli"]
    whole = recall.run_audit(two_code_bases, audit, [], with_tree=True)
    paths = {f["path"] for f in whole["findings"]}
    assert "ludwig/setup.py" in paths and "ludwig/ludwig/distributed/deepspeed.py" in paths
    assert not list(top.rglob(".npu-audit-cache"))          # nothing written into the corpus
    r = recall.score(two_code_bases, whole)
    assert r["per_category"]["third_party"]["found"] == 1
    assert {u["file"] for u in r["unlabelled_flagged"]} == {"ludwig/ludwig/distributed/deepspeed.py"}


# --------------------------------------------------------------------------- first runs (session 47)

KINDS_SNIPPET = '''\
import logging
import torch

logger = logging.getLogger(__name__)


def setup(rank):
    """Move the model to CUDA device `rank` and set up NCCL."""
    # torch.cuda.set_device(rank) is done by the launcher
    if not torch.cuda.is_available():
        raise RuntimeError(
            "this script needs CUDA and NCCL")
    logger.info("using cuda:%d", rank)
    print(f"NCCL on cuda:{rank}")
    if rank < 0: raise ValueError(f"no cuda:{rank}")
    return torch.device("cuda", rank)
'''


def test_line_kind_reads_comments_docstrings_messages_and_code(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(KINDS_SNIPPET)
    kinds = {n: recall.line_kind(src, n) for n in (8, 9, 10, 12, 13, 14, 15, 16)}
    assert kinds == {8: "docstring", 9: "comment", 10: "code", 12: "message", 13: "message", 14: "message",
                     15: "message", 16: "code"}
    assert recall.line_kind(tmp_path / "absent.py", 1) == "unknown"
    (tmp_path / "bad.py").write_text("def broken(:\n    pass\n")
    assert recall.line_kind(tmp_path / "bad.py", 1) == "unknown"


def _record(found: dict[str, tuple[int, int]], none: int, flagged: list[dict]) -> dict:
    return {"default": {"tool": {"commit": "0" * 40, "changed": False}, "recorded": "2026-12-06 09:00 UTC",
                        "per_category": {c: {"found": f, "labelled": n} for c, (f, n) in found.items()},
                        "total": {"found": sum(f for f, _ in found.values()),
                                  "labelled": sum(n for _, n in found.values())},
                        "must_not_flag_lines": none, "flagged": flagged}}


def test_first_runs_pool_per_category_and_flagged_kinds(tmp_path, monkeypatch, capsys):
    folders = {}
    for name, record in {
        "testA": _record({"device": (98, 100), "kernel": (9, 10)}, 20,
                         [{"file": "a/x.py", "line": 3, "text": "env['CUDA_HOME'] = home", "codes": ["NPU001"],
                           "kind": "code"}]),
        "testB": _record({"device": (50, 50), "kernel": (18, 20), "third_party": (4, 5)}, 30, []),
    }.items():
        folder = tmp_path / f"corpus_{name}"
        folder.mkdir()
        (folder / recall.FIRST_RUN).write_text(json.dumps(record))
        folders[name] = folder
    folders["testC"] = tmp_path / "corpus_testC"          # a split with no first run recorded: left out
    folders["testC"].mkdir()
    monkeypatch.setattr(recall, "SPLITS", folders)
    pooled = recall.pool_first_runs()
    assert list(pooled["splits"]) == ["testA", "testB"]
    assert pooled["per_category"]["kernel"] == {"found": 27, "labelled": 30}
    assert pooled["per_category"]["third_party"] == {"found": 4, "labelled": 5}
    assert pooled["total"] == {"found": 179, "labelled": 185}
    assert pooled["must_not_flag_lines"] == 50 and pooled["flagged_by_kind"] == {"code": 1}
    assert recall.main(["first-runs"]) == 0
    out = capsys.readouterr().out
    assert "kernel" in out and "27/30" in out and "(code 1)" in out and "testC" not in out


def test_a_first_run_is_recorded_once_per_measure(tmp_path, monkeypatch):
    folder = tmp_path / "corpus_testA"
    folder.mkdir()
    monkeypatch.setattr(recall, "SPLITS", {"testA": folder})
    monkeypatch.setattr(recall, "tool_checkout", lambda cmd: {"commit": "a" * 40, "changed": False})
    src = tmp_path / "train.py"
    src.write_text(KINDS_SNIPPET)
    lf = recall.LabelledFile(labels_path=tmp_path / "l.yaml", package="pkg", version="1", path="train.py",
                             sha256="")
    monkeypatch.setattr(recall.LabelledFile, "corpus_file", property(lambda self: src))
    result = {"per_category": {c: {"labelled": 0, "found": 0} for c in recall.CATEGORIES},
              "total": {"labelled": 0, "found": 0}, "must_not_flag_lines": 2,
              "false_hits": [{"file": "pkg/train.py", "line": 9, "text": "# torch.cuda...", "codes": ["NPU001"]}]}
    result["per_category"]["device"] = {"labelled": 3, "found": 2}
    recall.record_first_run("testA", result, [lf], "default", ["audit"])
    held = json.loads((folder / recall.FIRST_RUN).read_text())["default"]
    assert held["per_category"] == {"device": {"labelled": 3, "found": 2}}
    assert held["flagged"][0]["kind"] == "comment" and held["tool"]["commit"] == "a" * 40
    with pytest.raises(recall.BenchError, match="already holds"):
        recall.record_first_run("testA", result, [lf], "default", ["audit"])
    recall.record_first_run("testA", result, [lf], "with_tree", ["audit"])     # the other measure: its own record
    with pytest.raises(recall.BenchError, match="needs the bench to run the audit"):
        recall.record_first_run("testA", result, [lf], "with_tree", None)
