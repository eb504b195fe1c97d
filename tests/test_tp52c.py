"""tp52c (session 52, project test150): families the project-file readers missed on session 51's project split
test150 (offline RL, LLM serving, distillation trees). Recall: Ubuntu's NVIDIA driver package folders on a library
path (`/usr/lib/nvidia-384`, `/usr/lib/nvidia`, NPU075). Quiet: an `if [ -d FOLDER ]` test whose branch then names
that folder (the branch's line is the finding). Shaped on D4RL's mujoco Dockerfile, XQL's setup script and mujoco-py's
documented GPU rendering setup; each with controls (comments, messages, other folders)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes


MUJOCO_DOCKERFILE = """\
FROM ubuntu:16.04
RUN apt-get update && apt-get install -y libosmesa6-dev libgl1-mesa-glx libglfw3
RUN DEBIAN_FRONTEND=noninteractive apt-get -qy install nvidia-384; exit 0
ENV LD_LIBRARY_PATH ${LD_LIBRARY_PATH}:/usr/lib/nvidia-384
ENV LD_LIBRARY_PATH /root/.mujoco/mujoco210/bin:${LD_LIBRARY_PATH}
# ENV LD_LIBRARY_PATH ${LD_LIBRARY_PATH}:/usr/lib/nvidia-384
RUN echo "see /usr/lib/nvidia-cuda-toolkit"
"""


def test_ubuntu_driver_package_folder_on_the_library_path(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", MUJOCO_DOCKERFILE)
    assert "NPU075" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (5, 6, 7))


RENDER_SETUP = """\
#!/bin/bash
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$HOME/.mujoco/mujoco210/bin
if [ -d "/usr/lib/nvidia" ]; then
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/nvidia
fi
# export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/nvidia
echo "add /usr/lib/nvidia to LD_LIBRARY_PATH for GPU rendering"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/x86_64-linux-gnu
"""


def test_driver_folder_export_and_its_guard(tmp_path):
    found = audit_file(tmp_path, "setup_shell.sh", RENDER_SETUP)
    assert "NPU075" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (2, 3, 6, 7, 8))


CUDA_PICK = """\
#!/bin/bash
if [ -d "/usr/local/cuda-11.3" ]; then
    export PATH=/usr/local/cuda-11.3/bin:$PATH
elif [[ -d /usr/local/cuda-10.2 ]]; then
    export PATH=/usr/local/cuda-10.2/bin:$PATH
elif [ -d "/usr/local/cuda" ]; then
    export PATH=/usr/local/cuda/bin:$PATH
    echo "Using default CUDA."
fi
"""

CUDA_TEST_ONLY = """\
#!/bin/bash
if [ -d "/usr/local/cuda-11.3" ]; then
    echo "CUDA 11.3 found"
    USE_GPU=1
fi
if [ -d /usr/local/cuda ] && [ -x "$(command -v nvcc)" ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi
"""


def test_folder_test_that_picks_the_export_is_quiet(tmp_path):
    found = audit_file(tmp_path, "setup.sh", CUDA_PICK)
    for line in (3, 5, 7):
        assert "NPU027" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (2, 4, 6, 8))


def test_folder_test_without_its_folder_in_the_branch_keeps_its_finding(tmp_path):
    # the test is the only place the folder is named: it is the probe that changes (and a list of tests is not one
    # test_command condition: `[ -d ... ] && [ -x ... ]`)
    found = audit_file(tmp_path, "probe.sh", CUDA_TEST_ONLY)
    assert "NPU027" in codes_of_line(found, 2)
    assert "NPU027" in codes_of_line(found, 7)
