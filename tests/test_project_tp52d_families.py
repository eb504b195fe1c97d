"""Project-file families behind the misses on splits test148 / test149 (issue 15, session 52, helper tp52d; tuned
on them from then on). Each test is a realistic file with the lines that must be found and the lines that must
not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(name: str, text: str) -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    return [(f.line, f.code) for f in result.findings]


# a Hydra template config: the author left bare `TODO` lines where a section's keys go, which PyYAML rejects
# ("while scanning a simple key ... could not find expected ':'"); the settings around them are what a user who
# fills the template in runs
_TEMPLATE = """\
    defaults:
      - env_vars: env_vars
      - _self_

    seed: 42
    window_size: TODO
    batch_size: 1024

    device: {device}
    optim:
      lr: 5.5e-5

    env:
      TODO

    data:
      _target_: TODO
      TODO

    save_every: 10
    """


def test_template_config_with_bare_placeholder_lines_is_read_around_them():
    result = ENGINE.analyze_bytes(textwrap.dedent(_TEMPLATE.format(device="cuda")).encode(),
                                  "examples/configs/template/train_your_env.yaml")
    assert [(f.line, f.code) for f in result.findings] == [(9, "NPU019")]
    # still reported as broken, with the placeholder lines named
    assert result.error is not None and result.error.kind == "syntax" and "findings there are missing" in \
        result.error.message


def test_template_config_on_the_cpu_stays_quiet():
    assert _codes("examples/configs/template/train_your_env.yaml", _TEMPLATE.format(device="cpu")) == []
