"""Rule files are named for what their rules are about, never for the helper or session that wrote them
(rules/README.md; h24b renamed the 42 that were, session 24)."""
from __future__ import annotations

import re

from auditor.data import rules_dir

# `recall_t14o.yaml`, `kernel_s15e.yaml`, `recall_pd10.yaml`, `static_t21a.yaml`: a helper's or session's tag
_HELPER_TAG_RE = re.compile(r"(?:^|_)(?:t\d+[a-z]?|s\d+[a-z]?|pd\d+|h\d+[a-z]?)$")


def test_no_rule_file_is_named_for_its_writer():
    tagged = sorted(p.name for p in rules_dir().glob("*.yaml") if _HELPER_TAG_RE.search(p.stem))
    assert not tagged, f"name these for their rules' topic (rules/README.md): {tagged}"


def test_the_renamed_files_are_listed_in_the_readme():
    readme = (rules_dir() / "README.md").read_text(encoding="utf-8")
    for old, new in re.findall(r"^\| `(\w+\.yaml)` \| `(\w+\.yaml)` \|$", readme, re.M):
        assert (rules_dir() / new).is_file() and not (rules_dir() / old).exists(), (old, new)
