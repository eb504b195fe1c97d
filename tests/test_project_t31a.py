"""t31a (session 31, project split test52): conda-build recipes and bootstrap.pytorch's `misc.cuda` switch.

- a conda-build variant file (`conda_build_config.yaml`, graphvite's) lists the CUDA toolkit versions the package is
  built for: each version is a finding, the key line and `None` (conda-forge's CPU variant) are not;
  `pin_run_as_build: cudatoolkit:` is;
- a conda-build recipe (`meta.yaml`, Jinja over YAML) names CUDA packages in its requirement lists (`cudatoolkit
  {{ cudatoolkit }}`, `{{ compiler('cuda') }}`, `nvcc_linux-64`, `__cuda`), also under `outputs:`; a project's own
  `meta.yaml` that is no recipe and a CPU-only recipe are quiet;
- bootstrap.pytorch's `misc: {cuda: True}` is read by the library (`model.cuda()`), so it is reported in a tree that
  imports bootstrap; in a tree that reads the key itself it is a boolean device option (lead decision 25).
"""
from __future__ import annotations

from pathlib import Path

from tests.test_project_t23c import ENGINE, _codes, _tree
from tests.static_snippets import line_codes

# graphvite conda/conda_build_config.yaml
GRAPHVITE_VARIANTS = """\
    cxx_compiler_version:
      - 5.4

    python:
      - 2.7
      - 3.6

    cudatoolkit:
      - 9.2
      - 10.0
      - 10.1

    pin_run_as_build:
      cudatoolkit:
        max_pin: x.x
    """

# conda-forge feedstock variants (a CPU build beside the CUDA ones)
FEEDSTOCK_VARIANTS = """\
    cuda_compiler:
      - nvcc                 # [linux64]
    cuda_compiler_version:
      - None
      - 11.8                 # [linux64]
      - 12.0                 # [linux64]
    cxx_compiler_version:
      - 12
    zip_keys:
      - - cuda_compiler_version
        - cxx_compiler_version
    """


def test_each_cuda_toolkit_variant_is_a_finding():
    assert line_codes(ENGINE, "conda/conda_build_config.yaml", GRAPHVITE_VARIANTS) == [
        (9, "NPU018"), (10, "NPU018"), (11, "NPU018"), (14, "NPU018")]


def test_the_cpu_variant_and_the_key_names_of_zip_keys_are_quiet():
    assert line_codes(ENGINE, "recipe/conda_build_config.yaml", FEEDSTOCK_VARIANTS) == [
        (2, "NPU018"), (5, "NPU018"), (6, "NPU018")]


def test_variants_of_other_packages_are_quiet():
    assert line_codes(ENGINE, "conda_build_config.yaml", "python:\n  - 3.10\nnumpy:\n  - 1.26\n") == []


# graphvite conda/graphvite/meta.yaml, cut down, with a conda-forge style output
RECIPE = """\
    {% set version = "0.2.2" %}
    package:
      name: graphvite
      version: {{ version }}

    requirements:
      build:
        - cmake >=3.12
        - {{ compiler("cxx") }}
        - {{ compiler('cuda') }}    # [cuda_compiler_version != "None"]
        - nvcc_linux-64 {{ cudatoolkit }}
        - cudatoolkit {{ cudatoolkit }}
      host:
        - python {{ python }}
        {{ environ.get('CONDA_CUDATOOLKIT_CONSTRAINT') }}
        - numpy {{ numpy }}
      run:
        - glog
        - {{ pin_compatible('cudatoolkit', max_pin='x.x') }}
        - __cuda >=11.8
        - pytorch

    outputs:
      - name: libgraphvite
        requirements:
          run:
            - cuda-version >=12.0,<13
            - mkl >=2018

    build:
      string: "py{{ python|replace('.', '') }}cuda{{ cudatoolkit|replace('.', '') }}"
    """


def test_a_recipe_s_cuda_requirements_are_findings():
    assert line_codes(ENGINE, "conda/graphvite/meta.yaml", RECIPE) == [
        (10, "NPU018"), (11, "NPU018"), (12, "NPU018"), (19, "NPU018"), (20, "NPU018"), (21, "NPU011"),
        (27, "NPU018")]


def test_a_cpu_recipe_is_quiet():
    text = "package:\n  name: tool\n  version: {{ version }}\nrequirements:\n  run:\n    - numpy\n    - {{ pin_compatible('numpy') }}\n"
    assert line_codes(ENGINE, "recipe/meta.yaml", text) == []


def test_a_meta_yaml_that_is_no_recipe_is_read_as_a_config():
    # NCLaw's `experiments/configs/.../meta.yaml`: a config of its own; its device key is NPU019 as in any config
    text = "name: elasticity\ndevice: cuda\nrequirements: none\n"
    assert line_codes(ENGINE, "configs/material/meta.yaml", text) == [(2, "NPU019")]


BOOTSTRAP_OPTIONS = """\
    exp:
      dir: logs/vqa2/block
      resume:
    misc:
      logs_name:
      cuda: True
      seed: 1337
    """

BLOCK_FACTORY = """\
    from bootstrap.lib.options import Options
    from block.datasets.vqa2 import VQA2


    def factory(engine=None):
        opt = Options()['dataset']
        return VQA2(dir_data=opt['dir'], batch_size=opt['batch_size'], pin_memory=Options()['misc.cuda'])
    """

OWN_READER = """\
    import torch
    import yaml


    def main(path):
        cfg = yaml.safe_load(open(path))
        device = torch.device("cuda" if cfg['misc']['cuda'] and torch.cuda.is_available() else "cpu")
        return device, cfg['misc']['seed']
    """


def test_bootstrap_s_cuda_switch_is_a_finding_in_a_tree_built_on_bootstrap(tmp_path: Path):
    root = _tree(tmp_path, {"block/options/vqa2/abstract.yaml": BOOTSTRAP_OPTIONS,
                            "block/datasets/factory.py": BLOCK_FACTORY})
    assert _codes(root, "block/options/vqa2/abstract.yaml") == [(6, "NPU019")]


def test_the_same_switch_read_by_the_tree_s_own_code_is_a_boolean_option(tmp_path: Path):
    root = _tree(tmp_path, {"configs/train.yaml": BOOTSTRAP_OPTIONS, "train.py": OWN_READER})
    assert _codes(root, "configs/train.yaml") == []


def test_the_switch_turned_off_is_quiet(tmp_path: Path):
    root = _tree(tmp_path, {"options/abstract.yaml": BOOTSTRAP_OPTIONS.replace("True", "False"),
                            "factory.py": BLOCK_FACTORY})
    assert _codes(root, "options/abstract.yaml") == []


def test_the_library_s_own_tree_keeps_its_gated_calls(tmp_path: Path):
    # Cadene/bootstrap.pytorch itself: `if Options()['misc']['cuda']: model.cuda()` is the tree's own finding
    factory = ("from bootstrap.lib.options import Options\n\n\ndef factory(model):\n"
               "    if Options()['misc']['cuda']:\n        model.cuda()\n    return model\n")
    root = _tree(tmp_path, {"bootstrap/options/abstract.yaml": BOOTSTRAP_OPTIONS,
                            "bootstrap/models/factory.py": factory, "bootstrap/__init__.py": ""})
    assert _codes(root, "bootstrap/options/abstract.yaml") == []


def test_nvidia_libraries_named_as_conda_packages():
    # faiss-gpu-cuvs / cupy recipes: RAPIDS' C++ library and cuTENSOR; the run_constrained pins install nothing
    text = """\
        package:
          name: faiss-gpu-cuvs
        requirements:
          host:
            - libcuvs =26.06
            - cutensor ~=2.0
          run_constrained:
            - {{ pin_compatible('cutensor') }}
            - __cuda >=12.0
        """
    assert line_codes(ENGINE, "conda/faiss-gpu-cuvs/meta.yaml", text) == [(5, "NPU440"), (6, "NPU018")]
