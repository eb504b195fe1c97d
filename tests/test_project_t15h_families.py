"""Project-file families left on every split (issue 15, t15h): the NVIDIA driver installed or mounted by a
Kubernetes manifest (GKE's driver installer DaemonSet: its image, host folder and mounts), the driver's folders in
scripts and notebooks (`ldconfig /usr/lib64-nvidia`), scripts named for installing CUDA run from CI (bash and
PowerShell steps), and a CUDA-build skip switch set to skip. Each test is a realistic file with the lines that must
be found and the lines that must not (none is copied from a bench split's trees)."""
from __future__ import annotations

import json
import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def severities(name: str, text: str) -> dict[tuple[int, str], str]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    return {(f.line, f.code): f.severity for f in result.findings}


DAEMONSET = """\
    # Installs the NVIDIA driver on every GPU node (see cos-gpu-installer).
    # The driver lands in /home/kubernetes/bin/nvidia on the host.
    apiVersion: apps/v1
    kind: DaemonSet
    metadata:
      name: gpu-driver-installer
      namespace: kube-system
    spec:
      selector:
        matchLabels:
          app: gpu-driver-installer
      template:
        metadata:
          labels:
            app: gpu-driver-installer
        spec:
          tolerations:
          - operator: Exists
          volumes:
          - name: driver-host
            hostPath:
              path: /home/kubernetes/bin/nvidia
          - name: dev
            hostPath:
              path: /dev
          initContainers:
          - name: installer
            image: cos-nvidia-installer:latest
            securityContext:
              privileged: true
            env:
            - name: NVIDIA_INSTALL_DIR_HOST
              value: /home/kubernetes/bin/nvidia
            - name: NVIDIA_INSTALL_DIR_CONTAINER
              value: /usr/local/nvidia
            - name: ROOT_MOUNT_DIR
              value: /root
            - name: NVIDIA_DRIVER_CAPABILITIES
              value: compute,utility
            volumeMounts:
            - name: driver-host
              mountPath: /usr/local/nvidia
            - name: dev
              mountPath: /dev
          containers:
          - name: pause
            image: registry.k8s.io/pause:3.9
    """


def test_gke_driver_installer_daemonset():
    got = found("deploy/k8s/driver-installer.yaml", DAEMONSET)
    sev = severities("deploy/k8s/driver-installer.yaml", DAEMONSET)
    # the installer image (error), the host folder, the folders passed to the installer and the mount (info)
    assert (28, "NPU074") in got and sev[(28, "NPU074")] == "error"
    for line in (22, 33, 35, 42):
        assert (line, "NPU075") in got, (line, got)
        assert sev[(line, "NPU075")] == "info"
    # the installer's own variable names are not CUDA-stack variables: the finding is on their values
    assert not [c for ln, c in got if ln in (32, 34)], got
    # a variable the NVIDIA container runtime reads keeps its finding; comments, /dev, /root and pause give none
    assert {c for ln, c in got if ln == 38} == {"NPU004"}, got
    assert not [c for ln, c in got if ln in (1, 2, 25, 37, 46, 48)], got
    # the registry's installer image (`cos-gpu-installer`) is a GPU image by name already (NPU016, also an error)
    other = DAEMONSET.replace("cos-nvidia-installer:latest", "gcr.io/cos-cloud/cos-gpu-installer:v2.1.9")
    assert severities("deploy/k8s/driver-installer.yaml", other).get((28, "NPU016")) == "error"


def test_amd_and_ascend_device_plugins_are_not_driver_findings():
    manifest = """\
        apiVersion: apps/v1
        kind: DaemonSet
        metadata:
          name: ascend-device-plugin
        spec:
          template:
            spec:
              containers:
              - name: plugin
                image: ascendhub.huawei.com/public-ascendhub/ascend-k8sdeviceplugin:v6.0.0
                volumeMounts:
                - name: driver
                  mountPath: /usr/local/Ascend/driver
              - name: rocm
                image: registry.example.com/amd/k8s-device-plugin:1.25.2.8
                env:
                - name: LD_LIBRARY_PATH
                  value: /opt/rocm/lib
              volumes:
              - name: driver
                hostPath:
                  path: /usr/local/Ascend/driver
        """
    assert found("deploy/device-plugins.yaml", manifest) == []


def test_driver_folders_in_scripts_dockerfiles_and_notebooks():
    script = """\
        #!/bin/bash
        # Colab keeps the NVIDIA driver libraries in /usr/lib64-nvidia
        ldconfig /usr/lib64-nvidia
        export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}
        echo "driver folder: /usr/local/nvidia"
        export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:${LD_LIBRARY_PATH}
        ls /usr/local/nvidiactl-backup
        """
    got = found("tools/colab_setup.sh", script)
    assert (3, "NPU075") in got and (4, "NPU075") in got
    assert not [c for ln, c in got if ln in (1, 2, 5, 6, 7)], got
    dockerfile = """\
        FROM ubuntu:22.04
        ENV PATH=/usr/local/nvidia/bin:${PATH}
        RUN apt-get update && apt-get install -y python3-pip
        """
    assert (2, "NPU075") in found("docker/Dockerfile", dockerfile)
    notebook = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["Run on a GPU runtime (/usr/lib64-nvidia)."]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["!ldconfig /usr/lib64-nvidia\n", "!pip install -q einops\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    got = found("examples/colab.ipynb", json.dumps(notebook, indent=1))
    assert [c for _, c in got] == ["NPU075"], got


def test_cuda_installer_scripts_run_from_ci():
    workflow = """\
        name: build
        on: [push]
        jobs:
          linux:
            runs-on: ubuntu-22.04
            steps:
              - uses: actions/checkout@v4
              - name: Install CUDA
                env:
                  cuda: ${{ matrix.cuda }}
                run: ./ci/actions/install_cuda_ubuntu.sh
                shell: bash
              - name: Install cuDNN
                run: |
                  bash scripts/install-cudnn.sh 9.1
                  bash scripts/install-deps.sh
              - name: Configure
                run: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
          windows:
            runs-on: windows-2022
            steps:
              - uses: actions/checkout@v4
              - name: Install CUDA
                shell: powershell
                run: .\\ci\\actions\\install_cuda_windows.ps1
              - name: Tools
                shell: pwsh
                run: |
                  # .\\ci\\actions\\install_cuda_windows.ps1 is run above
                  .\\ci\\install_tools.ps1
        """
    got = found(".github/workflows/build.yml", workflow)
    assert (11, "NPU074") in got and (15, "NPU074") in got and (25, "NPU074") in got, got
    assert not [c for ln, c in got if ln in (16, 18, 29, 30)], got


def test_cuda_build_skip_switch_set_to_skip_is_not_a_finding():
    workflow = """\
        name: publish
        on: [release]
        jobs:
          sdist:
            runs-on: ubuntu-latest
            steps:
              - name: Build the source distribution
                env:
                  MYPKG_SKIP_CUDA_BUILD: "TRUE"
                run: python -m build --sdist
              - name: Build the wheel
                env:
                  MYPKG_SKIP_CUDA_BUILD: "FALSE"
                run: python -m build --wheel
        """
    got = found(".github/workflows/publish.yml", workflow)
    assert (13, "NPU060") in got and not [c for ln, c in got if ln == 9], got
    script = """\
        #!/bin/bash
        export MYPKG_SKIP_CUDA_BUILD=1
        pip install --no-build-isolation .
        MYPKG_SKIP_CUDA_BUILD=0 pip wheel .
        """
    got = found("scripts/build_cpu.sh", script)
    assert (4, "NPU060") in got and not [c for ln, c in got if ln == 2], got


_CUDA_LISTS = """\
cmake_minimum_required(VERSION 3.18)
project(fastops LANGUAGES CXX CUDA)
set(CMAKE_CUDA_STANDARD 17)
add_library(fastops STATIC src/ops.cu src/host.cpp)
"""

_OPTIONAL_CUDA_LISTS = """\
cmake_minimum_required(VERSION 3.18)
project(tools LANGUAGES CXX)
option(TOOLS_WITH_CUDA "build the CUDA kernels" OFF)
if(TOOLS_WITH_CUDA)
  enable_language(CUDA)
  add_library(tools_cuda STATIC kernels/scan.cu)
endif()
add_executable(tools src/main.cpp)
"""


def _cmake_tree(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(_CUDA_LISTS)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "CMakeLists.txt").write_text(_OPTIONAL_CUDA_LISTS)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ops.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build.sh").write_text(textwrap.dedent("""\
        #!/bin/bash
        set -euo pipefail
        cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
        cmake --build build -j 8
        cmake -S tools -B build-tools
        echo "cmake -B build configures the CUDA library"
        cmake -S "$SRC_DIR" -B build2
        mkdir -p out && cd out
        cmake ..
        cmake -E make_directory logs
        """))
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(textwrap.dedent("""\
        name: ci
        on: [push]
        jobs:
          linux:
            runs-on: ubuntu-22.04
            steps:
              - uses: actions/checkout@v4
              - name: Configure
                run: cmake . -B ${{ env.build_dir }} -G "${{ matrix.generator }}" -DFASTOPS_TESTS=ON
              - name: Build
                run: cmake --build ${{ env.build_dir }} --verbose
          windows:
            runs-on: windows-2022
            steps:
              - uses: actions/checkout@v4
              - name: Configure
                shell: pwsh
                run: cmake . -B build -G "Visual Studio 17 2022" -A x64
        """))
    return tmp_path


def test_cmake_configure_of_a_cuda_project(tmp_path):
    from pathlib import Path

    from auditor.runner import run_static

    root = _cmake_tree(tmp_path)
    run = run_static([Path(root)], jobs=1)
    got = {(Path(r.path).name, f.line): f for r in run.results for f in r.findings
           if f.code == "NPU337" and not r.path.endswith("CMakeLists.txt")}
    # the configures of the CUDA project (from the root, and `cd out` + `cmake ..`), in bash and PowerShell steps
    assert {k for k in got if k[0] == "build.sh"} == {("build.sh", 3), ("build.sh", 9)}, got
    assert {k for k in got if k[0] == "ci.yml"} == {("ci.yml", 9), ("ci.yml", 18)}, got
    f = got[("build.sh", 3)]
    assert f.severity == "error" and f.category == "kernel" and "CMakeLists.txt:2" in f.message


def test_cmake_call_reads_the_source_folder():
    from auditor.project.cmake_calls import cmake_call

    assert cmake_call(["-S", "tools", "-B", "build"], "") == {"dir": "tools"}
    assert cmake_call(["..", "-DCMAKE_BUILD_TYPE=Release"], "out") == {"dir": ""}
    assert cmake_call(["-B", "build", "-G", "Ninja"], "llama.cpp") == {"dir": "llama.cpp"}
    assert cmake_call(["-Bbuild", "-Ssrc"], "") == {"dir": "src"}
    assert cmake_call(["--build", "build"], "") is None
    assert cmake_call(["-E", "make_directory", "x"], "") is None
    assert cmake_call(["-S", "$SRC", "-B", "build"], "") is None
    assert cmake_call(["-S", "."], None) is None
    assert cmake_call(["-DFOO=1"], "") is None


def test_powershell_build_matrix_of_cuda_versions_under_a_pwsh_default():
    workflow = """\
        name: release
        on: [workflow_dispatch]
        defaults:
          run:
            shell: pwsh
        jobs:
          define:
            runs-on: ubuntu-latest
            steps:
              - name: Matrix
                id: matrix
                run: |
                  $matrix = @{
                      'os' = @('ubuntu-22.04', 'windows-2022')
                      'python' = @("3.11", "3.12")
                      'cuda' = @("12.4", "12.8")
                  }
                  # 'cuda' = @("11.8") was dropped
                  $cudaVersion = "12.8"
                  $torchVersion = "2.7.1"
                  Write-Output ('matrix=' + (ConvertTo-Json $matrix -Compress)) >> $env:GITHUB_OUTPUT
        """
    got = found(".github/workflows/release.yml", workflow)
    sev = severities(".github/workflows/release.yml", workflow)
    assert (16, "NPU018") in got and sev[(16, "NPU018")] == "info", got
    assert (19, "NPU018") in got and sev[(19, "NPU018")] == "info", got
    assert not [c for ln, c in got if ln in (14, 15, 18, 20, 21)], got
