"""tp50b (session 50, project test141): families the project-file readers missed on session 49's blind project split
test141 (retrieval, biomedical LLMs, depth and pose, face swap, document layout). Recall: a launch of a driver above
the script's folder (`../drivers/run_ann.py`, NPU143), a command string held in a variable whose quotes open and close
around an expansion (`cmd="python -m ... --cache_dir "${dir}cache/" ..."; eval $cmd`), a passed `--fp16` whose branch
of the launched script runs NVIDIA Apex (NPU987), MXNet's CUDA wheels (`mxnet-cu101mkl`, NPU440), lietorch and
MinkowskiEngine built from their git URLs (NPU360). Quiet: comments, messages, `--fp16 False`, a switch whose branch
is torch AMP, CPU MXNet builds, PyPI's other `lietorch`. Shaped on ANCE, DPR-style drivers, ghost, vidar and
Coupled-Iterative-Refinement; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree

DRIVER = """\
import argparse
import torch


def train(args, model, optimizer):
    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true", help="16-bit (mixed) precision through NVIDIA apex")
    parser.add_argument("--fp16_opt_level", type=str, default="O1")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl")


if __name__ == "__main__":
    main()
"""

# ANCE's commands/: the drivers live one folder up, and the command lines are strings run with `eval`
HELD_LAUNCH = """\
#!/bin/bash
gpu_no=8
data_dir="../data/raw_data/"
# python -m torch.distributed.launch --nproc_per_node=1 ../drivers/run_warmup.py --fp16
train_cmd="\\
python -m torch.distributed.launch --nproc_per_node=$gpu_no ../drivers/run_warmup.py --model_type rdot_nll \\
--cache_dir "${data_dir}cache/" --data_dir $data_dir --max_seq_length 128 \\
--fp16 --optimizer lamb \\
"
echo $train_cmd
eval $train_cmd
echo "python -m torch.distributed.launch ../drivers/run_warmup.py --fp16"
"""

DIRECT_LAUNCH = """\
#!/bin/bash
python -m torch.distributed.launch --nproc_per_node=4 ../drivers/run_warmup.py \\
    --fp16 \\
    --output_dir out
python ../drivers/run_warmup.py --fp16 False
torchrun --nproc_per_node 2 ../drivers/amp_train.py --fp16
"""

TORCH_AMP_DRIVER = """\
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()
if args.fp16:
    scaler = torch.cuda.amp.GradScaler()
"""


def test_held_launch_of_a_driver_above_the_script(tmp_path):
    root = write_tree(tmp_path, {"commands/run_train_warmup.sh": HELD_LAUNCH, "drivers/run_warmup.py": DRIVER})
    found = tree_findings(root, "commands/run_train_warmup.sh")
    assert codes_of_line(found, 6) == {"NPU143"}        # the launcher's line: the driver hard-codes NCCL
    assert codes_of_line(found, 8) == {"NPU987"}        # `--fp16` turns on the driver's Apex branch
    for line in (4, 7, 10, 12):                          # a comment, the other options, messages
        assert not codes_of_line(found, line), line


def test_direct_launch_switches(tmp_path):
    root = write_tree(tmp_path, {"scripts/train.sh": DIRECT_LAUNCH, "drivers/run_warmup.py": DRIVER,
                                 "drivers/amp_train.py": TORCH_AMP_DRIVER})
    found = tree_findings(root, "scripts/train.sh")
    assert codes_of_line(found, 2) == {"NPU143"}
    assert codes_of_line(found, 3) == {"NPU987"}
    assert not codes_of_line(found, 4)
    assert not codes_of_line(found, 5)       # `--fp16 False` turns nothing on (and one process: no NPU143)
    assert "NPU987" not in codes_of_line(found, 6)       # torch AMP's branch: not Apex


def test_launch_above_the_tree_is_not_read(tmp_path):
    # a path that climbs above the tree's top folder is no file of the tree
    root = write_tree(tmp_path / "tree", {"run.sh": "torchrun --nproc_per_node 2 ../drivers/run_warmup.py --fp16\n"})
    write_tree(tmp_path, {"drivers/run_warmup.py": DRIVER})
    assert not tree_findings(root, "run.sh")


REQUIREMENTS = """\
-f https://download.pytorch.org/whl/torch_stable.html
torch==1.6.0+cu101
onnxruntime-gpu==1.4.0
mxnet-cu101mkl
mxnet-mkl==1.6.0
mxnet
mxnet-cu112==1.9.1
# mxnet-cu101
"""


def test_mxnet_cuda_wheels(tmp_path):
    found = audit_file(tmp_path, "requirements.txt", REQUIREMENTS)
    # the CUDA builds, not the CPU ones (`mxnet-mkl`, `mxnet`) nor a comment
    assert {line: codes_of_line(found, line) for line in range(4, 9)} == \
        {4: {"NPU440"}, 5: set(), 6: set(), 7: {"NPU440"}, 8: set()}


DOCKERFILE = """\
FROM nvidia/cuda:11.3.1-devel-ubuntu20.04
RUN pip install git+https://github.com/princeton-vl/lietorch.git@91887c3be4fe72a
RUN pip install -U git+https://github.com/NVIDIA/MinkowskiEngine -v --no-deps
RUN pip install lietorch
# RUN pip install git+https://github.com/princeton-vl/lietorch.git
RUN git clone --recursive https://github.com/princeton-vl/lietorch.git && cd lietorch && python setup.py install
"""

ENVIRONMENT = """\
name: cir
channels:
  - pytorch
dependencies:
  - python=3.8
  - pip
  - pip:
    - git+https://github.com/princeton-vl/lietorch.git
    - lietorch==0.3
    - opencv-python
"""


def test_source_built_libraries_by_git_url(tmp_path):
    found = audit_file(tmp_path, "docker/Dockerfile.tmc", DOCKERFILE)
    assert codes_of_line(found, 2) == {"NPU360"}
    assert codes_of_line(found, 3) == {"NPU360"}
    # PyPI's `lietorch` is TU Eindhoven's Lie-group CNN library, a C++/CUDA extension too (its PyPI page; tp54a): a
    # warning by name, where the URL names princeton-vl's build
    assert codes_of_line(found, 4) == {"NPU360"}
    assert not codes_of_line(found, 5)
    assert "NPU360" in codes_of_line(found, 6)          # a clone's setup.py build
    found = audit_file(tmp_path / "env", "environment.yaml", ENVIRONMENT)
    assert codes_of_line(found, 8) == {"NPU360"}
    assert codes_of_line(found, 9) == {"NPU360"}


PYTORCH3D_DOCKERFILE = """\
FROM nvidia/cuda:11.3.1-devel-ubuntu20.04
RUN pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"
RUN FORCE_CUDA=1 pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"
ENV FORCE_CUDA="1"
RUN pip install "git+https://github.com/facebookresearch/pytorch3d.git@v0.7.4"
"""


def test_pytorch3d_built_in_a_docker_build(tmp_path):
    # pytorch3d's setup.py compiles CUDA only with a GPU visible (none in `docker build`) or FORCE_CUDA set
    found = audit_file(tmp_path, "docker/Dockerfile", PYTORCH3D_DOCKERFILE)
    # review50 item 13: kept as information (a legacy builder with the nvidia default runtime sees a GPU)
    assert {(code, sev) for line, code, sev in found if line == 2} == {("NPU360", "info")}
    assert "NPU360" in codes_of_line(found, 3)
    assert "NPU360" in codes_of_line(found, 5)          # after `ENV FORCE_CUDA="1"`
    # a notebook installs it where the runtime's GPU is visible: a CUDA build
    found = audit_file(tmp_path / "nb", "install.sh",
                       "pip install 'git+https://github.com/facebookresearch/pytorch3d.git@stable'\n")
    assert codes_of_line(found, 1) == {"NPU360"}


# review50 item 3 (probe p1): the switch's body chooses again (`if args.amp_backend == "apex": ... else:` torch AMP)
# and the launch passes the native value: the switch does not turn Apex on
BACKEND_DRIVER = """\
import argparse

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true", help="mixed precision")
    parser.add_argument("--amp_backend", default="native", choices=["native", "apex"])
    args = parser.parse_args()
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = None
    if args.fp16:
        if args.amp_backend == "apex":
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        else:
            scaler = torch.amp.GradScaler()
    print(model, optimizer, scaler)


if __name__ == "__main__":
    main()
"""


def test_switch_whose_body_chooses_the_backend_again(tmp_path):
    root = write_tree(tmp_path, {"run.sh": "#!/bin/bash\n# mixed precision through torch.amp\n"
                                           "python train.py --fp16 --amp_backend native\n",
                                 "train.py": BACKEND_DRIVER, "drivers/run_warmup.py": DRIVER,
                                 "scripts/train.sh": DIRECT_LAUNCH})
    assert not codes_of_line(tree_findings(root, "run.sh"), 3)
    # the switch's own `try: from apex import amp / except ImportError: raise`: still the switch's, at NPU318's warning
    switched = [(line, sev) for line, code, sev in tree_findings(root, "scripts/train.sh") if code == "NPU987"]
    assert switched == [(3, "warning")]
