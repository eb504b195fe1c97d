"""An inventory of a CUDA source file (.cu / .cuh), so the porting task says what is in it: kernels
(`__global__` functions), launches (`<<<...>>>`), inline PTX, and calls into NVIDIA libraries. A C
tokenizer strips comments and string literals first, so a kernel named in a comment is not counted."""
from __future__ import annotations

import bisect
import re
from collections import Counter

# comments, string and character literals (with escapes): replaced by spaces, newlines kept
_NOISE_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_BOUNDS_RE = re.compile(r"\b__launch_bounds__\s*\([^)]*\)")
# also an explicit instantiation, whose name carries its template arguments (relion's `template __global__ void
# CudaKernels::cuda_kernel_translate2D<XFLOAT>(XFLOAT *, ...)`, t32b)
KERNEL_RE = re.compile(r"\b__global__\b[\s\w:<>,*&]*?\b(\w+)\s*(?:<[\w\s:,*&<>]*>\s*)?\(")
_LAUNCH_RE = re.compile(r"<<<")
# `#include <cuda.h>`, `<cuda_runtime_api.h>`, `<cublas_v2.h>`, a `.cuh` header or another `.cu` file (the
# instantiation files of flash-attention): where a file without a `__global__` kernel shows it is CUDA code
_CUDA_INCLUDE_RE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]*/)?(?:cuda\w*\.h|cu(?:blas|dnn|rand|fft|sparse|solver)\w*\.h|nccl\.h|'
    r'[^>"/]*\.cuh?)[>"]'
    # the CUDA template libraries' headers (t15f: FlashMLA's fmha_cutlass_bwd_sm100.cuh, `#include <cute/tensor.hpp>`)
    r'|^[ \t]*#[ \t]*include[ \t]*<(?:cute|cutlass|cub|thrust|cooperative_groups)(?:/[^>]*)?(?:\.h|\.hpp|\.cuh)?>'
    # RAPIDS' C++ libraries, CUDA-only (tp46a: a Spark RAPIDS UDF's `#include <cudf/column/column_factories.hpp>`;
    # libcudf / librmm / libraft / libcuml build only with nvcc, rapids.ai "libcudf")
    r'|^[ \t]*#[ \t]*include[ \t]*<(?:cudf|rmm|raft|cuml|cugraph|cuvs)/[^>]*>'
    # a project's own CUTLASS extension, in CUTLASS's folder layout (t17a: QUIK's `"symmetric/gemm/device/
    # gemm_dequant.h"`, after the include/cutlass/gemm/device/, epilogue/threadblock/ ... folders of
    # github.com/NVIDIA/cutlass): device templates, the file's CUDA code
    r'|^[ \t]*#[ \t]*include[ \t]*"(?:[^"]*/)?(?:gemm|conv|epilogue|reduction)/(?:device|kernel|threadblock|warp|thread)/'
    r'[^"/]+\.h"'
    # CUTLASS itself by a quoted path (`"cutlass/half.h"`, its unit tests' `"../common/cutlass_unit_test.h"`)
    r'|^[ \t]*#[ \t]*include[ \t]*"[^"]*cutlass[^"]*"'
    # NVIDIA cuda-samples' helpers, copied into many trees (t20b: 3DTopia-XL's mvpraymarch, ngp_pl): float3 / float4
    # operators and checks as `__host__ __device__` code on CUDA's vector types
    r'|^[ \t]*#[ \t]*include[ \t]*[<"](?:[^>"]*/)?helper_(?:math|cuda)\.h[>"]',
    re.M | re.I)       # `<ATen/cuda/CUDAContext.h>` too
_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include\b', re.M)
# a project's kernel launch template (`#include "flash_fwd_launch_template.h"`, `"mha_bwd_launch_template.h"`): the
# header whose kernels an instantiation file compiles, after any config include (Block-Sparse-Attention's
# `#include "namespace_config.h"` first, tuned on project test22; test4's and tuned_t17h's labels sit on it)
_LAUNCH_TEMPLATE_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(?:[^"]*/)?[^"/]*launch[^"/]*\.(?:h|hpp|cuh)"',
                                         re.M | re.I)
# an include of a CUDA library header, by either spelling (`"cutlass/numeric_conversion.h"`, `<cuda_fp16.h>`)
_CUDA_LIBRARY_INCLUDE_RE = re.compile(
    r'[ \t]*#[ \t]*include[ \t]*[<"](?:[^>"]*/)?(?:cuda\w*\.h|cu(?:blas|dnn|rand|fft|sparse|solver)\w*\.h|nccl\.h)[>"]'
    r'|[ \t]*#[ \t]*include[ \t]*[<"](?:cute|cutlass|cub|thrust|cooperative_groups)/'
    r'|[ \t]*#[ \t]*include[ \t]*[<"](?:[^>"]*/)?helper_(?:math|cuda)\.h[>"]', re.I)
# a quoted project include whose file name has `cuda` as a word (`"cuda_util.cuh"`, `"utils_cuda.h"`)
_CUDA_NAMED_INCLUDE_RE = re.compile(r'[ \t]*#[ \t]*include[ \t]*"(?:[^"]*/)?(?:[^"/]*[_\-])?cuda(?:[_\-][^"/]*)?\.(?:h|hpp|cuh)"',
                                    re.I)
# CUDA-only types and builtins a header may hold without any qualifier (`struct __align__(8) vec4_t`, `__half2`)
_CUDA_TYPES_RE = re.compile(r"\b(?:__align__|__half2?|__nv_bfloat162?|__nv_fp8\w*|half2|dim3|threadIdx|blockIdx|"
                            r"blockDim|gridDim|warpSize)\b")
# CUDA-only code in a file with no kernel and no CUDA include: device / host qualifiers, nvcc's macros, CUDA
# runtime types and calls (`cudaDeviceProp`, `cudaStream_t`, `cudaGetDeviceCount(`), launches; and an extension
# header's CUDA-tensor check (`#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), ...)`: SpargeAttn's
# pytorch_extensions_utils.cuh, t16a, tuned on project test18), which rejects every NPU tensor
_CUDA_CODE_RE = re.compile(
    r"\b(?:__(?:device|host|shared|constant|forceinline)__|__CUDACC\w*|__CUDA_ARCH__|cuda[A-Z]\w*|CUDA_\w*CHECK)\b|<<<"
    r"|\bis_cuda(?=\s*\(\s*\))")
# device code a file writes itself (not the CUDA runtime types an instantiation file's signatures name, nor a `<<<`
# launch of a kernel its project headers define: ByteTransformer's attention_nofused.cu is host code over them, whose
# port starts at the first include, tp53a)
_DEVICE_CODE_RE = re.compile(r"\b(?:__(?:device|shared|constant)__|__CUDA_ARCH__)\b")
# a Caffe2-style operator's CUDA implementation, written as a specialisation on the CUDA context (`template <> bool
# MultiSliceOp<CUDAContext>::RunOnDevice()`, registered by `REGISTER_CUDA_OPERATOR`; caffe2/core/operator.h, and
# Blaze's copy in x-deeplearning): host code the file writes itself for the GPU, where its port starts (tp52b)
_CUDA_CONTEXT_OP_RE = re.compile(r"\w+\s*<\s*CUDAContext\s*>\s*::\s*\w+")
_ASM_RE = re.compile(r"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\(")
# library prefix -> the name a porting engineer knows
_LIBRARIES = {
    "cublasLt": "cuBLASLt", "cublas": "cuBLAS", "cudnn": "cuDNN", "nccl": "NCCL", "cusparse": "cuSPARSE",
    "cufft": "cuFFT", "curand": "cuRAND", "cusolver": "cuSOLVER", "cub::": "CUB", "thrust::": "Thrust",
    "cutlass::": "CUTLASS", "cute::": "CuTe", "wmma::": "WMMA (tensor cores)", "__shfl": "warp shuffles",
}
_LIB_RE = re.compile(r"\b(" + "|".join(re.escape(p) for p in sorted(_LIBRARIES, key=len, reverse=True)) + r")\w*")


def cxx_name_lines(text: str, names: list[str]) -> list[tuple[int, int, str]]:
    """(line, column, name) of each qualified C++ name in `names` (`torch::kCUDA`) outside comments and string
    literals; a longer qualification of the same name (`at::DeviceType::CUDA` for `DeviceType::CUDA`) is its own."""
    if not names:
        return []
    pattern = re.compile(r"(?<![\w:])(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    code = _strip(text)
    starts = [0] + [i + 1 for i, ch in enumerate(code) if ch == "\n"]
    out = []
    for hit in pattern.finditer(code):
        line = bisect.bisect_right(starts, hit.start())
        out.append((line, hit.start() - starts[line - 1] + 1, hit.group(0)))
    return out


def _strip(text: str) -> str:
    return _NOISE_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def inventory(text: str, header: bool = False) -> dict:
    code = _BOUNDS_RE.sub(lambda m: " " * len(m.group(0)), _strip(text))
    kernels = []
    first_line = None
    for m in KERNEL_RE.finditer(code):
        kernels.append(m.group(1))
        if first_line is None:
            first_line = code.count("\n", 0, m.start()) + 1
    libraries = Counter(_LIBRARIES[m.group(1)] for m in _LIB_RE.finditer(code))
    return {
        "kernels": kernels,
        "launches": len(_LAUNCH_RE.findall(code)),
        "inline_asm": len(_ASM_RE.findall(code)),
        "libraries": dict(sorted(libraries.items())),
        "first_kernel_line": first_line or _first_include_line(text, code, header),
    }


def _first_include_line(text: str, code: str, header: bool = False) -> int:
    """No kernel in the file: the line of its first CUDA include (else of its first CUDA-only code: `__device__`,
    `__CUDACC_VER_MAJOR__`, `cudaDeviceProp`, unless every include is a project header, `#include
    "flash_bwd_launch_template.h"`, whose code the file instantiates; else its first project include named for CUDA,
    `"simulator_cuda.h"`; else its first include, else 1), the line a porting engineer changes first. Names are read
    from the text (`code` blanks string literals, so `#include "x.cu"` too); an include inside a comment is not one
    (`code` has no `#` there)."""
    code_lines = code.splitlines()
    includes = [m for m in _INCLUDE_RE.finditer(text)
                if code_lines[text.count("\n", 0, m.start())].lstrip().startswith("#")]
    local_only = bool(includes) and all(text[m.end():].lstrip().startswith('"') for m in includes)
    # a header's angle-bracket includes of the C / C++ standard library (vLLM's dtype_float32.cuh: `#include
    # "attention_generic.cuh"` then `<stdint.h>`) build anywhere: they do not make its first include a CUDA one (t17h)
    own_or_std = bool(includes) and all(
        text[m.end():].lstrip().startswith('"')
        or not (_CUDA_INCLUDE_RE.match(text, m.start()) or _CUDA_LIBRARY_INCLUDE_RE.match(text, m.start()))
        for m in includes)
    if (local_only or own_or_std) and header:
        # a `.cuh` header that includes only the project's own headers (FlashInfer's state.cuh: `#include
        # "math.cuh"`): the CUDA code it writes itself is where its port starts (t15v, tuned on project test16),
        # unless it includes a CUDA library by a quoted path (`#include "cutlass/numeric_conversion.h"`). A `.cu`
        # file's project `.cuh` include still comes first: it brings the kernels the file instantiates
        # (ThunderKittens' tests: `#include "reductions.cuh"`, tuned_t15f's label)
        library = next((m for m in includes if _CUDA_LIBRARY_INCLUDE_RE.match(text, m.start())), None)
        # a project header named for CUDA (svox2's `#include "cuda_util.cuh"`: its device helpers and CUDA checks)
        # is where the port starts, as a library include is (pd7, tuned on project test23)
        cuda_named = next((m for m in includes if _CUDA_NAMED_INCLUDE_RE.match(text, m.start())), None)
        own = _CUDA_CODE_RE.search(code)
        # a C++ header named for CUDA (tensorRT_Pro's `#include "cuda_tools.hpp"`, host-side checks and helpers) before
        # CUDA code the header writes itself (`cudaStream_t stream);` in its launchers' declarations): that code is
        # where the port starts; a `.cuh` include brings device code, and still comes first (tp47b, test129)
        named = _CUDA_NAMED_INCLUDE_RE.match(text, cuda_named.start()) if cuda_named is not None else None
        if library is None and named is not None and (own is None or named.group(0).lower().endswith('.cuh"')):
            return text.count("\n", 0, named.start()) + 1
        if library is None and own:
            return code.count("\n", 0, own.start()) + 1
    launch = None
    if local_only:
        launch = next((m for m in _LAUNCH_TEMPLATE_INCLUDE_RE.finditer(text)
                       if code_lines[text.count("\n", 0, m.start())].lstrip().startswith("#")), None)
    for pattern in (_CUDA_INCLUDE_RE, _CUDA_CODE_RE, _INCLUDE_RE):
        if pattern is _INCLUDE_RE and launch is not None:
            return text.count("\n", 0, launch.start()) + 1
        if pattern is _INCLUDE_RE:
            # no CUDA include or code of its own: a project header named for CUDA brings it (qsim's apps and tests,
            # `#include "../lib/simulator_cuda.h"` after `<unistd.h>` and the CPU headers; t33b, tuned on test58)
            cuda_named = next((m for m in includes if _CUDA_NAMED_INCLUDE_RE.match(text, m.start())), None)
            if cuda_named is not None:
                return text.count("\n", 0, cuda_named.start()) + 1
        if pattern is _CUDA_CODE_RE:
            if local_only:
                # flash-attention's instantiation files: the kernels come from the project header; device code
                # the file writes itself (`#if __CUDA_ARCH__ >= 700` / `__nanosleep` in FlagCX's kernel file, whose
                # `__global__` / `__device__` hide behind the project's macros) is still where the port starts (t15s)
                own = min((m for m in (_DEVICE_CODE_RE.search(code), _CUDA_CONTEXT_OP_RE.search(code)) if m),
                          key=lambda m: m.start(), default=None)
                if own:
                    return code.count("\n", 0, own.start()) + 1
                continue
            m = pattern.search(code)          # comments and strings blanked: a name in a comment is not code
            if m:
                return code.count("\n", 0, m.start()) + 1
            continue
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            if line <= len(code_lines) and code_lines[line - 1].lstrip().startswith("#"):
                return line
    return 1


# TensorRT's C++ API: its headers (`NvInfer.h`, `NvInferPlugin.h`, `NvOnnxParser.h`, the Caffe / UFF parsers) and
# namespaces (`nvinfer1::`, `nvonnxparser::`; NVIDIA TensorRT C++ API reference)
_TENSORRT_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:[^>"]*/)?(?:NvInfer\w*|NvOnnxParser\w*|NvCaffeParser|'
                                  r'NvUffParser)\.h[>"]', re.M)
_TENSORRT_NAME_RE = re.compile(r"(?<![\w:])(?:nvinfer1|nvonnxparser|nvcaffeparser1|nvuffparser)\s*::")
# a project header named for TensorRT (`"trt_dep.hpp"`, `"tensorrt_utils.h"`, `"trt/engine.h"`): `trt` / `tensorrt`
# as a word of its path
_TENSORRT_NAMED_INCLUDE_RE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*"(?:[^"]*[/_\-])?(?:trt|tensorrt)(?:[/_\-.][^"]*)?"', re.M | re.I)


# a TensorRT plugin's `enqueue` defined in the file (`int32_t ArgMaxPlugin::enqueue(PluginTensorDesc const* ...)`):
# the custom layer runs the project's CUDA kernels (from its own headers), which are the port (NPU372 stays)
_PLUGIN_ENQUEUE_RE = re.compile(r"\b\w+\s*::\s*enqueue\s*\(")


def tensorrt_host_line(text: str) -> int | None:
    """The line where a `.cu` file that is TensorRT host code starts being so: a file with no kernel, launch, inline
    PTX or device code of its own and no TensorRT plugin `enqueue` (nvcc compiles it as C++ beside the CUDA runtime:
    BiSeNet's tensorrt/segment.cu and trt_dep.cu, built into a TensorRT engine runner) that uses TensorRT's API. The
    first of its own TensorRT includes and `nvinfer1::` names, else its first include of a project header named for
    TensorRT (the wrapper that brings the API in); None for anything else. Its port is the TensorRT deployment, not a
    kernel."""
    code = _strip(text)
    if KERNEL_RE.search(code) or _LAUNCH_RE.search(code) or _ASM_RE.search(code) or _DEVICE_CODE_RE.search(code) \
            or _PLUGIN_ENQUEUE_RE.search(code):
        return None
    code_lines = code.splitlines()

    def real(m: re.Match) -> bool:       # a `#include` line, not one inside a comment
        line = text.count("\n", 0, m.start())
        return line < len(code_lines) and code_lines[line].lstrip().startswith("#")

    own = [text.count("\n", 0, m.start()) + 1 for m in _TENSORRT_INCLUDE_RE.finditer(text) if real(m)]
    name = _TENSORRT_NAME_RE.search(code)
    if name is not None:
        own.append(code.count("\n", 0, name.start()) + 1)
    if own:
        return min(own)
    wrapper = next((m for m in _TENSORRT_NAMED_INCLUDE_RE.finditer(text) if real(m)), None)
    return text.count("\n", 0, wrapper.start()) + 1 if wrapper is not None else None


def plain_cpp_header(text: str) -> bool:
    """A `.cuh` file with nothing of CUDA in it: no kernel, no CUDA or project include, no device code or CUDA
    runtime name (FlashInfer's rope.cuh: an enum and `#include <string>`); plain C++ that builds anywhere (t15v)."""
    code = _strip(text)
    code_lines = code.splitlines()
    includes = [m for m in _INCLUDE_RE.finditer(text)
                if code_lines[text.count("\n", 0, m.start())].lstrip().startswith("#")]
    return not (KERNEL_RE.search(code) or _CUDA_CODE_RE.search(code) or _LIB_RE.search(code) or _CUDA_TYPES_RE.search(code)
                or _CUDA_INCLUDE_RE.search(text) or _ASM_RE.search(code)
                or any(text[m.end():].lstrip().startswith('"') for m in includes))


# what a source file holds besides code: preprocessor lines (`#include`, `#pragma once`), empty namespaces
# (`namespace FlexFlow {};`) and stray semicolons
_PREPROCESSOR_LINE_RE = re.compile(r"^[ \t]*#[^\n]*", re.M)
_EMPTY_NAMESPACE_RE = re.compile(r"\bnamespace(?:\s+[\w:]+)?\s*\{\s*\}\s*;?")


# an include that brings CUDA source into the file (flash-attention's instantiation files: `#include
# "flash_fwd_hdim64_e4m3_packgqa_sm90.cu"`, `"multi_tensor_apply.cuh"`, a kernel launch template)
_SOURCE_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"][^>"]*\.cuh?[>"]', re.M | re.I)


def no_code(text: str) -> bool:
    """A CUDA source with no code at all (tq54b, heldout70: FlexFlow's empty `tests/ops/*_test.cu`, 0 bytes, and
    `src/ops/mean.cu`, an include of its op's header and `namespace FlexFlow {};`): comments, preprocessor lines and
    empty namespaces only, and no include of CUDA source (`.cu` / `.cuh`, a launch template) that it compiles. No
    kernel, launch or CUDA call to port: nvcc compiles it to an empty object."""
    if _SOURCE_INCLUDE_RE.search(text) or _LAUNCH_TEMPLATE_INCLUDE_RE.search(text):
        return False
    code = _PREPROCESSOR_LINE_RE.sub("", _strip(text))
    while True:
        emptied = _EMPTY_NAMESPACE_RE.sub("", code)
        if emptied == code:
            break
        code = emptied
    return not code.replace(";", "").strip()


def describe(inv: dict) -> str:
    parts = []
    if inv["kernels"]:
        names = ", ".join(inv["kernels"][:5]) + (", ..." if len(inv["kernels"]) > 5 else "")
        parts.append(f"{len(inv['kernels'])} kernel{'s' * (len(inv['kernels']) != 1)} ({names})")
    if inv["launches"]:
        parts.append(f"{inv['launches']} launch{'es' * (inv['launches'] != 1)}")
    if inv["inline_asm"]:
        parts.append(f"inline PTX ({inv['inline_asm']})")
    parts += [f"{lib} ({n})" for lib, n in inv["libraries"].items()]
    return "; ".join(parts) if parts else "no __global__ kernel defined in this file (host code, or kernels from headers)"
