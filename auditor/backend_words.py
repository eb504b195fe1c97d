"""Words that name an accelerator backend in identifiers, paths, strings and image names, read by the static pass
(auditor/static/backends.py) and the project-file readers (auditor/project/dockerfile.py) alike: a layer below both.
One table of words (`_BACKEND_ALIASES`, with the name-only `_VARIANT_WORDS` and `_MEMBER_ONLY_WORDS`); each use that
reads fewer or more words names its subset here (`MEMBER_WORDS`)."""
from __future__ import annotations

import ast
import re

# Words that name an accelerator backend; gpu/nvidia count as cuda, hip/amd as rocm, ascend/hccl as npu.
_BACKEND_ALIASES = {
    "cuda": "cuda", "gpu": "cuda", "nvidia": "cuda", "nccl": "cuda", "cudnn": "cuda",
    "rocm": "rocm", "hip": "rocm", "amd": "rocm",
    "npu": "npu", "ascend": "npu", "hccl": "npu", "torch_npu": "npu",
    # Ascend C, the NPU's kernel language, and aclnn, CANN's operator API (`ops/ascendc/` operator packages built
    # from Ascend C kernels, fla's `ops/ascendc/`, `_aclnn_ctypes.py`): named only in code for Ascend (pd55)
    "ascendc": "npu", "aclnn": "npu",
    "xpu": "xpu", "mps": "mps", "hpu": "hpu", "habana": "hpu", "xla": "xla", "tpu": "xla",
    "mlu": "mlu", "musa": "musa", "gcu": "gcu", "sdaa": "sdaa", "dcu": "rocm",
    "gaudi": "hpu", "ipex": "xpu", "maca": "maca", "metax": "maca", "camb": "mlu", "cambricon": "mlu",
    # other accelerator vendors' names for their own stacks (FlagGems `backend/_kunlunxin/`, FlagPerf `iluvatar/`)
    "kunlunxin": "kunlun", "kunlun": "kunlun", "iluvatar": "corex", "corex": "corex", "mthreads": "musa",
    "hygon": "rocm", "enflame": "gcu", "biren": "biren", "tecorigin": "sdaa",
    # Intel's OpenVINO runtime (optimum-intel's `openvino/` package, `test_openvino_*.yml`): CPU / Intel GPU / NPU,
    # never CUDA or Ascend; its PyTorch side feeds or traces models on the host
    "openvino": "openvino",
    # Graphcore's IPU: PopTorch compiles a model for the IPU from the host (`poptorch.inferenceModel(model)`), its
    # inputs and parameters stay CPU tensors (optimum-graphcore; heldout17, after the end draw)
    "ipu": "ipu", "poptorch": "ipu", "graphcore": "ipu",
    # AWS Neuron (Trainium / Inferentia): the neuronx-cc compiler, its NKI kernel language (`nki_flash_attn_func`,
    # `flash_attention_nki.py`), `torch_neuronx` / `neuronx_distributed` (t11q); not the bare word `neuron`, which
    # names units of a network in pruning code (`neuron_mask`)
    "neuronx": "neuron", "nki": "neuron", "trainium": "neuron", "inferentia": "neuron",
    # Apple's MLX array framework (`import mlx.core as mx`, `device == "mlx"`, `scnet_mlx.py`): Apple silicon only (t11r)
    "mlx": "mlx",
    # ZLUDA, the CUDA-on-AMD-GPU layer (OneTrainer's `modules/zluda/ZLUDA.py`, SD.Next's `zluda_installer.py`): code
    # written for it runs only where that layer replaces the CUDA runtime, never on Ascend (t11w)
    "zluda": "zluda",
    # Tenstorrent's Grayskull / Wormhole accelerators (tt-buda's `setup(author='Tenstorrent', description='AI/ML
    # framework for Tenstorrent devices')`): its compiler's `pybuda._C` drives them, not CUDA (t11z)
    "tenstorrent": "tenstorrent",
}
# Backends that are neither CUDA nor NPU: code written only for them never runs on Ascend.
OTHER_BACKENDS = frozenset(set(_BACKEND_ALIASES.values()) - {"cuda", "npu"})
# Runtimes of other toolkits whose PyTorch side only holds host values: OpenVINO's model wrappers take and return
# CPU tensors (`torch.from_numpy(ov_outputs)`), its exporter traces on the CPU, `OVModel.half()` compresses the IR.
# Hints about device work (host syncs, dtype facts, the NPU's op support) in their code concern nothing on the NPU
# (docs/precision.md, t11d). ONNX Runtime and TensorRT are not listed: their CUDA / TensorRT execution providers
# run the same code on NVIDIA GPUs, so a CUDA line there may be real.
# Apple's MLX (t11r) likewise: its arrays live in MLX (Apple silicon), the PyTorch side converts to and from them.
# Graphcore's PopTorch too: the IPU runs the compiled graph, the PyTorch side holds host tensors.
HOST_RUNTIMES = frozenset({"openvino", "mlx", "ipu"})
# Runtimes whose code's host syncs (`.item()`, `.tolist()`) are that runtime's cost, never a copy from the NPU:
# AWS Neuron's transformers-neuronx feeds its compiled graphs from host tensors (`cache_ids.max().item()` on the
# caller's CPU tensor before `inputs_host_to_device`; heldout18, 6 of 6 rows false). Its dtype facts stay findings:
# neuronx-distributed's bf16 casts are choices a port keeps (heldout15, true).
HOST_SYNC_RUNTIMES = HOST_RUNTIMES | {"neuron"}
# Runtimes of another vendor's NPU (not Ascend): Intel's intel_npu_acceleration_library (ipex-llm's `npu_models/`,
# `transformers/npu_model.py`); a folder named for `npu` whose files import one is that vendor's (auditor/static/other_npu.py)
OTHER_NPU_RUNTIMES = frozenset({"intel_npu_acceleration_library"})
# Runtimes of a non-CUDA accelerator whose library exports a model to ONNX on the host and compiles it with the
# vendor's compiler (policy (m)): Qualcomm Cloud AI 100's `qaicrt` (its Platform SDK's runtime, which executes the
# compiled QPC; efficient-transformers' `QEfficient` package exports, `qaic-exec` compiles). Not ONNX Runtime or
# TensorRT, whose CUDA providers run the same Python on NVIDIA GPUs ((d2) stays).
EXPORT_COMPILE_RUNTIMES = frozenset({"qaicrt"})
# That vendor's PyTorch device extension: code importing it trains or runs torch on the accelerator itself
# (QEfficient's `finetune/` imports `torch_qaic` for the "qaic" device), so its device work is real
EXPORT_COMPILE_DEVICE_PLUGINS = frozenset({"torch_qaic"})
BACKEND_NAMES = frozenset(_BACKEND_ALIASES)
# A backend word inside an identifier or string: `is_torch_npu_available`, `CudaPlatform`, "npu:0", `IS_XPU`
# (lower-case letters on either side make it part of another word: "chip", "timestamps", "gpus").
_BACKEND_WORD = re.compile(r"(?<![a-z])(?i:(" + "|".join(sorted(_BACKEND_ALIASES, key=len, reverse=True))
                           + r"))(?![a-z])")


# AMD GPU architectures and products name ROCm (`_require_gfx950`, `configs/MI355X/`, `cdna4`): LLVM's AMDGPU
# targets gfx9xx / gfx1xxx, the CDNA generations, Instinct MI200 / MI300 / MI350 parts
_AMD64 = re.compile(r"(?i)amd64")
_AMD_WORD = re.compile(r"(?<![a-z0-9])(?i:gfx9\d[\da-f]|gfx1[0-2]\d{2}|cdna\d?|mi[23]\d{2}[axs]?)(?![a-z0-9])")


def backends_in_text(text: str) -> set[str]:
    """The backends a piece of source names through identifiers, attribute names and strings."""
    if "md64" in text:
        text = _AMD64.sub("", text)     # `amd64` (x86-64: `linux/amd64`, `amd64/ubuntu`) is a CPU, not AMD's GPU stack
    # an upper-case word continuing an upper-case run is inside that word: the NPU of ComfyUI's `INPUT_TYPES`, the
    # AMD of `LAMDA`, names no backend (t20c, tuned_t20c); `IS_XPU`, `NPUModel`, `CudaPlatform` keep theirs
    found = {_BACKEND_ALIASES[m.group(1).lower()] for m in _BACKEND_WORD.finditer(text)
             if not (m.start() and text[m.start() - 1].isupper() and m.group(1)[:2].isupper())}
    if _AMD_WORD.search(text):
        found.add("rocm")
    if "torch.accelerator" in text or "current_accelerator" in text:
        found.add("npu")    # the current accelerator: npu on Ascend (torch_npu registers it as PrivateUse1)
    return found


# Build-variant words that name a backend only in the names of files, images and catalogue entries, where a project
# spells its per-backend builds: LocalAI's `requirements-cublas13.txt` beside `-hipblas`, `-intel`, `-l4t12`, `-mps`
# (its libbackend.sh installs `requirements-${BUILD_TYPE}.txt`, BUILD_TYPE one of cublas / hipblas / intel / l4t),
# its gallery's `intel-sycl-f16-llama-cpp`, `vulkan-llama-cpp`, `metal-llama-cpp`, `nvidia-l4t-arm64-llama-cpp`
# images (`intel-sycl-*` by its SYCL word). cuBLAS / hipBLAS are CUDA's and ROCm's BLAS (the llama.cpp build options GGML_CUDA / GGML_HIP once were
# LLAMA_CUBLAS / LLAMA_HIPBLAS), L4T is NVIDIA's Linux for Jetson, SYCL is Intel's oneAPI GPU path. Not read in
# code: `cublas` in an identifier is a library call, not a backend choice.
def backends_in_expression(node: ast.AST) -> set[str]:
    """backends_in_text over the words of an expression, without building its source text: names, attributes,
    keyword names and strings (`is_torch_npu_available()`, `device.type == "npu"`, `torch.npu.is_available()`)."""
    words: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            words.append(n.id)
        elif isinstance(n, ast.Attribute):
            words.append(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            words.append(n.arg)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            words.append(n.value)
    return backends_in_text(" ".join(words))


_VARIANT_WORDS = {"cublas": "cuda", "l4t": "cuda", "jetson": "cuda", "hipblas": "rocm", "sycl": "xpu",
                  "vulkan": "vulkan", "metal": "mps"}
# (not `intel`: `finetune_intel_gpu.yaml` is an Intel GPU's, and boost's `config/intel.hpp` names a compiler)
_TRAILING_VERSION = re.compile(r"\d+$")


def name_word_backends(word: str) -> set[str]:
    """The backends one word of a file, image or entry name names (`cublas12` / `cuda13` / `l4t` -> cuda,
    `hipblas` -> rocm, `sycl` -> xpu, `vulkan` -> vulkan); empty for other words."""
    low = word.lower()
    variant = _VARIANT_WORDS.get(_TRAILING_VERSION.sub("", low))
    return {variant} if variant else backends_in_text(low)


# Words that name a backend only as a member of a per-backend set of build stages or compose profiles (`builder-cpu`
# beside `builder-cuda`, `profiles: [cann]`), never in code: the host CPU, CANN (Ascend's toolkit), Intel's builds
# (and Microsoft's DirectML, the Windows GPU build of an application's release set: `build-windows-directml.yml` beside
# `build-windows-cuda-12.6.yml` and `build-windows-cpu.yml`; tq46b)
_MEMBER_ONLY_WORDS = {"cpu": "cpu", "cann": "npu", "intel": "xpu", "directml": "directml"}
_WORD_BACKENDS = {**_BACKEND_ALIASES, **_VARIANT_WORDS, **_MEMBER_ONLY_WORDS}
# The words of the table that name a member of such a set (pd32, auditor/project/hits.cuda_member_siblings).
# Fewer than the code words: `gpu` (a `builder-gpu` stage may serve any GPU), library words (nccl, cudnn, hccl,
# torch_npu) and other vendors' stack names are no member's name; `cu121` names CUDA's (MEMBER_CUDA_BUILD).
MEMBER_WORDS = {word: _WORD_BACKENDS[word] for word in (
    "cuda", "nvidia", "cpu", "xpu", "rocm", "hip", "amd", "npu", "ascend", "cann", "mps", "metal", "hpu", "gaudi",
    "intel", "openvino", "vulkan", "tpu", "musa", "mlu", "ipex", "directml")}
MEMBER_CUDA_BUILD = re.compile(r"^cu\d{2,3}$")      # `cu121`
# CANN's toolkit release as a word of a file name (`910b_cann8.0.RC2_aarch64.yaml`, MagicDriveDiT's Ascend environment
# beside `a800_cu118.yaml`): the Ascend counterpart of a CUDA build tag (tq54e)
MEMBER_CANN_BUILD = re.compile(r"^cann\d+$")
# torch's CUDA runtime wheels (`nvidia-cuda-runtime-cu12`, `nvidia-cudnn-cu12`, `nvidia-nccl-cu11`): what a pip
# freeze of a CUDA torch environment lists beside torch (its `Requires-Dist` on Linux)
TORCH_CUDA_WHEEL = re.compile(r"^nvidia-[a-z0-9-]+-cu\d{2}$")
# an NVIDIA GPU type as cloud launchers name it (SkyPilot's `sky show-gpus`: `H100-SXM`, `A100-80GB`, `L40S`, `RTX4090`,
# `A10G`), with an optional `:count`; TPUs, Trainium / Inferentia, Gaudi and AMD's `MI300X` are not NVIDIA's
NVIDIA_GPU_TYPE = re.compile(r"(?i)^(?:a10g?|a\d{2,3}|a[2-6]000|rtxa?\d{4}\w*|rtx-?pro-?\d+\w*|[hb][12]\d0|gh200|gb200|h800|"
                             r"l4|l40s?|t4g?|v100|k80|p100|p40?|titan\w*|tesla\w*|quadro\w*)"
                             r"(?:-(?:sxm\d?|pcie|mega|nvl|\d+gb))*(?::\d+(?:\.\d+)?)?$")
# the same runtimes as conda packages, which the CUDA `pytorch` / `pytorch-cuda` build pulls in (`cuda-cudart`,
# `libcufft`, the pytorch channel's `torchtriton`): what a `conda env export` lists beside it (policy (r))
TORCH_CUDA_CONDA = re.compile(r"^(?:cuda-(?:cudart|cupti|libraries|nvrtc|nvtx|opencl|runtime|version)(?:-dev)?"
                              r"|lib(?:cublas|cufft|cufile|curand|cusolver|cusparse|npp|nvfatbin|nvjitlink|nvjpeg)"
                              r"(?:-dev)?|torchtriton|cudnn|nccl)$")


def member_backend(word: str) -> str | None:
    """The backend a lower-case word names as the member of a per-backend set of stages or profiles (`cuda`,
    `nvidia`, `cu121` -> cuda; `cpu` -> cpu; `cann` -> npu), or None (`gpu`, `builder`)."""
    return MEMBER_WORDS.get(word) or ("cuda" if MEMBER_CUDA_BUILD.match(word) else None)
