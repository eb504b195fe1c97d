"""pd46 (session 30, project split test50): a launcher that writes another launcher (lang-seg's
fewshot_data/sbatch_run.sh: `print_append "export NCCL_DEBUG=INFO"` through a function whose body is
`echo $@ >> $SCRIPT`, SCRIPT a `.sh` file the generated Slurm job runs), NVIDIA-only monitoring pins
(jupyterlab-nvdashboard, py3nvml, nvsmi) and CUDA-extension packages installed from git (PyTorch-Encoding,
pointnet2_ops). Each with a control that is not flagged."""
from __future__ import annotations

from tests.test_project_t25d import _found
from tests.static_snippets import write_tree

SBATCH_RUN = """\
    #!/bin/bash
    EXP=hsnet
    NGPU=4
    JOB=fewshot_${EXP}
    SCRIPT_ROOT="sweep_scripts/${EXP}"
    mkdir -p $SCRIPT_ROOT

    function print_append {
        echo $@ >> $SCRIPT
    }

    function print_setup {
        SCRIPT="${SCRIPT_ROOT}/${JOB}.sh"
        echo "#!/bin/bash" > $SCRIPT
        print_append "source activate pytorch"
        print_append "export NCCL_DEBUG=INFO"
        print_append "export PYTHONFAULTHANDLER=1"
        echo "export NCCL_IB_DISABLE=1" >> $SCRIPT
        echo "export NCCL_SOCKET_IFNAME=eth0" >> "${SCRIPT_ROOT}/env.sh"
        echo "export NCCL_P2P_DISABLE=1 is written to the log"
        echo "export NCCL_ALGO=Ring" >> $LOGFILE
    }

    print_setup
    """


def test_export_written_into_a_generated_script(tmp_path):
    root = write_tree(tmp_path, {"fewshot_data/sbatch_run.sh": SBATCH_RUN})
    lines = {ln for ln, code in _found(root, "fewshot_data/sbatch_run.sh") if code == "NPU121"}
    assert {16, 18, 19} <= lines
    assert 20 not in lines          # a message: plain echo
    assert 21 not in lines          # LOGFILE: no script file known


def test_appender_to_a_log_is_not_a_launcher(tmp_path):
    script = """\
        #!/bin/bash
        LOG=train.log
        log() {
            echo "$@" >> $LOG
        }
        log "export NCCL_DEBUG=INFO was set by the caller"
        """
    root = write_tree(tmp_path, {"run.sh": script})
    assert not _found(root, "run.sh")


def test_nvidia_monitoring_pins(tmp_path):
    reqs = """\
        torch>=1.7
        jupyterlab
        jupyterlab-nvdashboard
        py3nvml==0.2.7
        nvsmi
        jupyterlab-git
        psutil
        """
    root = write_tree(tmp_path, {"requirements.txt": reqs})
    found = _found(root, "requirements.txt")
    assert {(3, "NPU440"), (4, "NPU440"), (5, "NPU440")} <= set(found)
    assert not [ln for ln, _ in found if ln in (2, 6, 7)]


def test_cuda_extension_packages_from_git(tmp_path):
    reqs = """\
        torch-encoding @ git+https://github.com/zhanghang1989/PyTorch-Encoding/@331ecdd5306104614cb414b16fbcd9d1a8d40e1e
        pointnet2_ops @ git+https://github.com/erikwijmans/Pointnet2_PyTorch.git#egg=pointnet2_ops&subdirectory=pointnet2_ops_lib
        encoding==0.1
        git+https://github.com/openai/CLIP.git
        """
    root = write_tree(tmp_path, {"requirements.txt": reqs})
    found = _found(root, "requirements.txt")
    assert {(1, "NPU360"), (2, "NPU360")} <= set(found)
    assert not [ln for ln, _ in found if ln in (3, 4)]


def test_exports_chained_into_a_profile_script(tmp_path):
    dockerfile = """\
        FROM nvcr.io/nvidia/cuda:12.4.0-cudnn9-devel-ubuntu22.04
        RUN echo "export NCCL_P2P_LEVEL=NVL" >> /etc/profile.d/cuda.sh && \\\\
            echo "export NCCL_IB_HCA=mlx5" >> /etc/profile.d/cuda.sh && \\\\
            echo "export NCCL_DEBUG=INFO" >> /etc/profile.d/cuda.sh
        RUN echo "export NCCL_LL_THRESHOLD=0" >> /etc/profile
        RUN echo "export NCCL_ALGO=Ring" >> /tmp/notes.txt
        """
    root = write_tree(tmp_path, {"docker/Dockerfile": dockerfile})
    lines = {ln for ln, code in _found(root, "docker/Dockerfile") if code == "NPU121"}
    assert lines == {2, 3, 4, 5}
