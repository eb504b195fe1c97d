"""Project-file families behind the misses on splits test151 / test152 (issue 15, session 54, helper tp54a; tuned on
them from then on). Each test is a realistic file with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(name: str, text: str) -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    return [(f.line, f.code) for f in result.findings]


# a federated-learning sweep: the FedProx loop's `--mu=$mu` lost its `\`, so bash runs the lines after it as a
# command named `--comm_round=50` (the options glued to their `\` are still options: bash drops the `\`+newline and
# the next line's indent separates the words); the device they select is what a port changes all the same
_SWEEP = """\
    for partition in noniid-labeldir iid-diff-quantity
    do
    \tfor mu in 0.001 0.01 0.1 1
    \tdo
    \t\tpython experiments.py --model=mlp \\
    \t\t\t--dataset=$dataset \\
    \t\t\t--alg=fedprox \\
    \t\t\t--mu=$mu
    \t\t\t--comm_round=50 \\
    \t\t\t--partition=$partition \\
    \t\t\t--beta=0.5\\
    \t\t\t--device='{device}'\\
    \t\t\t--datadir='./data/' \\
    \t\t\t--init_seed=$init_seed
    \tdone
    done
    """


def test_options_after_a_lost_continuation_backslash_are_read():
    assert _codes("scripts/fedprox.sh", _SWEEP.format(device="cuda:0")) == [(12, "NPU019")]
    # the same with Windows line ends (the scripts were saved with CRLF)
    crlf = textwrap.dedent(_SWEEP.format(device="cuda:0")).replace("\n", "\r\n").encode()
    assert [(f.line, f.code) for f in ENGINE.analyze_bytes(crlf, "scripts/fedprox.sh").findings] == [(12, "NPU019")]


def test_options_after_a_lost_continuation_backslash_on_the_cpu_stay_quiet():
    assert _codes("scripts/fedprox.sh", _SWEEP.format(device="cpu")) == []
    # a variable assignment is no option: `DEVICE=cuda:0` alone sets a shell variable no command reads
    assert _codes("scripts/env.sh", "MODE=eval\npython eval.py --mode $MODE\n") == []


# 3D human-motion trees: `conda env export` of an environment where DROID-SLAM was built from its submodule; pip's
# freeze lists what DROID-SLAM's setup.py installed (`droid_backends`, no version: 0.0.0; `lietorch` 0.2), both CUDA
# extensions, and no PyPI release provides `droid-backends`
_FROZEN_ENV = """\
    name: motion
    channels:
      - defaults
    dependencies:
      - python=3.10.13
      - pip:
        - chumpy==0.70
        - droid-backends==0.0.0
        - einops==0.7.0
        - lietorch==0.2
        - smplx==0.1.28
    """


def test_frozen_droid_slam_extensions_in_an_environment_are_kernels():
    found = _codes("env_build.yaml", _FROZEN_ENV)
    assert found == [(8, "NPU360"), (10, "NPU360")]


def test_frozen_environment_without_cuda_extensions_stays_quiet():
    assert _codes("env_build.yaml", _FROZEN_ENV.replace("    - droid-backends==0.0.0\n", "")
                  .replace("    - lietorch==0.2\n", "")) == []


_DROID_INSTALL = """\
    #!/usr/bin/env bash
    set -e
    pip install -r requirements.txt
    pip install -e .

    # install DROID-SLAM
    cd {folder}
    python setup.py install
    cd ../..
    """


def test_setup_py_install_in_a_droid_slam_checkout_is_a_kernel_build():
    found = _codes("install.sh", _DROID_INSTALL.format(folder="third-party/DROID-SLAM"))
    assert (8, "NPU360") in found


def test_setup_py_install_of_another_folder_stays_quiet():
    assert _codes("install.sh", _DROID_INSTALL.format(folder="third-party/ViTPose")) == []


# a conda environment file without `channels:` (conda then takes the configured channels): still an environment
_NO_CHANNELS = """\
    name: hmr
    dependencies:
      - opencv
      - {tf}
      - vispy
      - pyqt
    """


def test_environment_file_without_channels_is_read_as_one():
    assert _codes("hmr.yml", _NO_CHANNELS.format(tf="tensorflow-gpu")) == [(4, "NPU440")]


def test_environment_file_without_channels_on_cpu_and_other_dependency_lists_stay_quiet():
    assert _codes("hmr.yml", _NO_CHANNELS.format(tf="tensorflow")) == []
    # a Helm chart's `dependencies:` are mappings, not package specs: not a conda environment
    chart = """\
        apiVersion: v2
        name: inference
        version: 0.1.0
        dependencies:
          - name: gpu-operator
            version: v23.9.1
            repository: https://helm.ngc.nvidia.com/nvidia
        """
    # (read as a config: NVIDIA's Helm repository is the one finding, as before)
    assert _codes("Chart.yaml", chart) == [(7, "NPU017")]
