"""t27a (issue 14, session 27; tuned on test42 / test43): duck-typed `hasattr(obj, "cuda")` tests before the CUDA move,
container commands built in Python (read by the shell reader), OpenMM's CUDA platform, NVIDIA Kaolin, a training
backend chosen as "deepspeed". Each on code shaped like the tree it came from, with a control that must stay quiet."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import finding_keys_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# PiFold methods/utils.py (torchdrug's utils/torch.py helper, copied by PiFold, GearNet, ...)
_CUDA_HELPER = '''
import torch
from collections.abc import Mapping, Sequence


def cuda(obj, *args, **kwargs):
    """
    Transfer any nested container of tensors to CUDA.
    """
    if hasattr(obj, "cuda"):
        return obj.cuda(*args, **kwargs)
    elif isinstance(obj, Mapping):
        return type(obj)({k: cuda(v, *args, **kwargs) for k, v in obj.items()})
    elif isinstance(obj, Sequence):
        return type(obj)(cuda(x, *args, **kwargs) for x in obj)
    raise TypeError("Can't transfer object type `%s`" % type(obj))


def to_gpu(batch):
    return {k: v.cuda(non_blocking=True) if hasattr(v, "cuda") else v for k, v in batch.items()}


def free_memory(objects):
    for obj in objects:
        if isinstance(obj, torch.nn.Module) and hasattr(obj, "cuda"):
            obj.cpu()           # control: the branch moves nothing to CUDA
    if hasattr(torch, "cuda"):  # control: a namespace every torch build has
        torch.cuda.empty_cache()
'''


def test_hasattr_cuda_before_the_cuda_move_is_a_probe(engine):
    found = finding_keys_by_line(engine, _CUDA_HELPER, "methods/utils.py")
    assert ("NPU001", "device", "warning") in found.get(line_of(_CUDA_HELPER, 'if hasattr(obj, "cuda"):'), set())
    assert ("NPU001", "device", "error") in found.get(line_of(_CUDA_HELPER, "return obj.cuda(*args"), set())
    # the conditional-expression form
    assert ("NPU001", "device", "warning") in found.get(line_of(_CUDA_HELPER, 'if hasattr(v, "cuda") else v'), set())
    assert not any(code == "NPU001" for code, _, _ in found.get(line_of(_CUDA_HELPER, 'and hasattr(obj, "cuda"):'), set()))
    assert not any(code == "NPU001" for code, _, _ in found.get(line_of(_CUDA_HELPER, "if hasattr(torch, \"cuda\"):"), set()))


# cliport scripts/docker_run.py (from pytorch-dense-correspondence's docker/docker_run.py)
_DOCKER_RUN = '''
import argparse
import os

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-nd", "--nvidia_docker", action='store_true', help="(optional) use nvidia-docker instead of docker")
    parser.add_argument("-g", "--gpus", type=str, default="all", help="(optional) gpus for nvidia docker")
    args = parser.parse_args()
    print("running docker run --gpus all with image %s" % args.image)

    cmd = ""
    cmd += "docker run "
    if args.container:
        cmd += " --name %(container_name)s " % {'container_name': args.container}
    if args.nvidia_docker:
        cmd += "--gpus all "
    else:
        cmd += " --gpus %s" % (args.gpus)
    if args.headless:
        cmd += " -v /usr/bin/nvidia-xconfig:/usr/bin/nvidia-xconfig "
    else:
        cmd += " --env DISPLAY=unix$DISPLAY"\\
               " --env XAUTHORITY"\\
               " --env NVIDIA_DRIVER_CAPABILITIES=all"\\
               " --volume /tmp/.X11-unix:/tmp/.X11-unix"
    cmd += " --ipc=host "
    cmd += " " + args.passthrough + " "
    cmd += "-it "
    cmd += args.image
    os.system(cmd)
'''

# MXNet's image-classification benchmark driver: `--gpus` of the training script, no container
_TRAIN_CMD = '''
import os

cmd = "python train_imagenet.py --network " + network
cmd += " --batch-size " + str(batch_size)
if dev_id is not None:
    cmd += " --gpus " + dev_id
os.system(cmd)
'''

_WHISPER = '''
import logging
import subprocess


def transcribe(file, model, language):
    command = (
        f"docker run --gpus all -it -v ${{PWD}}/models:/root/.cache/whisper"
        f' -v ${{PWD}}/audio-files:/app openai-whisper whisper "{file}"'
    )
    logging.debug(command)
    subprocess.run(command, shell=True, check=True)


def run_tests():
    subprocess.run(["docker", "run", "--gpus", "all", "--rm", "trainer:latest", "pytest"], check=True)
    assert "docker run --gpus all --name smoke --rm " in launch_command   # control: a test's expected text
'''


def test_container_commands_built_in_python(engine):
    found = finding_keys_by_line(engine, _DOCKER_RUN, "scripts/docker_run.py")
    assert ("NPU017", "device", "error") in found.get(line_of(_DOCKER_RUN, 'cmd += "--gpus all "'), set())
    assert ("NPU017", "device", "error") in found.get(line_of(_DOCKER_RUN, 'cmd += " --gpus %s"'), set())
    assert ("NPU075", "device", "info") in found.get(line_of(_DOCKER_RUN, "nvidia-xconfig:/usr"), set())
    assert ("NPU004", "device", "warning") in found.get(line_of(_DOCKER_RUN, "NVIDIA_DRIVER_CAPABILITIES=all"), set())
    # on the piece's own line, not on the first line of the multi-line literal
    assert not found.get(line_of(_DOCKER_RUN, "--env DISPLAY=unix"))
    # messages and the options' own declarations are not commands
    assert not found.get(line_of(_DOCKER_RUN, 'print("running docker run'))
    assert not found.get(line_of(_DOCKER_RUN, '"--gpus", type=str'))
    assert not finding_keys_by_line(engine, _TRAIN_CMD, "benchmark.py")


def test_container_commands_in_fstrings_and_argument_lists(engine):
    found = finding_keys_by_line(engine, _WHISPER, "whisper_docker.py")
    assert "NPU017" in {c for c, _, _ in found.get(line_of(_WHISPER, 'f"docker run --gpus all -it'), set())}
    assert "NPU017" in {c for c, _, _ in found.get(line_of(_WHISPER, '["docker", "run", "--gpus"'), set())}
    assert not found.get(line_of(_WHISPER, "assert \"docker run"))


# diffab tools/relax/openmm_relaxer.py
_OPENMM = '''
import openmm
from openmm import app as openmm_app
from openmm import unit


class ForceFieldMinimizer(object):

    def __init__(self, stiffness=10.0, max_iterations=0, tolerance=2.39*unit.kilocalories_per_mole, platform='CUDA'):
        super().__init__()
        assert platform in ('CUDA', 'CPU')
        self.platform = platform

    def _minimize(self, pdb, system):
        integrator = openmm.LangevinIntegrator(0, 0.01, 0.0)
        platform = openmm.Platform.getPlatformByName("CUDA")
        simulation = openmm_app.Simulation(pdb.topology, system, integrator, platform)
        properties = {'CudaDeviceIndex': '0', 'CudaPrecision': 'mixed'}
        cpu = openmm.Platform.getPlatformByName("CPU")
        return simulation, properties, cpu
'''


def test_openmm_cuda_platform(engine):
    found = finding_keys_by_line(engine, _OPENMM, "diffab/tools/relax/openmm_relaxer.py")
    assert ("NPU097", "device", "error") in found.get(line_of(_OPENMM, 'getPlatformByName("CUDA")'), set())
    assert ("NPU098", "device", "warning") in found.get(line_of(_OPENMM, "platform='CUDA'):"), set())
    assert ("NPU098", "device", "warning") in found.get(line_of(_OPENMM, "'CudaDeviceIndex'"), set())
    assert not found.get(line_of(_OPENMM, 'getPlatformByName("CPU")'))
    # the assert admits the CPU platform too: it chooses nothing (the default and the call above do)
    assert not found.get(line_of(_OPENMM, "assert platform in"))


# prolificdreamer normal.py / latent-nerf textured_mesh.py
_KAOLIN = '''
import torch
import kaolin as kal


def evaluate(mesh_verts, mesh_faces, points, logs_path):
    timelapse = kal.visualize.Timelapse(logs_path)
    pred_points = kal.ops.mesh.sample_points(mesh_verts.unsqueeze(0), mesh_faces, 50000)[0][0]
    chamfer = kal.metrics.pointcloud.chamfer_distance(pred_points.unsqueeze(0), points.unsqueeze(0)).mean()
    d = torch.cdist(pred_points[None], points[None]) ** 2   # control: the same distance in torch
    return timelapse, chamfer, d
'''


def test_kaolin_uses_and_its_cuda_only_distances(engine):
    found = finding_keys_by_line(engine, _KAOLIN, "normal.py")
    assert ("NPU463", "third_party", "warning") in found.get(line_of(_KAOLIN, "import kaolin as kal"), set())
    assert ("NPU463", "third_party", "warning") in found.get(line_of(_KAOLIN, "kal.ops.mesh.sample_points"), set())
    assert ("NPU463", "third_party", "error") in found.get(line_of(_KAOLIN, "chamfer_distance("), set())
    assert not any(code == "NPU463" for code, _, _ in found.get(line_of(_KAOLIN, "torch.cdist"), set()))
