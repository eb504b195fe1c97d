"""Project-file families of t15p (issue 15, tuned on project test13): CUDA-only 3D / inference packages, a CUDA
local version under `>=`, platform branches of install scripts (`case $PLATFORM in cuda) ... hip) ... cpu)`), and
the bare `--use_flash 1` switch. Realistic snippets written for these tests, each with the lines that stay quiet."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def audit(name: str, text: str) -> list[tuple[str, int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol, f.severity) for f in result.findings]


def lines(found) -> set[int]:
    return {line for _, line, _, _ in found}


def test_cuda_only_3d_and_inference_packages_in_requirements_docker_and_notebooks():
    found = audit("requirements.txt", """\
        lightning==2.0.0
        omegaconf==2.3.0
        git+https://github.com/KAIR-BAIR/nerfacc.git@v0.5.2
        kaolin==0.15.0
        mistral_inference>=1.3.1
        imageio[ffmpeg]
        """)
    assert lines(found) == {3, 4, 5}
    assert {code for code, *_ in found} == {"NPU440"}
    assert any(sym == "url:github.com/kair-bair/nerfacc" for _, _, sym, _ in found)
    docker = audit("Dockerfile", """\
        FROM python:3.10-slim
        RUN pip install --no-cache-dir lightning==2.0.0 omegaconf
        RUN pip install git+https://github.com/KAIR-BAIR/nerfacc.git@v0.5.2
        """)
    assert lines(docker) == {3}


def test_kaolin_from_its_cuda_wheel_page_is_also_the_package():
    found = audit("install.sh", """\
        #!/bin/bash
        pip install kaolin -f https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.4.0_cu121.html
        pip install trimesh
        """)
    assert {code for code, line, *_ in found if line == 2} >= {"NPU440"}
    assert 3 not in lines(found)


def test_cuda_local_version_under_a_range_operator():
    found = audit("requirements.txt", "torch>=2.6.0+cu124\ntorchvision>=0.21.0\nnumpy>=1.24+local\n")
    assert [(code, line, sym) for code, line, sym, _ in found] == [("NPU018", 1, "torch+cu124")]


SETUP = """\
    #!/bin/bash
    PLATFORM=$(python -c "import torch; print(('cuda' if torch.version.cuda else 'hip') if torch.cuda.is_available() else 'cpu')")
    case $PLATFORM in
        cuda)
            CUDA_VERSION=$(python -c "import torch; print(torch.version.cuda)")
            echo "CUDA $CUDA_VERSION"
            ;;
        hip)
            HIP_VERSION=$(python -c "import torch; print(torch.version.hip)")
            ;;
        cpu)
            unset FORCE_CUDA
            export CUDA_VISIBLE_DEVICES=
            ;;
    esac
    if [ "$PLATFORM" = "cuda" ] ; then
        pip install flash-attn
    elif [ "$PLATFORM" = "hip" ] ; then
        git clone --recursive https://github.com/ROCm/flash-attention.git /tmp/extensions/flash-attention
        cd /tmp/extensions/flash-attention
        GPU_ARCHS=gfx942 python setup.py install
        pip install xformers==0.0.28 --index-url https://download.pytorch.org/whl/rocm6.1
    fi
    export FORCE_CUDA=1
    """


def test_other_platform_branches_are_not_what_a_port_edits():
    found = audit("setup.sh", SETUP)
    # the probe (line 2) and the CUDA branch's install (17) stay; the CUDA arm's version read (5), the hip branches
    # (9, 19-22) and the cpu arm (12-13) do not
    assert {2, 17, 24} <= lines(found)
    assert lines(found).isdisjoint({5, 9, 12, 13, 19, 20, 21, 22})


def test_same_lines_outside_any_platform_branch_keep_their_findings():
    found = audit("setup.sh", """\
        #!/bin/bash
        CUDA_VERSION=$(python -c "import torch; print(torch.version.cuda)")
        export CUDA_VISIBLE_DEVICES=0
        pip install flash-attn
        case $MODE in
            train) pip install xformers ;;
        esac
        """)
    assert {2, 3, 4, 6} <= lines(found)


def test_bare_use_flash_switch_on_a_launch_line():
    found = audit("profile.sh", """\
        model_name="huggyllama/llama-7b"
        torchrun --nproc_per_node 2 memory_peft.py \\
          --model_name ${model_name} --use_flash 1 --pp_size 2
        torchrun --nproc_per_node 2 memory_peft.py --model_name ${model_name} --use_flash 0
        # torchrun memory_peft.py --use_flash 1
        """)
    assert [(code, line) for code, line, *_ in found if code == "NPU363"] == [("NPU363", 3)]


def test_cuda_implementation_values_in_a_render_config():
    found = audit("configs/textured-mesh.yaml", """\
        name: "textured-mesh"
        system_type: "texture-system"
        system:
          geometry_type: "tetrahedra-sdf-grid"
          renderer_type: "nvdiff-rasterizer"
          renderer:
            context_type: cuda
          exporter_type: "mesh-exporter"
          exporter:
            fmt: obj
            context_type: cuda
          background:
            color_type: cuda_like_gray
          trainer:
            precision: 16-mixed
        """)
    assert [(code, line) for code, line, *_ in found if code in ("NPU055", "NPU441")] == [
        ("NPU441", 5), ("NPU055", 7), ("NPU055", 11)]
    assert 13 not in lines(found)


def test_a_line_shared_with_another_branch_keeps_its_findings():
    # one-line arms and branches: the CUDA half on the same line is still reported
    found = audit("run.sh", """\
        case $PLATFORM in cpu) export CUDA_VISIBLE_DEVICES= ;; cuda) export CUDA_VISIBLE_DEVICES=0 ;; esac
        if [ "$PLATFORM" = "hip" ]; then pip install flash-attn; else pip install xformers; fi
        if [[ $PLATFORM == rocm ]]; then
            pip install flash-attn
        elif [[ $PLATFORM == cuda ]]; then
            pip install xformers
        fi
        """)
    assert {1, 2, 6} <= lines(found)
    assert 4 not in lines(found)
