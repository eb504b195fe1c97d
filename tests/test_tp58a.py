"""tp58a (session 58, project test163-test165): project-file readings the blind splits missed. Recall: a Kubernetes
manifest a script pipes to `kubectl apply -f -` from a `cat` here-document (its `nvidia.com/gpu` requests, NPU017).
Each shaped on real scripts, with controls (a here-document piped elsewhere, a CPU-only manifest)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_findings, write_tree

PIPED_MANIFEST = """\
#!/bin/bash -e
TAG=$(git rev-parse --short HEAD)
docker build . -t $DOCKER_REPO:$TAG
cat <<EOF | kubectl apply -f -
apiVersion: batch/v1
kind: Job
metadata:
  name: train-${RUN_ID}
spec:
  template:
    spec:
      containers:
        - name: trainer
          image: $DOCKER_REPO:$TAG
          resources:
            limits:
              nvidia.com/gpu: 2
            requests:
              cpu: 4000m
              nvidia.com/gpu: 2
      restartPolicy: Never
EOF
cat <<EOF | envsubst | kubectl create --filename -
apiVersion: v1
kind: Pod
spec:
  containers:
    - name: eval
      resources:
        limits:
          nvidia.com/gpu: 1
EOF
"""

PIPED_ELSEWHERE = """\
#!/bin/bash
cat <<EOF | tee notes.txt
resources:
  limits:
    nvidia.com/gpu: 1
EOF
cat <<EOF | kubectl apply -f -
apiVersion: v1
kind: Pod
spec:
  containers:
    - name: web
      resources:
        limits:
          cpu: 500m
EOF
"""


def test_manifest_piped_from_cat_to_kubectl(tmp_path):
    found = audit_file(tmp_path, "scripts/k8s/launch.sh", PIPED_MANIFEST)
    # both GPU requests of the job and the one of the pod written through envsubst
    for line in (17, 20, 31):
        assert "NPU017" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (4, 8, 14, 19, 23))


def test_heredoc_piped_to_other_programs_or_cpu_manifest_quiet(tmp_path):
    found = audit_file(tmp_path, "scripts/notes.sh", PIPED_ELSEWHERE)
    expect_line_codes(found, {}, tuple(range(1, 17)))


SPCONV_IMAGE = """\
FROM ubuntu:18.04
RUN apt-get update && apt-get install -y git cmake libboost-all-dev python3-pip
RUN git clone --recursive https://github.com/traveller59/spconv.git /opt/spconv
WORKDIR /opt/spconv
RUN git checkout v1.2.1
WORKDIR /opt/spconv/third_party
RUN git clone https://github.com/pybind/pybind11.git
WORKDIR /opt/spconv
RUN python3 setup.py bdist_wheel
WORKDIR /opt/spconv/dist
RUN pip3 install *.whl
WORKDIR /opt/det3d
RUN python3 setup.py develop
"""


def test_spconv_source_build_in_dockerfile(tmp_path):
    found = audit_file(tmp_path, "docker/Dockerfile", SPCONV_IMAGE)
    # the build of spconv's tree (after a WORKDIR into a folder of the clone and back); the project's own build and
    # pybind11's clone stay quiet
    assert "NPU440" in codes_of_line(found, 9)
    expect_line_codes(found, {}, (2, 5, 7, 13))


def test_spconv_source_build_in_script(tmp_path):
    script = """\
    #!/bin/bash
    git clone https://github.com/traveller59/spconv.git --recursive
    cd spconv && python setup.py bdist_wheel
    cd ./dist && pip install spconv*.whl
    """
    found = audit_file(tmp_path, "install.sh", script)
    assert "NPU440" in codes_of_line(found, 3)


DEVICE_SECTION = """\
# Device to be used
device:
  # Use CPU or GPU (choices: cpu, cuda)
  type: cuda
  # GPU device IDs to be used. Only valid when device.type is 'cuda'
  ids: [0, 1]
dataloader:
  dataset: cifar10
  batch_size: 128
"""

DEVICE_SECTION_MAIN = """\
import torch
import yaml
from munch import munchify

args = munchify(yaml.safe_load(open("config.yaml")))
model = torch.nn.Linear(4, 2)
if args.device.ids:
    model = torch.nn.DataParallel(model, device_ids=args.device.ids)
model.to(args.device.type)
loader = make_loader(args.dataloader.dataset, args.dataloader.batch_size)
"""


def test_device_section_type_read_as_torch_device(tmp_path):
    root = write_tree(tmp_path, {"config.yaml": DEVICE_SECTION, "main.py": DEVICE_SECTION_MAIN})
    found = tree_findings(root, "config.yaml")
    assert codes_of_line(found, 4) == {"NPU019"}
    # the comments, the device ids and the other sections' keys stay quiet
    expect_line_codes(found, {}, (1, 3, 5, 6, 8, 9))


def test_device_section_type_cpu_and_other_types_quiet(tmp_path):
    config = """\
    device:
      type: cpu
    loss:
      type: cuda_ctc
    renderer:
      type: cuda
    """
    found = audit_file(tmp_path, "configs/train.yaml", config)
    expect_line_codes(found, {}, (1, 2, 3, 4))
