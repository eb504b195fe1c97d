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


# PocketFlow's main.sh / run_local.sh: mpirun's options kept in a quoted variable that runs over several lines; Open
# MPI's `-x NAME=VALUE` exports the variable to every rank, as on the mpirun line itself
_MPI_SCRIPT = """\
    #!/bin/bash
    if [ ${NB_GPUS} -eq 1 ]; then
      python main.py --log_dir ${LOG_DIR}
    else
      options="-np ${NB_GPUS} -H localhost:${NB_GPUS} -bind-to none -map-by slot
          -x NCCL_DEBUG=INFO -x NCCL_SOCKET_IFNAME=eth1 -x NCCL_IB_DISABLE=1
          -x LD_LIBRARY_PATH --mca btl_tcp_if_include eth1"
      mpirun ${options} python main.py --enbl_multi_gpu
    fi
    """


def test_mpirun_options_held_in_a_multiline_variable_export_nccl_variables():
    result = ENGINE.analyze_bytes(textwrap.dedent(_MPI_SCRIPT).encode(), "scripts/run_local.sh")
    nccl = sorted((f.line, f.col, f.symbol) for f in result.findings if "NCCL_" in f.symbol)
    assert [(ln, sym) for ln, _, sym in nccl] == [(6, "NCCL_DEBUG"), (6, "NCCL_SOCKET_IFNAME"), (6, "NCCL_IB_DISABLE")]
    line = textwrap.dedent(_MPI_SCRIPT).splitlines()[5]
    assert all(line[c - 1:].startswith(sym) for _, c, sym in nccl)      # each at its own column


def test_options_variable_that_mpirun_does_not_expand_stays_quiet():
    script = _MPI_SCRIPT.replace("mpirun ${options}", "echo ${options}")
    assert [c for ln, c in _codes("scripts/run_local.sh", script) if ln == 6] == []
