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
RUN wget -O hotfixes.zip https://github.com/traveller59/spconv/files/4658204/hotfixes.zip
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
    assert "NPU440" in codes_of_line(found, 10)
    # a patch attached to one of spconv's GitHub issues is no download of its code (tp58a)
    expect_line_codes(found, {}, (2, 5, 6, 8, 14))


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


NMS_MAKEFILE = """\
all:
\tcd nms; python setup_linux.py build_ext --inplace; rm -rf build; cd ../../
cpu:
\tcd nms && python3 setup_cpu.py build_ext --inplace
clean:
\tcd nms; rm *.so; cd ../../
"""

NMS_SETUP = """\
import numpy as np
from setuptools import setup
from distutils.extension import Extension
from Cython.Distutils import build_ext

CUDA = locate_cuda()
ext_modules = [
    Extension('cpu_nms', ['cpu_nms.pyx'], include_dirs=[np.get_include()]),
    Extension('gpu_nms',
              ['nms_kernel.cu', 'gpu_nms.pyx'],
              library_dirs=[CUDA['lib64']],
              libraries=['cudart'],
              include_dirs=[np.get_include(), CUDA['include']]),
]
setup(name='nms', ext_modules=ext_modules, cmdclass={'build_ext': custom_build_ext})
"""

NMS_SETUP_CPU = """\
import numpy as np
from setuptools import setup
from distutils.extension import Extension

setup(name='nms', ext_modules=[Extension('cpu_nms', ['cpu_nms.pyx'], include_dirs=[np.get_include()])])
"""

PREPARE_ENV = """\
#!/bin/bash
compile_nms_lib(){
    source venv/bin/activate
    pushd lib
    make
    popd
    deactivate
}
compile_cpu_lib(){
    pushd lib
    make cpu
    make clean
    popd
}
compile_nms_lib
"""


def test_make_target_running_cuda_setup_script(tmp_path):
    root = write_tree(tmp_path, {"lib/Makefile": NMS_MAKEFILE, "lib/nms/setup_linux.py": NMS_SETUP,
                                 "lib/nms/setup_cpu.py": NMS_SETUP_CPU, "lib/nms/nms_kernel.cu": "// kernel\\n",
                                 "prepare_env.sh": PREPARE_ENV})
    found = tree_findings(root, "prepare_env.sh")
    assert "NPU333" in codes_of_line(found, 5)
    # a target whose setup script builds Cython only, and `make clean`, stay quiet
    expect_line_codes(found, {}, (4, 6, 10, 11, 12))
