"""tp55a (session 55, project test154 / test155): families the project-file readers missed on session 54's blind
splits test154 and test155, tuned on them from session 55. Each test is a realistic file with the lines that must be
found and the quiet lines beside them."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line

# a conda export of a code-model training env (conda-forge's CUDA compiler, split into the cuda-nvcc feedstock's
# outputs); the host compilers and a Jupyter plugin named for nvcc stay quiet
CONDA_EXPORT = """\
name: coder
channels:
  - conda-forge
  - defaults
dependencies:
  - binutils_linux-64=2.40=hbdbef99_2
  - cuda-nvcc=12.3.107=hcdd1206_1
  - cuda-nvcc-dev_linux-64=12.3.107=ha770c72_0
  - cuda-nvcc-impl=12.3.107=hd3aeb46_0
  - cuda-nvcc-tools=12.3.107=hd3aeb46_0
  - cuda-nvcc_linux-64=12.3.107=h8a487aa_1
  - gcc_linux-64=12.3.0=h76fc315_2
  - nvcc4jupyter=1.2.1
  - pip:
    - accelerate==0.25.0
"""


def test_conda_forge_cuda_nvcc_outputs(tmp_path):
    found = audit_file(tmp_path, "environment.yml", CONDA_EXPORT)
    for line in (7, 8, 9, 10, 11):
        assert codes_of_line(found, line) == {"NPU018"}, line
    for line in (6, 12, 13, 15):
        assert not codes_of_line(found, line), line


# a `pip freeze` of a Theano-era conda env: libgpuarray's Python binding pygpu (CUDA / OpenCL arrays); Theano itself,
# GPyTorch and Pygments stay quiet
FROZEN = """\
mkl-service==2.3.0
networkx==2.4
numpy==1.18.1
Pygments==2.6.1
pygpu==0.7.6
gpytorch==1.1.1
Theano==1.0.4
torch==1.4.0
"""

THEANO_ENV = """\
name: theano
channels:
  - conda-forge
dependencies:
  - python=3.7
  - theano=1.0.4
  - libgpuarray=0.7.6
  - pygpu=0.7.6
  - mako
"""


def test_pygpu_and_libgpuarray(tmp_path):
    found = audit_file(tmp_path, "requirements.txt", FROZEN)
    assert codes_of_line(found, 5) == {"NPU440"}
    for line in (1, 2, 3, 4, 6, 7):
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path, "environment.yml", THEANO_ENV)
    assert codes_of_line(found, 7) == {"NPU440"}
    assert codes_of_line(found, 8) == {"NPU440"}
    for line in (5, 6, 9):
        assert not codes_of_line(found, line), line


# an env setup script: the PyTorch spec (and a CUDA wheel pin) held in variables, installed by a quoted expansion;
# the assignments, echo text, a variable holding a path or several words, and one set from a command stay quiet
SETUP_ENV = """\
#!/bin/sh
pytorch_v="1.12"
PYTORCH_NIGHTLY=${PYTORCH_NIGHTLY:-0}
if [ "$PYTORCH_NIGHTLY" -eq 1 ]; then
  pytorch_v_arg="pytorch"
else
  pytorch_v_arg="pytorch=$pytorch_v"
fi
TORCH_WHEEL="torch==2.1.0+cu121"
EXTRAS="numpy scipy"
LOCAL_PKG=./third_party/pkg
BUILT=$(ls dist/*.whl)
echo "installing $pytorch_v_arg"
conda create -y -q -p "$env_path" \\
  python=3.9 \\
  "$pytorch_v_arg" \\
  torchaudio \\
  -c "pytorch$nightly" -c conda-forge
pip install "$TORCH_WHEEL"
pip install "$EXTRAS"
pip install "$LOCAL_PKG"
pip install "$BUILT"
"""


def test_install_word_from_a_variable_holding_a_spec(tmp_path):
    found = audit_file(tmp_path, "scripts/setup_env.sh", SETUP_ENV)
    assert codes_of_line(found, 16) == {"NPU011"}
    assert codes_of_line(found, 19) == {"NPU018"}
    for line in (5, 7, 9, 10, 11, 12, 13, 20, 21, 22):
        assert not codes_of_line(found, line), line
