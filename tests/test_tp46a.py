"""tp46a (session 46, project test123): families the project-file readers missed on session 45's blind project split
test123. Recall: Spark / YARN / Databricks GPU resources and the RAPIDS Accelerator in an EMR configuration, a
Databricks cluster spec held in a here-document and a notebook's SparkConf (NPU966-NPU968), `spark.executorEnv.*` /
Databricks `spark_env_vars` variables, an Argo template's `podSpecPatch`, a toleration of a GPU pool's taint, a CUDA
release spliced from a CI matrix into a conda environment file's name (NPU018, NPU969), `dask-cudf` /
`spark-rapids-ml`, verl's images, `libnvcuvid`, RAPIDS' C++ includes, a Dockerfile's copied build context built with
`pip install -e` (NPU370), DeepStream's tar install (NPU970), helpers named for pynvml, Lightning 1.x's
`Trainer(gpus=1)`. Quiet: `*-nocuda` image tags, a list of GPU indices a script splits. Shaped on spark-rapids-ml,
spark-rapids-examples, fv3net, NVTabular, retinanet-examples, rllm, segmentation_models.pytorch and EasyRec; each with
controls (comments, messages, CPU values, reads, other settings)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree


EMR_CONFIGURATIONS = """\
[
    {
        "Classification":"spark",
        "Properties":{
            "enableSparkRapids":"true"
        }
    },
    {
        "Classification":"yarn-site",
        "Properties":{
            "yarn.nodemanager.resource-plugins":"yarn.io/gpu",
            "yarn.resource-types":"yarn.io/gpu",
            "yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices":"auto",
            "yarn.nodemanager.linux-container-executor.cgroups.mount":"true"
        }
    },
    {
        "Classification":"container-executor",
        "Properties":{},
        "Configurations":[
            {"Classification":"gpu", "Properties":{"module.enabled":"true"}},
            {"Classification":"cgroups", "Properties":{"root":"/spark-rapids-cgroup"}}
        ]
    },
    {
        "Classification":"spark-defaults",
        "Properties":{
            "spark.plugins":"com.nvidia.spark.SQLPlugin",
            "spark.executor.resource.gpu.discoveryScript":"/usr/lib/spark/scripts/gpu/getGpusResources.sh",
            "spark.rapids.sql.concurrentGpuTasks":"2",
            "spark.executor.resource.gpu.amount":"1",
            "spark.task.resource.gpu.amount":"0.125",
            "spark.rapids.memory.gpu.pooling.enabled":"false",
            "spark.sql.cache.serializer":"com.nvidia.spark.ParquetCachedBatchSerializer",
            "spark.executorEnv.CUPY_CACHE_DIR":"/tmp/.cupy",
            "spark.executorEnv.NCCL_DEBUG":"INFO",
            "spark.driver.resource.gpu.amount":"0"
        }
    }
]
"""


def test_emr_configuration(tmp_path):
    found = audit_file(tmp_path, "init-configurations.json", EMR_CONFIGURATIONS)
    assert codes_of_line(found, 5) == {"NPU967"}                      # enableSparkRapids
    for line in (11, 12, 13, 21, 29, 31, 32):
        assert codes_of_line(found, line) == {"NPU966"}, line          # yarn.io/gpu, the gpu classification, Spark's gpu
    assert codes_of_line(found, 28) == {"NPU967"}                     # spark.plugins
    assert codes_of_line(found, 34) == {"NPU967"}                     # the RAPIDS cache serializer
    assert codes_of_line(found, 36) == {"NPU121"}                     # NCCL_DEBUG in the executors' environment
    # the cgroups settings, the other classification, the plugin's own settings, a CuPy cache folder, no GPU asked
    for line in (14, 22, 30, 33, 35, 37):
        assert not codes_of_line(found, line), line


DATABRICKS_SCRIPT = """\
#!/bin/bash
# We recommend selecting instances with A10/L4+ GPUs for these examples.
EXECUTOR_GPU_AMT=1
json_config=$(cat <<EOF
{
    "cluster_name": "spark-dl-inference",
    "spark_version": "15.4.x-gpu-ml-scala2.12",
    "spark_conf": {
        "spark.executor.resource.gpu.amount": "${EXECUTOR_GPU_AMT}",
        "spark.python.worker.reuse": "true"
    },
    "spark_env_vars": {
        "TF_GPU_ALLOCATOR": "cuda_malloc_async",
        "FRAMEWORK": "${FRAMEWORK}"
    },
    "num_workers": "2"
}
EOF
)
databricks clusters create --json "$json_config"
"""

DATABRICKS_CPU_SCRIPT = """\
#!/bin/bash
json_config=$(cat <<EOF
{
    "cluster_name": "etl",
    "spark_version": "15.4.x-scala2.12",
    "spark_env_vars": {"FRAMEWORK": "torch"}
}
EOF
)
databricks clusters create --json "$json_config"
"""


def test_databricks_cluster_spec_in_a_here_document(tmp_path):
    found = audit_file(tmp_path, "start_cluster.sh", DATABRICKS_SCRIPT)
    assert codes_of_line(found, 7) == {"NPU966"}                      # the GPU ML runtime
    assert codes_of_line(found, 9) == {"NPU966"}
    assert codes_of_line(found, 13) == {"NPU044"}                     # TensorFlow's CUDA allocator for the workers
    for line in (2, 3, 6, 10, 14, 16):
        assert not codes_of_line(found, line), line
    assert not audit_file(tmp_path / "cpu", "start_cluster.sh", DATABRICKS_CPU_SCRIPT)


SPARK_NOTEBOOK = """\
from pyspark import SparkConf
from pyspark.sql import SparkSession

conf = SparkConf()
conf.set("spark.task.resource.gpu.amount", "0.083333")
conf.set("spark.executor.resource.gpu.amount", "2")  # 2 GPUs per executor
conf.set("spark.executor.cores", "24")
spark = SparkSession.builder.config(conf=conf).getOrCreate()
tensor_parallel_size = int(spark.conf.get("spark.executor.resource.gpu.amount"))
print("set spark.executor.resource.gpu.amount to use GPUs")
"""


def test_spark_conf_in_python(tmp_path):
    found = audit_file(tmp_path, "tensor_parallel_vllm.py", SPARK_NOTEBOOK)
    assert codes_of_line(found, 5) == {"NPU968"} and codes_of_line(found, 6) == {"NPU968"}
    for line in (7, 8, 9, 10):                                 # another setting, the session, a read, a message
        assert not codes_of_line(found, line), line


ARGO_TEMPLATE = """\
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
spec:
  templates:
    - name: sweep
      tolerations:
      - key: "dedicated"
        operator: "Equal"
        value: "gpu-sim-pool"
        effect: "NoSchedule"
      - key: "dedicated"
        operator: "Equal"
        value: "climate-sim-pool"
        effect: "NoSchedule"
      podSpecPatch: |
        containers:
          - name: main
            resources:
              limits:
                cpu: "4"
                nvidia.com/gpu: 1
"""


def test_argo_gpu_pool_toleration_and_pod_spec_patch(tmp_path):
    found = audit_file(tmp_path, "wandb-sweep.yaml", ARGO_TEMPLATE)
    assert codes_of_line(found, 9) == {"NPU028"}
    assert codes_of_line(found, 21) == {"NPU017"}
    for line in (7, 13, 20):                                   # the taint's key, another pool, the CPU limit
        assert not codes_of_line(found, line), line


CONDA_WORKFLOW = """\
name: Test conda env creation
on:
  workflow_dispatch:
jobs:
  build-linux:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        target: ["11.0", "11.2"]
        python: ["3.8", "3.10"]
    steps:
      - uses: actions/checkout@v3
      - name: Create Conda environment with CUDA ${{ matrix.target }}
        run: |
          # environments/ holds one file per CUDA release
          conda env create --file conda/environments/nvtabular_dev_cuda${{ matrix.target }}.yml --name dev
          conda env create --file conda/environments/docs_py${{ matrix.python }}.yml --name docs
"""


def test_cuda_release_spliced_from_a_matrix(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/conda-env-create.yml", CONDA_WORKFLOW)
    assert codes_of_line(found, 9) == {"NPU018"}
    assert codes_of_line(found, 16) == {"NPU969"}
    for line in (10, 13, 15, 17):                              # the Python matrix, the step's name, comment, docs env
        assert not codes_of_line(found, line), line


def test_conda_environment_file_named_for_cuda(tmp_path):
    found = audit_file(tmp_path, "setup.sh", """\
        #!/bin/bash
        mamba env create -f environment_cu118.yml
        conda env create --file environment.yml
        echo "conda env create --file environment_cuda11.yml"
        """)
    assert codes_of_line(found, 2) == {"NPU969"}
    assert not codes_of_line(found, 3) and not codes_of_line(found, 4)


RECIPE_AND_REQUIREMENTS = {
    "conda/recipes/meta.yaml": """\
        package:
          name: nvtabular
          version: 1.0
        requirements:
          run:
            - python
            - dask-cudf>=21.10.*
            - dask>=2021.11.2
        """,
    "requirements.txt": """\
        pyspark==3.5.0
        spark-rapids-ml==25.8.0
        # spark-rapids-ml needs cuML
        """,
}


def test_dask_cudf_and_spark_rapids_ml(tmp_path):
    root = write_tree(tmp_path, RECIPE_AND_REQUIREMENTS)
    recipe = tree_findings(root, "conda/recipes/meta.yaml")
    assert codes_of_line(recipe, 7) == {"NPU440"} and not codes_of_line(recipe, 8)
    reqs = tree_findings(root, "requirements.txt")
    assert codes_of_line(reqs, 2) == {"NPU440"}
    assert not codes_of_line(reqs, 1) and not codes_of_line(reqs, 3)


def test_images_verl_and_nocuda_tags(tmp_path):
    assert codes_of_line(audit_file(tmp_path / "a", "Dockerfile", "FROM verlai/verl:vllm011.latest\nWORKDIR /workspace\n"),
                  1) == {"NPU016"}
    assert not audit_file(tmp_path / "b", "Dockerfile", "FROM anibali/pytorch:1.5.0-nocuda\nWORKDIR /tmp/smp/\n")
    # the CUDA tags of the same image keep their finding
    assert codes_of_line(audit_file(tmp_path / "c", "Dockerfile", "FROM anibali/pytorch:1.5.0-cuda10.2\n"), 1) == {"NPU016"}


DEEPSTREAM_DOCKERFILE = """\
FROM nvcr.io/nvidia/pytorch:20.03-py3
COPY . /workspace/retinanet-examples/
WORKDIR /workspace/retinanet-examples/extras/deepstream/DeepStream_Release/deepstream_sdk_v4.0.2_x86_64
RUN tar -xvf binaries.tbz2 -C / && \\
    ./install.sh
WORKDIR /usr/lib/x86_64-linux-gnu
RUN ln -sf libnvcuvid.so.1 libnvcuvid.so
RUN ln -sf libjpeg.so.8 libjpeg.so
WORKDIR /workspace/retinanet-examples
RUN pip install --no-cache-dir -e .
WORKDIR /opt/data
RUN tar -xvf samples.tbz2 -C /
"""

ODTK_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='odtk',
    ext_modules=[CUDAExtension('odtk._C', ['csrc/extensions.cpp', 'csrc/cuda/nms.cu'])],
    cmdclass={'build_ext': BuildExtension},
)
"""

PLAIN_SETUP = """\
from setuptools import setup

setup(name='app', packages=['app'])
"""


def test_deepstream_image_and_the_copied_build_context(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile.deepstream": DEEPSTREAM_DOCKERFILE, "setup.py": ODTK_SETUP,
                                 "Dockerfile": "FROM nvcr.io/nvidia/pytorch:21.09-py3\n\nCOPY . odtk/\n"
                                               "RUN pip install --no-cache-dir -e odtk/\n"})
    found = tree_findings(root, "Dockerfile.deepstream")
    assert codes_of_line(found, 4) == {"NPU970"}                      # the SDK's binaries unpacked in its release folder
    assert codes_of_line(found, 7) == {"NPU092"}                      # the driver's video decoder library
    assert codes_of_line(found, 10) == {"NPU370"}                     # the copied context's CUDAExtension built here
    for line in (8, 12):                                       # another library, another archive
        assert not codes_of_line(found, line), line
    assert codes_of_line(tree_findings(root, "Dockerfile"), 4) == {"NPU370"}


def test_copied_build_context_without_a_cuda_extension(tmp_path):
    root = write_tree(tmp_path, {"setup.py": PLAIN_SETUP, "Dockerfile": """\
        FROM python:3.10-slim
        COPY . /app
        WORKDIR /app
        RUN pip install -e .
        COPY requirements.txt /deps/
        RUN pip install -e /deps
        """})
    assert not tree_findings(root, "Dockerfile")


NVTABULAR_CELL = """\
import os
from merlin.core.compat import pynvml_mem_size, device_mem_size

devices = os.environ.get("VISIBLE", "0").split(",")
for dev in devices:
    fmem = pynvml_mem_size(kind="free", index=int(dev))
    total = device_mem_size(kind="total")
    print("pynvml_mem_size reports", fmem)
"""


def test_helper_named_for_pynvml(tmp_path):
    found = audit_file(tmp_path, "multi_gpu.py", NVTABULAR_CELL)
    assert codes_of_line(found, 6) == {"NPU406"}
    assert not codes_of_line(found, 7) and not codes_of_line(found, 8)


LIGHTNING_CELL = """\
import pytorch_lightning as pl

trainer = pl.Trainer(
    gpus=1,
    max_epochs=5,
)
cpu_trainer = pl.Trainer(gpus=0, max_epochs=1)
print("pass gpus=1 to pl.Trainer to train on a GPU")
"""


def test_lightning_trainer_gpus(tmp_path):
    found = audit_file(tmp_path, "binary_segmentation_intro.py", LIGHTNING_CELL)
    assert codes_of_line(found, 4) == {"NPU050"}
    assert not codes_of_line(found, 7) and not codes_of_line(found, 8)


RAPIDS_UDF = """\
/*
 * Copyright (c) 2021-2022, NVIDIA CORPORATION.
 */

#include "string_word_count.hpp"

#include <cudf/column/column_factories.hpp>
#include <cudf/strings/string_view.cuh>
#include <thrust/transform.h>

__device__ cudf::size_type count_words(cudf::string_view str) { return str.length(); }
"""


def test_rapids_include_is_the_cuda_file_line(tmp_path):
    found = audit_file(tmp_path, "src/string_word_count.cu", RAPIDS_UDF)
    assert codes_of_line(found, 7) == {"NPU372"}
    assert not codes_of_line(found, 2) and not codes_of_line(found, 5)


GPU_LIST_SCRIPT = """\
#!/bin/bash
# train on one machine with 2gpus
gpus="4,5"
echo "gpus=${gpus}"
gpu_id=`echo $gpus | awk -v FS=',' '{ print $1 }'`
CUDA_VISIBLE_DEVICES=$gpu_id nohup python -m easy_rec.python.train_eval &
"""


def test_gpu_index_list_the_script_splits(tmp_path):
    found = audit_file(tmp_path, "train_multi_worker.sh", GPU_LIST_SCRIPT)
    assert codes_of_line(found, 6) == {"NPU004"}
    for line in (2, 3, 4, 5):
        assert not codes_of_line(found, line), line


NON_GPU_TOLERATION = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: preprocess
spec:
  template:
    spec:
      tolerations:
        - key: dedicated
          value: non-gpu
          effect: NoSchedule
        - key: dedicated
          value: gpu-sim-pool
          effect: NoSchedule
      containers:
        - name: main
          image: python:3.11
"""

NO_CUDA_ENV_FILES = """\
#!/bin/bash
conda env create -f environment-nocuda.yml
conda env create -f env_no_cuda.yml
conda env create -f environment-non-gpu.yml
conda env create -f environment-cuda118.yml
"""


def test_pools_and_environment_files_named_without_gpu(tmp_path):
    """review46 item 7: `value: non-gpu` and environment files named for the build without CUDA are quiet; the GPU
    pool's toleration and the CUDA file stay reported."""
    found = audit_file(tmp_path, "job.yaml", NON_GPU_TOLERATION)
    assert not codes_of_line(found, 10)
    assert codes_of_line(found, 13) == {"NPU028"}
    found = audit_file(tmp_path, "setup.sh", NO_CUDA_ENV_FILES)
    assert [ln for ln, _code, _sev in found] == [5] and codes_of_line(found, 5) == {"NPU969"}


SPARK_DEFAULTS = """\
[
  {
    "Classification": "spark-defaults",
    "Properties": {
      "spark.executor.resource.gpu.amount": "1",
      "spark.executor.resource.gpu.discoveryScript": "/usr/lib/spark/scripts/gpu/getGpusResources.sh",
      "spark.task.resource.gpu.amount": "0",
      "spark.executor.cores": "8"
    }
  }
]
"""


def test_spark_gpu_requests_fail_as_written(tmp_path):
    """review46 item 9: executors asking for Spark's `gpu` resource do not start on an Ascend cluster (the executor
    raises when discovery finds fewer addresses than requested): NPU966 is an error; amount 0 and cores stay quiet."""
    found = audit_file(tmp_path, "configurations.json", SPARK_DEFAULTS)
    assert (5, "NPU966", "error") in found and (6, "NPU966", "error") in found
    assert not codes_of_line(found, 7) and not codes_of_line(found, 8)
