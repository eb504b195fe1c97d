"""tp39 (session 39, project test86): GPU families of LLM-serving deployments and benchmark suites that the
project-file readers missed: serving-engine images in Kubernetes pod specs and Helm values (SGLang, TGI;
vLLM's stay NPU016), the engine module's own line in an exec-form `command:` vector, llmaz's `backendName` engine choices, NIXL /
LMCache / cuda-pathfinder installs, download URLs held in Dockerfile ARGs (reported where RUN downloads them, not at
the ARG), the tag ARG of a `FROM ${BASE_IMAGE}:${BASE_IMAGE_TAG}` base, SuperBench benchmark entries and mode
prefixes, `uv pip sync` from a CUDA index, NVIDIA EGL vendor files under /usr/share, camel-case `instanceType` GPU
sizes and a CUDA build named in an image's repository path. Shaped on lws' sglang / vLLM LeaderWorkerSets, llmaz's
playgrounds, llm-d's and kaito's Dockerfiles, envpool's lock export, superbenchmark's azure_ndmv4.yaml and openpi's
LIBERO Dockerfile, each with controls (comments, messages, Ascend images, disabled entries, CPU choices)."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _severities(found, line):
    return {sev for ln, _code, sev in found if ln == line}


LWS_SGLANG = """\
    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    metadata:
      name: sglang
    spec:
      leaderWorkerTemplate:
        leaderTemplate:
          spec:
            containers:
              - name: sglang-leader
                # image: lmsysorg/sglang:latest (the CUDA build)
                image: lmsysorg/sglang:latest
                command:
                  - python3
                  - -m
                  - sglang.launch_server
                  - --model-path
                  - meta-llama/Meta-Llama-3.1-8B-Instruct
                  - --tp
                  - "2" # Size of Tensor Parallelism
                resources:
                  limits:
                    nvidia.com/gpu: "1"
        workerTemplate:
          spec:
            containers:
              - name: sglang-npu
                image: quay.io/ascend/sglang:main-cann8.5.0-910b
              - name: sglang-npu-hub
                image: lmsysorg/sglang:main-cann8.5.0-a3
"""


def test_serving_engine_images_and_the_module_line_of_an_exec_form_launch(tmp_path):
    root = write_tree(tmp_path, {"sglang/lws.yaml": LWS_SGLANG})
    found = _found(root, "sglang/lws.yaml")
    assert _codes(found, 12) == {"NPU483"}                  # the CUDA build of SGLang's server
    assert _codes(found, 16) == {"NPU447"}                  # `- sglang.launch_server`: the engine's own line
    assert _codes(found, 14) == set() and _codes(found, 15) == set()     # `- python3`, `- -m`
    assert _codes(found, 11) == set()                       # a comment naming the image
    assert _codes(found, 29) == set() and _codes(found, 31) == set()     # Ascend builds of SGLang


def test_tgi_images_are_the_serving_engine_rule_and_vllm_images_stay_cuda_images(tmp_path):
    root = write_tree(tmp_path, {
        "values.yaml": """\
            servingEngineSpec:
              modelSpec:
              - name: "llama3"
                repository: "vllm/vllm-openai"
                tag: "v0.8.5"
              - name: "npu"
                repository: "quay.io/ascend/vllm-ascend"
                tag: "v0.9.1"
            """,
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.1
            RUN pip install flash-attn
            """,
        "vllm/lws.yaml": """\
            spec:
              template:
                spec:
                  containers:
                    - name: vllm
                      image: ghcr.io/huggingface/text-generation-inference:3.0.1
                      command:
                        - sh
                        - -c
                        - "python3 -m vllm.entrypoints.openai.api_server --port 8080 --model $MODEL"
            """})
    found = _found(root, "values.yaml")
    assert _codes(found, 4) == {"NPU016"} and _codes(found, 7) == set()   # vLLM's image: NPU016's list (heldout42's rows)
    found = _found(root, "Dockerfile")
    assert _codes(found, 1) == {"NPU016"}
    found = _found(root, "vllm/lws.yaml")
    assert _codes(found, 6) == {"NPU483"}
    assert _codes(found, 10) == {"NPU447"}       # a one-line shell script keeps its line


def test_llmaz_backend_choices(tmp_path):
    def playground(backend: str) -> str:
        return f"""\
            apiVersion: inference.llmaz.io/v1alpha1
            kind: Playground
            metadata:
              name: qwen2-0--5b
            spec:
              replicas: 1
              modelClaim:
                modelName: qwen2-0--5b
              backendRuntimeConfig:
                {backend}
            """
    root = write_tree(tmp_path, {
        "sglang.yaml": playground("backendName: sglang"),
        "tgi.yaml": playground("backendName: tgi"),
        "vllm.yaml": playground("backendName: vllm # currently, only vllm supports runai streamer"),
        "trt.yaml": playground("backendName: tensorrt-llm"),
        "llamacpp.yaml": playground("backendName: llamacpp"),
        "ollama.yaml": playground("backendName: ollama"),
        "commented.yaml": playground("# backendName: sglang"),
        "other.yaml": """\
            proxy:
              backendName: vllm
            """})
    for name in ("sglang", "tgi", "vllm"):
        assert _codes(_found(root, f"{name}.yaml"), 10) == {"NPU447"}, name
    assert _codes(_found(root, "trt.yaml"), 10) == {"NPU480"}
    for name in ("llamacpp", "ollama", "commented"):
        assert _found(root, f"{name}.yaml") == [], name
    assert _found(root, "other.yaml") == []         # another tool's key of the same name


def test_nixl_lmcache_and_cuda_pathfinder_installs(tmp_path):
    root = write_tree(tmp_path, {
        "Dockerfile": """\
            FROM ubuntu:24.04
            ARG NIXL_VERSION="0.1.1"
            RUN wget "https://github.com/ai-dynamo/nixl/archive/refs/tags/${NIXL_VERSION}.tar.gz"
            RUN . .vllm/bin/activate && \\
                uv pip install ../LMCache/ && \\
                uv pip install nixl && \\
                uv cache clean
            RUN echo "nixl and lmcache come later"
            # RUN uv pip install nixl
            RUN uv pip install --system -q --no-deps "nixl==${NIXL_VERSION}"
            """,
        "requirements.txt": """\
            lmcache==0.5.2
            nixl-cu12==0.6.0
            # lmcache is optional
            requests==2.32.3
            """,
        "requirements-dev-lock.txt": """\
            cuda-bindings==13.2.0
            cuda-pathfinder==1.4.3
            numpy==2.2.6
            """})
    found = _found(root, "Dockerfile")
    for line in (3, 5, 6, 10):
        assert "NPU440" in _codes(found, line), line
    assert _codes(found, 8) == set() and _codes(found, 9) == set()
    found = _found(root, "requirements.txt")
    assert _codes(found, 1) == {"NPU440"} and _codes(found, 2) == {"NPU440"}
    assert _codes(found, 3) == set() and _codes(found, 4) == set()
    found = _found(root, "requirements-dev-lock.txt")
    assert _codes(found, 2) == {"NPU440"} and _codes(found, 3) == set()


def test_download_urls_held_in_args_are_reported_where_run_downloads_them(tmp_path):
    root = write_tree(tmp_path, {
        "Dockerfile": """\
            FROM ubuntu:24.04
            ARG NSYS_URL=https://developer.nvidia.com/downloads/assets/tools/secure/nsight-systems/2025_1/
            ARG NSYS_PKG=NsightSystems-linux-cli-public-2025.1.1.131-3554042.deb
            RUN apt-get update && apt-get install -y curl
            RUN wget ${NSYS_URL}${NSYS_PKG} &&\\
                apt install -y ./${NSYS_PKG} &&\\
                rm ${NSYS_PKG}
            RUN echo "see https://developer.nvidia.com/nsight-systems"
            """,
        "unread/Dockerfile": """\
            FROM ubuntu:24.04
            ENV NSYS_URL=https://developer.nvidia.com/downloads/assets/tools/secure/nsight-systems/2025_1/
            """})
    found = _found(root, "Dockerfile")
    assert _codes(found, 2) == set()              # the URL only names the download
    assert _codes(found, 5) == {"NPU017"}         # ... which happens here
    assert _codes(found, 8) == set()
    # a URL variable no RUN line expands keeps its finding where it is written (as before)
    assert _codes(_found(root, "unread/Dockerfile"), 2) == {"NPU017"}


def test_the_tag_arg_of_a_base_image_chosen_by_args(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": """\
        ARG BASE_IMAGE="nvcr.io/nvidia/cuda"
        ARG BASE_IMAGE_TAG="12.8.1-devel-ubuntu24.04"

        ARG RUNTIME_IMAGE="nvcr.io/nvidia/cuda"
        ARG RUNTIME_IMAGE_TAG="12.8.1-devel-ubuntu24.04"

        FROM ${BASE_IMAGE}:${BASE_IMAGE_TAG} AS build
        RUN apt-get update -y && apt-get install git -y
        """})
    found = _found(root, "Dockerfile")
    assert _codes(found, 1) == {"NPU016"} and _codes(found, 7) == {"NPU016"}
    assert _codes(found, 2) == {"NPU016"} and _severities(found, 2) == {"info"}   # the image's CUDA release
    assert _codes(found, 4) == set() and _codes(found, 5) == set()               # read by no FROM


SUPERBENCH = """\
    # SuperBench Config
    # cudnn-function: the cuDNN benchmark
    version: v0.12
    superbench:
      enable: null
      var:
        default_local_mode: &default_local_mode
          enable: true
          modes:
            - name: local
              proc_num: 8
              prefix: CUDA_VISIBLE_DEVICES={proc_rank}
              parallel: yes
      benchmarks:
        kernel-launch:
          <<: *default_local_mode
        nccl-bw:default:
          enable: true
          modes:
            - name: local
              proc_num: 1
              parallel: no
          parameters:
            ngpus: 8
        ib-loopback:
          enable: true
          modes:
            - name: local
              proc_num: 4
              prefix: PROC_RANK={proc_rank} IB_DEVICES=0,2,4,6 NUMA_NODES=1,0,3,2
        cpu-memory-bw-latency:
          enable: false
        gpu-burn:
          enable: false
        mem-bw:
          enable: true
          modes:
            - name: local
              proc_num: 8
              prefix: CUDA_VISIBLE_DEVICES={proc_rank} numactl -N $(({proc_rank}/2))
        gpu-copy-bw:perf:
          enable: true
        cudnn-function:
          <<: *default_local_mode
"""


def test_superbench_entries_and_mode_prefixes(tmp_path):
    root = write_tree(tmp_path, {
        "superbench/config/azure_ndmv4.yaml": SUPERBENCH,
        "superbench/config/chosen.yaml": """\
            superbench:
              enable:
                - nccl-bw:default
              benchmarks:
                nccl-bw:default:
                  parameters:
                    ngpus: 8
                cudnn-function:
                  enable: true
            """,
        "bench.yaml": """\
            benchmarks:
              cudnn-function: true
              nccl-bw: 8
            """})
    found = _found(root, "superbench/config/azure_ndmv4.yaml")
    assert _codes(found, 12) == {"NPU004"}           # the prefix's CUDA_VISIBLE_DEVICES
    assert _codes(found, 15) == {"NPU088"}           # kernel-launch, enabled through the merge key
    assert _codes(found, 17) == {"NPU139"}           # nccl-bw:default
    assert _codes(found, 24) == set() and _codes(found, 30) == set()     # ngpus count, an IB test's prefix
    assert _codes(found, 31) == set() and _codes(found, 33) == set()     # disabled entries
    assert _codes(found, 35) == {"NPU088"} and _codes(found, 40) == {"NPU004"}
    assert _codes(found, 41) == {"NPU088"} and _codes(found, 43) == {"NPU088"}
    assert _codes(found, 1) == set() and _codes(found, 2) == set()       # comments
    found = _found(root, "superbench/config/chosen.yaml")
    assert _codes(found, 5) == {"NPU139"} and _codes(found, 8) == set()  # not in the top-level enable list
    assert _found(root, "bench.yaml") == []          # not a SuperBench config


def test_uv_pip_sync_egl_vendor_files_instance_types_and_cuda_image_paths(tmp_path):
    root = write_tree(tmp_path, {
        "Dockerfile": """\
            FROM mcr.microsoft.com/aifx/acpt/stable-ubuntu2004-cu118-py38-torch211
            RUN uv pip sync /tmp/requirements.txt --extra-index-url https://download.pytorch.org/whl/cu113 --index-strategy=unsafe-best-match
            RUN uv pip sync /tmp/requirements.txt --extra-index-url https://download.pytorch.org/whl/cpu
            RUN mkdir -p /usr/share/glvnd/egl_vendor.d && echo '{"ICD" : {"library_path" : "libEGL_nvidia.so.0"}}' \\
                > /usr/share/glvnd/egl_vendor.d/10_nvidia.json
            RUN mkdir -p /usr/share/glvnd/egl_vendor.d && echo '{}' > /usr/share/glvnd/egl_vendor.d/50_mesa.json
            """,
        "Dockerfile.cpu": """\
            FROM mcr.microsoft.com/aifx/acpt/stable-ubuntu2004-py38-torch211
            """,
        "inferenceset.yaml": """\
            apiVersion: kaito.sh/v1alpha1
            kind: InferenceSet
            spec:
              template:
                resource:
                  instanceType: "Standard_NC24ads_A100_v4"
            ---
            spec:
              template:
                resource:
                  # instanceType: "Standard_NC24ads_A100_v4"
                  instanceType: "Standard_D8s_v5"
            """})
    found = _found(root, "Dockerfile")
    assert _codes(found, 1) == {"NPU016"}
    assert _codes(found, 2) == {"NPU018"} and _codes(found, 3) == set()
    assert _codes(found, 5) == {"NPU092"} and _codes(found, 6) == set()
    assert _found(root, "Dockerfile.cpu") == []
    found = _found(root, "inferenceset.yaml")
    assert _codes(found, 6) == {"NPU028"}
    assert _codes(found, 10) == set() and _codes(found, 11) == set()
