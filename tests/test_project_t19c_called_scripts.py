"""Lines that run another script of the tree (t19c, issue 15): a small Gaussian-splatting tree written the way
Scaffold-GS is (`train_mip360.sh` runs `./train.sh` per scene; `train.sh` runs `python train.py`, whose renderer imports
a CUDA rasteriser at module level), and a notebook that runs the same training script with IPython's `%run`."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from static_snippets import tree_codes_by_line


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "scaffold"
    _write(root, "gaussian_renderer/__init__.py", """\
        import torch
        from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer


        def render(viewpoint_camera, pc, bg_color):
            settings = GaussianRasterizationSettings(image_height=int(viewpoint_camera.image_height), bg=bg_color)
            return GaussianRasterizer(raster_settings=settings)
        """)
    _write(root, "train.py", """\
        import os
        import sys
        from argparse import ArgumentParser

        from gaussian_renderer import render


        if __name__ == "__main__":
            parser = ArgumentParser(description="Training script parameters")
            parser.add_argument("--gpu", type=str, default="-1")
            args = parser.parse_args(sys.argv[1:])
            os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
        """)
    _write(root, "train.sh", """\
        while [[ "$#" -gt 0 ]]; do
            case $1 in
                -d|--data) data="$2"; shift ;;
                --gpu) gpu="$2"; shift ;;
                *) echo "Unknown parameter passed: $1"; exit 1 ;;
            esac
            shift
        done

        python train.py --eval -s data/${data} --gpu ${gpu}
        """)
    _write(root, "preview.sh", """\
        python -c "import sys; print(sys.argv)" "$@"
        """)
    _write(root, "train_mip360.sh", """\
        exp_name='baseline'
        # ./train.sh -d mipnerf360/garden --gpu 0
        ./train.sh -d mipnerf360/bicycle -l ${exp_name} --gpu -1 &
        sleep 20s
        bash train.sh -d mipnerf360/bonsai --gpu -1
        ./preview.sh -d mipnerf360/bonsai
        ./missing.sh -d mipnerf360/bonsai
        echo "./train.sh -d mipnerf360/room"
        """)
    return root


def test_a_line_running_a_script_of_the_tree_gets_its_launch_findings(tmp_path):
    by_line = tree_codes_by_line(_tree(tmp_path), "train_mip360.sh")
    # `./train.sh` and `bash train.sh`: train.sh's `python train.py` line fails at import (the rasteriser); not the
    # comment, not a script whose launch is fine, not a script the tree lacks, not echo'd text
    assert "NPU827" in by_line.get(3, set()) and "NPU827" in by_line.get(5, set()), by_line
    assert not any("NPU827" in by_line.get(n, set()) for n in (2, 6, 7, 8)), by_line


def test_the_called_script_itself_keeps_its_own_launch_finding(tmp_path):
    assert "NPU827" in tree_codes_by_line(_tree(tmp_path), "train.sh").get(10, set())


def test_the_runner_reports_the_calling_line_once_with_the_called_line_in_its_message(tmp_path):
    from auditor.runner import run_static

    run = run_static([_tree(tmp_path)], jobs=1)
    got = [f for r in run.results if r.path.endswith("train_mip360.sh") for f in r.findings if f.code == "NPU827"]
    assert sorted(f.line for f in got) == [3, 5], got
    assert "train.sh:10" in got[0].message and got[0].data["called_script"] == "train.sh", got[0]


def test_a_notebook_run_magic_is_read_as_a_launch(tmp_path):
    root = _tree(tmp_path)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["Run `%run train.py` below"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import os\n", "%run train.py --gpu 0 \\\n", "    -s data/garden\n", "%run -m json.tool x.json\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["!python train.py -s data/bonsai\n", "# %run train.py\n", "%time x = 1\n"]},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "Train.ipynb").write_text(json.dumps(notebook))
    by_line = tree_codes_by_line(root, "Train.ipynb")
    # line counts run through the code cells: 1 `import os`, 2 `%run train.py`, 4 `%run -m`, 5 `!python`, 6 the
    # comment, 7 another magic
    assert "NPU827" in by_line.get(2, set()) and "NPU827" in by_line.get(5, set()), by_line
    assert not any("NPU827" in by_line.get(n, set()) for n in (1, 3, 4, 6, 7)), by_line


def test_a_run_magic_finding_keeps_the_notebooks_own_columns(tmp_path):
    from auditor.project.tree_calls import apply_tree_calls
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    root = _tree(tmp_path)
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                           "source": ["%run train.py --gpu 0\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "Run.ipynb").write_text(json.dumps(notebook))
    rules = load_rules()
    engine = StaticEngine(rules)
    result = engine.analyze_bytes((root / "Run.ipynb").read_bytes(), "Run.ipynb")
    apply_tree_calls([result], root, rules, lambda: engine.analyze_bytes)
    launch = next(f for f in result.findings if f.code == "NPU827")
    # on `train.py`, columns 6 to 14 of `%run train.py --gpu 0`
    assert (launch.line, launch.col, launch.end_col) == (1, 6, 14), launch


def test_an_argument_list_in_a_config_is_read_as_the_programs_options():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine
    from static_snippets import line_codes

    engine = StaticEngine(load_rules())
    text = """\
        steps:
          - name: colmap_feature_extractor
            app: colmap
            command_args: [feature_extractor, --database_path, db.db,
                           --SiftExtraction.use_gpu, "0"]
          - name: colmap_exhaustive_matcher
            app: colmap
            command_args:
              - exhaustive_matcher
              - --SiftMatching.gpu_index
              - "${gpusIndices}"
          - name: colmap_patch_match_stereo
            command_args: ["patch_match_stereo", "--PatchMatchStereo.gpu_index=0,1"]
        description: "--SiftMatching.gpu_index 0 needs CUDA"
        """
    got = line_codes(engine, "configs/colmap_steps.yaml", text)
    assert (10, "NPU086") in got and (13, "NPU087") in got, got
    assert not [c for ln, c in got if c in ("NPU086", "NPU087") and ln not in (10, 13)], got


def test_a_dotted_optimizer_type_in_a_sat_config_is_read_as_the_class_it_builds():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine
    from static_snippets import line_codes

    engine = StaticEngine(load_rules())
    text = """\
        deepspeed:
          bf16:
            enabled: False
          optimizer:
            type: sat.ops.FusedEmaAdam
            params:
              lr: 1e-5
        scheduler:
          type: WarmupDecayLR
        model:
          type: sat.model.BaseModel
        """
    got = line_codes(engine, "configs/sft.yaml", text)
    assert (5, "NPU438") in got, got
    assert not [ln for ln, _ in got if ln in (9, 11)], got


def test_a_conda_archive_of_a_cuda_build_is_reported_and_a_cpu_one_is_not():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine
    from static_snippets import line_codes

    engine = StaticEngine(load_rules())
    text = """\
        conda create -n mvdust3r python=3.12 cmake=3.14.0 -y
        wget https://anaconda.org/pytorch3d/pytorch3d/0.7.8/download/linux-64/pytorch3d-0.7.8-py312_cu121_pyt241.tar.bz2
        conda install pytorch3d-0.7.8-py312_cu121_pyt241.tar.bz2
        conda install -y ./pytorch3d-0.7.8-py312_cpu_pyt241.tar.bz2
        """
    got = line_codes(engine, "install.sh", text)
    assert (3, "NPU440") in got, got
    assert not [ln for ln, c in got if c == "NPU440" and ln != 3], got
