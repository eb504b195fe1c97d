#!/usr/bin/env python3
"""Draw the blind test split's files by the rule in bench/corpus_test/SELECTION.md.

    python bench/select_test.py              list the drawn files (2 per code base)
    python bench/select_test.py --per 3      the first 3 per code base (the rule's next round)
    python bench/select_test.py --all        every eligible file in each code base's seeded order
    python bench/select_test.py --split test3 --topup kernel
                                             test3's top-up order for one category
                                             (bench/corpus_test3/SELECTION.md)
    python bench/select_test.py --split test4 --supplement apex
                                             test4's apex supplement order (its SELECTION.md)
    python bench/select_test.py --split test3 --resolve
                                             test3's whole draw so far, and the next file to label

Deterministic: the corpus comes from pinned archives checked by sha256 (`recall.py --split test
fetch`), eligible files are sorted and shuffled with a seed derived from the code base's name.
Run it before labelling; it never runs the auditor.
"""
from __future__ import annotations

import argparse
import functools
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))   # the auditor of this checkout (test19's rule)
import recall  # noqa: E402  (bench/ is not a package)

# The fixed rule (SELECTION.md); changing any of these makes a different split.
GPU_WORDS = ("cuda", "nccl", "cudnn", "apex", "flash_attn", "flash-attn", "flash_attention",
             "xformers", "triton", "fp16", "bf16", "float16", "bfloat16", "fp8", "float8", "tf32",
             "nvidia", "nvcc", "nvml", "transformer_engine", "bitsandbytes", "autocast", "sdpa",
             "cpp_extension")
GPU_RE = re.compile("|".join(re.escape(w) for w in GPU_WORDS), re.IGNORECASE)
SEED_PREFIX = "npu-audit-test-split-1:"
# Each split's seed prefix: test, fresh and fresh2 share the first rule; test3 is a new draw.
SEED_PREFIXES = {"test": SEED_PREFIX, "fresh": SEED_PREFIX, "fresh2": SEED_PREFIX,
                 "test3": "npu-audit-test-split-3:", "test4": "npu-audit-test-split-4:",
                 "test5": "npu-audit-test-split-5:", "test6": "npu-audit-test-split-6:",
                 "test7": "npu-audit-test-split-7:", "test8": "npu-audit-test-split-8:",
                 "test9": "npu-audit-test-split-9:", "test10": "npu-audit-test-split-10:",
                 "test11": "npu-audit-test-split-11:", "test12": "npu-audit-test-split-12:",
                 "test13": "npu-audit-test-split-13:", "test14": "npu-audit-test-split-14:",
                 "test15": "npu-audit-test-split-15:", "test16": "npu-audit-test-split-16:",
                 "test17": "npu-audit-test-split-17:",
                 "test18": "npu-audit-test-split-18:",
                 "test19": "npu-audit-test-split-19:",
                 "test20": "npu-audit-test-split-20:",
                 "test21": "npu-audit-test-split-21:",
                 "test22": "npu-audit-test-split-22:",
                 "test23": "npu-audit-test-split-23:",
                 "test24": "npu-audit-test-split-24:",
                 "test25": "npu-audit-test-split-25:",
                 "test26": "npu-audit-test-split-26:",
                 "test27": "npu-audit-test-split-27:",
                 "test28": "npu-audit-test-split-28:",
                 "test33": "npu-audit-test-split-33:",
                 "test34": "npu-audit-test-split-34:",
                 "test36": "npu-audit-test-split-36:",
                 "test37": "npu-audit-test-split-37:",
                 "test39": "npu-audit-test-split-39:",
                 "test40": "npu-audit-test-split-40:",
                 "test42": "npu-audit-test-split-42:",
                 "test43": "npu-audit-test-split-43:",
                 "test45": "npu-audit-test-split-45:",
                 "test47": "npu-audit-test-split-47:",
                 "test49": "npu-audit-test-split-49:",
                 "test51": "npu-audit-test-split-51:",
                 "test53": "npu-audit-test-split-53:",
                 "test56": "npu-audit-test-split-56:",
                 "test59": "npu-audit-test-split-59:",
                 "test60": "npu-audit-test-split-60:",
                 "test63": "npu-audit-test-split-63:",
                 "test64": "npu-audit-test-split-64:",
                 "test68": "npu-audit-test-split-68:",
                 "test66": "npu-audit-test-split-66:",
                 "test70": "npu-audit-test-split-70:",
                 "test73": "npu-audit-test-split-73:",
                 "test75": "npu-audit-test-split-75:",
                 "test76": "npu-audit-test-split-76:",
                 "test71": "npu-audit-test-split-71:",
                 "test77": "npu-audit-test-split-77:",
                 "test79": "npu-audit-test-split-79:",
                 "test82": "npu-audit-test-split-82:",
                 "test81": "npu-audit-test-split-81:",
                 "test84": "npu-audit-test-split-84:", "test85": "npu-audit-test-split-85:",
                 "test87": "npu-audit-test-split-87:", "test88": "npu-audit-test-split-88:",
                 # test90 (bench/corpus_test90/SELECTION.md): the brief named the prefix "npu-audit-test-split-87:"
                 # (the seed is prefix + code-base name, and no code base is shared with test87)
                 "test90": "npu-audit-test-split-87:",
                 # test91: the brief gave the seeds "npu-audit-test-split-87:..." (bench/corpus_test91/SELECTION.md)
                 "test91": "npu-audit-test-split-87:",
                 "test93": "npu-audit-test-split-93:",
                 "test92": "npu-audit-test-split-92:",
                 "test95": "npu-audit-test-split-95:",
                 "test96": "npu-audit-test-split-96:",
                 "test98": "npu-audit-test-split-98:",
                 "test99": "npu-audit-test-split-99:",
                 "test102": "npu-audit-test-split-102:",
                 "test106": "npu-audit-test-split-106:",
                 "test101": "npu-audit-test-split-101:",
                 "test105": "npu-audit-test-split-105:",
                 "test109": "npu-audit-test-split-109:",
                 "test112": "npu-audit-test-split-112:",
                 "test113": "npu-audit-test-split-113:",
                 "test116": "npu-audit-test-split-116:",
                 "test119": "npu-audit-test-split-119:",
                 "test120": "npu-audit-test-split-120:",
                 "test124": "npu-audit-test-split-124:",
                 "test125": "npu-audit-test-split-125:",
                 "test127": "npu-audit-test-split-127:",
                 "test130": "npu-audit-test-split-130:",
                 "test131": "npu-audit-test-split-131:",
                 "test133": "npu-audit-test-split-133:",
                 "test135": "npu-audit-test-split-135:",
                 # a tuning sample, not a blind split (bench/corpus_tuned_t14d/SELECTION.md)
                 "tuned_t14d": "npu-audit-tuned-t14d:",
                 # a second tuning sample (bench/corpus_tuned_t14g/SELECTION.md)
                 "tuned_t14g": "npu-audit-tuned-t14g:",
                 # a third tuning sample (bench/corpus_tuned_t14w/SELECTION.md)
                 "tuned_t14w": "npu-audit-tuned-t14w:",
                 # a fourth tuning sample (bench/corpus_tuned_t14y/SELECTION.md)
                 "tuned_t14y": "npu-audit-tuned-t14y:",
                 # a fifth tuning sample (bench/corpus_tuned_s15c/SELECTION.md)
                 "tuned_s15c": "npu-audit-tuned-s15c:",
                 # a sixth tuning sample (bench/corpus_tuned_t16c/SELECTION.md)
                 "tuned_t16c": "npu-audit-tuned-t16c:",
                 # a seventh tuning sample (bench/corpus_tuned_t17c/SELECTION.md)
                 "tuned_t17c": "npu-audit-tuned-t17c:",
                 # an eighth tuning sample, GitHub trees (bench/corpus_tuned_t18c/SELECTION.md)
                 "tuned_t18c": "npu-audit-tuned-t18c:",
                 # a ninth tuning sample, GitHub image-restoration trees (bench/corpus_tuned_t19e/SELECTION.md)
                 "tuned_t19e": "npu-audit-tuned-t19e:",
                 # a tenth tuning sample, GitHub kernel / attention trees (bench/corpus_tuned_t22a/SELECTION.md)
                 "tuned_t22a": "npu-audit-tuned-t22a:",
                 # an eleventh tuning sample, GitHub trees rich in mixed precision (bench/corpus_tuned_t22b/SELECTION.md)
                 "tuned_t22b": "npu-audit-tuned-t22b:",
                 # a twelfth tuning sample, GitHub trees with own kernels / CUDA-only libraries (bench/corpus_tuned_t25a/SELECTION.md)
                 "tuned_t25a": "npu-audit-tuned-t25a:"}
# test3's per-category top-up (bench/corpus_test3/SELECTION.md): a file qualifies for a category
# when at least TOPUP_MIN_LINES of its lines match that category's fixed word list.
TOPUP_WORDS = {
    "device": r"torch\.cuda|\.cuda\(|['\"]cuda|cudnn|CUDA_VISIBLE_DEVICES",
    "distributed": r"nccl",
    "precision": r"fp16|bf16|float16|bfloat16|fp8|float8|tf32|autocast|GradScaler|\.half\(",
    "apex": r"apex",
    "attention": r"flash_attn|flash-attn|flash_attention|xformers|sdpa|scaled_dot_product_attention"
                 r"|flex_attention",
    "kernel": r"triton|cpp_extension|load_inline|CUDAExtension|torch\.ops\.|cutlass|cute\.",
    "third_party": r"transformer_engine|bitsandbytes|deepspeed|pynvml|nvml|fbgemm|nvfuser|tensorrt"
                   r"|megatron|cupy",
}
# test39 (bench/corpus_test39/SELECTION.md, the lead's word change for that split only): extra words OR-ed with a
# category's TOPUP_WORDS in that split's top-up pools (extension libraries, run-time built ops, CUDA-only libraries the
# fixed lists miss). Other splits' pools use TOPUP_WORDS alone, so their draws do not change.
SPLIT_TOPUP_WORDS = {
    "test39": {
        "kernel": r"\.cu['\"]|custom_ops|_ext\b|_cuda\b|cuda\.jit|\.so['\"]|upfirdn2d|fused_bias_act|bias_act|filtered_lrelu",
        "third_party": r"spconv|MinkowskiEngine|torchsparse|torch_scatter|torch_sparse|torch_cluster|tinycudann|nvdiffrast"
                       r"|pycuda|numba|nvidia\.dali|cudf|cuml|faiss|onnxruntime|CUDAExecutionProvider|pytorch3d|kaolin"
                       r"|open3d\.ml|neural_renderer",
    },
    # test42 (bench/corpus_test42/SELECTION.md, the lead's word change for that split only): wider attention and
    # distributed pools, test39's third_party extension plus LLM serving / training libraries
    "test42": {
        "attention": r"attn_implementation|flash_attention_2|memory_efficient_attention|sdp_kernel|sdpa_kernel"
                     r"|flash_attn_varlen|use_flash",
        "distributed": r"init_process_group|NCCL_|DistributedDataParallel|FullyShardedDataParallel|all_reduce"
                       r"|dist_backend|--backend",
        "third_party": r"spconv|MinkowskiEngine|torchsparse|torch_scatter|torch_sparse|torch_cluster|tinycudann|nvdiffrast"
                       r"|pycuda|numba|nvidia\.dali|cudf|cuml|faiss|onnxruntime|CUDAExecutionProvider|pytorch3d|kaolin"
                       r"|open3d\.ml|neural_renderer"
                       r"|vllm|sglang|liger|apex\.|deepspeed|xformers\.ops|flashinfer|cupy|pynvml|nvidia-ml",
    },
    # test43 (bench/corpus_test43/SELECTION.md, written before its draw): kernel and third_party as test39's extension;
    # distributed and attention widened with the words of their usual spellings
    "test43": {
        "kernel": r"\.cu['\"]|custom_ops|_ext\b|_cuda\b|cuda\.jit|\.so['\"]|upfirdn2d|fused_bias_act|bias_act|filtered_lrelu",
        "third_party": r"spconv|MinkowskiEngine|torchsparse|torch_scatter|torch_sparse|torch_cluster|tinycudann|nvdiffrast"
                       r"|pycuda|numba|nvidia\.dali|cudf|cuml|faiss|onnxruntime|CUDAExecutionProvider|pytorch3d|kaolin"
                       r"|open3d\.ml|neural_renderer",
        "distributed": r"init_process_group|NCCL_|DistributedDataParallel|all_reduce|dist_backend",
        "attention": r"attn_implementation|flash_attention_2|memory_efficient_attention|sdp_kernel|sdpa_kernel",
    },
    # test45 (bench/corpus_test45/SELECTION.md, written before its draw): test42's entry plus test39's kernel extension
    "test45": {
        "attention": r"attn_implementation|flash_attention_2|memory_efficient_attention|sdp_kernel|sdpa_kernel"
                     r"|flash_attn_varlen|use_flash",
        "distributed": r"init_process_group|NCCL_|DistributedDataParallel|FullyShardedDataParallel|all_reduce"
                       r"|dist_backend|--backend",
        "third_party": r"spconv|MinkowskiEngine|torchsparse|torch_scatter|torch_sparse|torch_cluster|tinycudann|nvdiffrast"
                       r"|pycuda|numba|nvidia\.dali|cudf|cuml|faiss|onnxruntime|CUDAExecutionProvider|pytorch3d|kaolin"
                       r"|open3d\.ml|neural_renderer"
                       r"|vllm|sglang|liger|apex\.|deepspeed|xformers\.ops|flashinfer|cupy|pynvml|nvidia-ml",
        "kernel": r"\.cu['\"]|custom_ops|_ext\b|_cuda\b|cuda\.jit|\.so['\"]|upfirdn2d|fused_bias_act|bias_act|filtered_lrelu",
    },
}
# test47 (bench/corpus_test47/SELECTION.md, written before its draw): test45's entry, the same object
SPLIT_TOPUP_WORDS["test47"] = SPLIT_TOPUP_WORDS["test45"]
# test49 (bench/corpus_test49/SELECTION.md, written before its draw): test47's entry; no precision entry
# (TOPUP_WORDS["precision"] already holds every word the brief suggested: autocast, GradScaler, bf16 / fp16 /
# float16 / bfloat16 / float8, tf32, .half())
SPLIT_TOPUP_WORDS["test49"] = SPLIT_TOPUP_WORDS["test47"]
# test51 (bench/corpus_test51/SELECTION.md, written before its draw): test49's entry; every category of its top-up
# order has words (precision in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test51"] = SPLIT_TOPUP_WORDS["test49"]
# test53 (bench/corpus_test53/SELECTION.md, written before its draw): test51's entry; every category of its top-up
# order has words (precision in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test53"] = SPLIT_TOPUP_WORDS["test51"]
# test56 (bench/corpus_test56/SELECTION.md, written before its draw): test53's entry; every category of its top-up
# order has words (precision in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test56"] = SPLIT_TOPUP_WORDS["test53"]
# test59 (bench/corpus_test59/SELECTION.md, written before its draw): test53's entry; every category of its top-up
# order has words (precision in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test59"] = SPLIT_TOPUP_WORDS["test53"]
# test60 (bench/corpus_test60/SELECTION.md, written before its draw): test59's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test60"] = SPLIT_TOPUP_WORDS["test59"]
# test63 (bench/corpus_test63/SELECTION.md, written before its draw): test59's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test63"] = SPLIT_TOPUP_WORDS["test59"]
# test64 (bench/corpus_test64/SELECTION.md, written before its draw): test59's entry; every category of its top-up
# order has words (apex and precision in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test64"] = SPLIT_TOPUP_WORDS["test59"]
# test68 (bench/corpus_test68/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words (precision in TOPUP_WORDS; third_party, attention and kernel in test45's extension), so none was added
SPLIT_TOPUP_WORDS["test68"] = SPLIT_TOPUP_WORDS["test64"]
# test66 (bench/corpus_test66/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test66"] = SPLIT_TOPUP_WORDS["test64"]
# test70 (bench/corpus_test70/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test70"] = SPLIT_TOPUP_WORDS["test64"]
# test73 (bench/corpus_test73/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS), so none was added
SPLIT_TOPUP_WORDS["test73"] = SPLIT_TOPUP_WORDS["test64"]
# test75 (bench/corpus_test75/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words (precision and apex in TOPUP_WORDS; attention, third_party and kernel also in test45's extension),
# so none was added
SPLIT_TOPUP_WORDS["test75"] = SPLIT_TOPUP_WORDS["test64"]
# test76 (bench/corpus_test76/SELECTION.md, written before its draw): test75's entry (test64's, the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so none was added
SPLIT_TOPUP_WORDS["test76"] = SPLIT_TOPUP_WORDS["test75"]
# test71 (bench/corpus_test71/SELECTION.md, written before its draw): test64's entry; every category of its top-up
# order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test71"] = SPLIT_TOPUP_WORDS["test64"]
# test77 (bench/corpus_test77/SELECTION.md, written before its draw): test75's entry (test64's, the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test77"] = SPLIT_TOPUP_WORDS["test75"]
# test79 (bench/corpus_test79/SELECTION.md, written before its draw): test75's entry (test64's, the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test79"] = SPLIT_TOPUP_WORDS["test75"]
# test82 (bench/corpus_test82/SELECTION.md, written before its draw): test79's entry (test75's, the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test82"] = SPLIT_TOPUP_WORDS["test79"]
# test81 (bench/corpus_test81/SELECTION.md, written before its draw): test79's entry (test75's / test64's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test81"] = SPLIT_TOPUP_WORDS["test79"]
# test84 (bench/corpus_test84/SELECTION.md, written before its draw): test81's entry (test79's / test75's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test84"] = SPLIT_TOPUP_WORDS["test81"]
# test85 (bench/corpus_test85/SELECTION.md, written before its draw): test81's entry (test79's / test75's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test85"] = SPLIT_TOPUP_WORDS["test81"]
# test87 (bench/corpus_test87/SELECTION.md, written before its draw): test84's entry (test81's / test79's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test87"] = SPLIT_TOPUP_WORDS["test84"]
# test88 (bench/corpus_test88/SELECTION.md, written before its draw): test84's entry (test81's / test79's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test88"] = SPLIT_TOPUP_WORDS["test84"]
# test90 (bench/corpus_test90/SELECTION.md, written before its draw): test84's entry (test81's / test79's, the same
# object); every category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test90"] = SPLIT_TOPUP_WORDS["test84"]
# test91 (bench/corpus_test91/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test91"] = SPLIT_TOPUP_WORDS["test84"]
# test93 (bench/corpus_test93/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test93"] = SPLIT_TOPUP_WORDS["test84"]
# test92 (bench/corpus_test92/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test92"] = SPLIT_TOPUP_WORDS["test84"]
# test95 (bench/corpus_test95/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of the top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test95"] = SPLIT_TOPUP_WORDS["test84"]
# test96 (bench/corpus_test96/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test96"] = SPLIT_TOPUP_WORDS["test84"]
# test98 (bench/corpus_test98/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test98"] = SPLIT_TOPUP_WORDS["test84"]
# test99 (bench/corpus_test99/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test99"] = SPLIT_TOPUP_WORDS["test84"]
# test102 (bench/corpus_test102/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test102"] = SPLIT_TOPUP_WORDS["test84"]
# test101 (bench/corpus_test101/SELECTION.md, written before its draw): test84's entry (the same object); every category
# of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test101"] = SPLIT_TOPUP_WORDS["test84"]
# test106 (bench/corpus_test106/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word is added
SPLIT_TOPUP_WORDS["test106"] = SPLIT_TOPUP_WORDS["test84"]
# test105 (bench/corpus_test105/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of the top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test105"] = SPLIT_TOPUP_WORDS["test84"]
# test109 (bench/corpus_test109/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test109"] = SPLIT_TOPUP_WORDS["test84"]
# test112 (bench/corpus_test112/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test112"] = SPLIT_TOPUP_WORDS["test84"]
# test113 (bench/corpus_test113/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test113"] = SPLIT_TOPUP_WORDS["test84"]
# test116 (bench/corpus_test116/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test116"] = SPLIT_TOPUP_WORDS["test84"]
# test119 (bench/corpus_test119/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test119"] = SPLIT_TOPUP_WORDS["test84"]
# test120 (bench/corpus_test120/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test120"] = SPLIT_TOPUP_WORDS["test84"]
# test124 (bench/corpus_test124/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test124"] = SPLIT_TOPUP_WORDS["test84"]
# test125 (bench/corpus_test125/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test125"] = SPLIT_TOPUP_WORDS["test84"]
# test127 (bench/corpus_test127/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test127"] = SPLIT_TOPUP_WORDS["test84"]
# test130 (bench/corpus_test130/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test130"] = SPLIT_TOPUP_WORDS["test84"]
# test131 (bench/corpus_test131/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test131"] = SPLIT_TOPUP_WORDS["test84"]
# test133 (bench/corpus_test133/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test133"] = SPLIT_TOPUP_WORDS["test84"]
# test135 (bench/corpus_test135/SELECTION.md, written before its draw): test84's entry (the same object); every
# category of its top-up order has words there or in TOPUP_WORDS, so no word was added
SPLIT_TOPUP_WORDS["test135"] = SPLIT_TOPUP_WORDS["test84"]
TOPUP_MIN_LINES = 2


def topup_words(category: str, split: str) -> str:
    """A category's top-up word list in `split`: TOPUP_WORDS, OR-ed with the split's own extension if it has one."""
    extra = SPLIT_TOPUP_WORDS.get(split, {}).get(category)
    return TOPUP_WORDS[category] if extra is None else TOPUP_WORDS[category] + "|" + extra
# test3's stopping points (its SELECTION.md): main-draw rounds until this many labelled lines, then
# top-up passes (cap = most top-up files per category, the second pass is the written amendment)
# until a category has TOPUP_TARGET must-flag lines.
MAIN_ROUNDS_MIN, MAIN_MIN_LABELLED = 2, 250
TOPUP_TARGET, TOPUP_CAPS = 12, (4, 10)
MIN_MATCHING_LINES = 3
MIN_LINES, MAX_LINES = 20, 400
# `jax`: transformer-engine's JAX bindings (test4) are not PyTorch code; no earlier split has one.
EXCLUDED_DIRS = {"test", "tests", "testing", "jax"}
# test5: other projects vendored as submodules in flash-attn's sdist (NVIDIA CUTLASS, AMD
# composable_kernel); no archive of an earlier split has a csrc/cutlass or csrc/composable_kernel.
EXCLUDED_SUBTREES = ("csrc/cutlass/", "csrc/composable_kernel/")
# tuned_t14g: stable-fast's sdist vendors NVIDIA CUTLASS (its Python examples and bindings) under third_party/cutlass/;
# other splits' archives (grouped-gemm, natten) hold that folder too, so the exclusion is this split's only.
SPLIT_EXCLUDED_SUBTREES = {"tuned_t14g": ("third_party/cutlass/",),
                           # test43 (bench/corpus_test43/SELECTION.md, vendoring check): copied packages and files
                           # (torch-ngp's encoders / ray marcher, nvdiffrec's renderutils and material.py,
                           # stable-dreamfusion's generate_tets.py, NVIDIA's poselib, OpenAI's CLIP)
                           "test43": ("freqencoder/", "gridencoder/", "shencoder/", "raymarching/", "render/renderutils/",
                                      "render/material.py", "tets/generate_tets.py", "poselib/", "external/clip/"),
                           # test45 (bench/corpus_test45/SELECTION.md, vendoring check): Meta's segment_anything, SEEM's
                           # demo code, MobileSAM, NVIDIA Warp, Pointnet2_PyTorch's pointnet2
                           "test45": ("generation/SAM/segment_anything/", "generation/SEEM/", "nanosam/mobile_sam/",
                                      "third_party/warp/", "third_party/pointnet2/"),
                           # test47 (bench/corpus_test47/SELECTION.md, vendoring check): rosinality's / NVlabs' StyleGAN2
                           # ops, Deformable-DETR's ops, StyleHEAT's third_part/ (Deep3DFaceRecon, DECA, LPIPS),
                           # pytracking in VideoX's SeqTrack, hyperstyle's hypernetworks, rosinality's distributed.py
                           "test47": ("models/stylegan2/op/", "models/stylegan2/op_old/", "models/ops/", "third_part/",
                                      "SeqTrack/external/", "models/hypernetworks/", "distributed.py"),
                           # test49 (bench/corpus_test49/SELECTION.md, vendoring check): RAFT's alt_cuda_corr extension and
                           # ptlflow's copied RAFT / SelFlow helpers, ViCo's CompVis ldm package, RepViT's segment-anything
                           # fork (sam/), mmseg tools and Swin's mmcv_custom runner, DETR's d2 wrapper, Subject-Diffusion's
                           # modified diffusers modules (third_party/)
                           "test49": ("alt_cuda_corr/", "ptlflow/utils/external/", "ldm/", "sam/", "segmentation/tools/",
                                      "mmcv_custom/", "d2/", "third_party/"),
                           # test51 (bench/corpus_test51/SELECTION.md, vendoring check): cavaface's copy of the
                           # pytorch_memlab package, ReviewKD's PaddleClas copy (Paddle/Classification/ppcls)
                           "test51": ("pytorch_memlab/", "Paddle/"),
                           # test53 (bench/corpus_test53/SELECTION.md, vendoring check): copies of DCNv2, of the
                           # Synchronized-BatchNorm package, of maskrcnn-benchmark (graph-rcnn), of score_sde_pytorch's
                           # model utilities (sgmse), of pycocotools, pytorch_msssim, pesser's pytorch_diffusion,
                           # torchvision datasets, pytorch-fid's inception and OpenAI's fp16_util (Analytic-DPM)
                           "test53": ("DCNv2/", "sync_batchnorm/", "lib/scene_parser/rcnn/", "ncsnpp_utils/",
                                      "pycocotools/", "pytorch_msssim/", "pytorch_diffusion/", "other_dst/",
                                      "tools/inception.py", "core/modules/fp16_util.py"),
                           # test56 (bench/corpus_test56/SELECTION.md, vendoring check): MiVOS' copy of f-BRS (with its
                           # sync-BN package), NVAE's thirdparty/ and pytorch-fid copies, HiFiC's LPIPS copy, RDE-VOS'
                           # DAVIS 2017 evaluation toolkit, FVC's mmdetection-v1 deformable-convolution op
                           "test56": ("fbrs/", "thirdparty/", "fid/", "perceptual_similarity/", "evaluation/2017/",
                                      "subnet/dcn/"),
                           # test59 (bench/corpus_test59/SELECTION.md, vendoring check): GPaCo's mmsegmentation fork
                           # and MAE's util/, Espresso's copies of BytePS's framework and of HF transformers (gpt-2
                           # example), pykdtree, the warmup scheduler package (CSI), DETR's position_encoding.py
                           # (VLTVG), CLIP-VG's copies of OpenAI's CLIP and of RelTR
                           "test59": ("GPaCo/Seg/", "GPaCo/MAE-ViTs/util/", "models/clip/", "RelTR/",
                                      "byteps/torch/examples/gpt-2/", "launcher/", "example/", "byteps/torch/ops.py",
                                      "byteps/torch/__init__.py", "byteps/torch/parallel/", "byteps/torch/compression.py",
                                      "byteps/torch/cross_barrier.py", "byteps/mxnet/", "byteps/_keras/",
                                      "byteps/keras/", "byteps/misc/", "byteps/__init__.py", "pre_setup.py",
                                      "libkdtree/", "training/scheduler.py", "models/position_encoding.py"),
                           # test60 (bench/corpus_test60/SELECTION.md, vendoring check): IRR's two copies of
                           # flownet2-pytorch's correlation_package (by folder and file names)
                           "test60": ("correlation_package/", "correlation_package_cu9/"),
                           # test63 (bench/corpus_test63/SELECTION.md, vendoring check): SNN_conversion_QCFS' copy of
                           # SpikingJelly, mmdetection's DCN op (DB, MaskTextSpotterV3), learn2learn's copy of nanoGPT's
                           # model, P>M>F's copies of OpenAI's CLIP and DeiT's utils, PyTorch's collect_env (docTR),
                           # pycls' benchmark timer (both pycls forks)
                           "test63": ("spikingjelly/", "ops/dcn/", "layers/dcn/", "examples/text/nanogpt_model.py",
                                      "models/clip/", "utils/deit_util.py", "scripts/collect_env.py",
                                      "pycls/utils/benchmark.py"),
                           # test64 (bench/corpus_test64/SELECTION.md, vendoring check): VidChapters' copies of PDVC and
                           # of Moment-DETR, OpenAI CLIP copies, MAE's util files (MAMP), st-gcn's torchlight (CTR-GCN),
                           # NVIDIA flownet2-pytorch's networks (hf2vad), Deformable-DETR's ops and TSP (PDVC), OpenAI's
                           # fp16_util (motion-diffusion-model), StyleGAN2-ADA's conv2d_gradfix (motion-latent-diffusion)
                           "test64": ("PDVC/", "moment_detr/", "clip/", "util/misc.py", "util/crop.py",
                                      "util/datasets.py", "util/lars.py", "util/lr_decay.py", "util/lr_sched.py",
                                      "util/pos_embed.py", "torchlight/", "flownet_networks/", "pdvc/ops/",
                                      "video_backbone/TSP/", "diffusion/fp16_util.py", "conv2d_gradfix.py"),
                           # test68 (bench/corpus_test68/SELECTION.md, vendoring check): SegMamba's copies of
                           # causal-conv1d, mamba and MONAI; SphereFormer's OpenPCDet copy (detection/); FB-BEV's
                           # mmdetection3d library copy (its own code is mmdet3d/models/fbbev/), with BEVDet's bev_pool_v2,
                           # InternImage's DCNv3 and BEVFormer's modules; Speech-Backbones' copies of NeMo (SPIRAL) and of
                           # the RTVC speaker encoder (DiffVC); Latte's StyleGAN-V / StyleGAN2-ADA metric and torch_utils
                           # code; nnFormer's nnU-Net files shared byte for byte with nnU-Net forks
                           "test68": ("causal-conv1d/", "mamba/", "monai/", "detection/pcdet/", "detection/tools/",
                                      "detection/setup.py", "mmdet3d/core/", "mmdet3d/apis/", "mmdet3d/ops/",
                                      "mmdet3d/models/backbones/", "mmdet3d/models/decode_heads/",
                                      "mmdet3d/models/losses/", "mmdet3d/models/middle_encoders/",
                                      "mmdet3d/models/necks/", "mmdet3d/models/voxel_encoders/", "bevformer_utils/",
                                      "SPIRAL/nemo/", "speaker_encoder/", "tools/torch_utils/", "tools/metrics/",
                                      "tools/calc_metrics_for_dataset.py", "nnformer/utilities/distributed.py",
                                      "nnformer/utilities/to_torch.py"),
                           # test66 (bench/corpus_test66/SELECTION.md, vendoring check): VMamba's copy of S4, VideoMamba's
                           # copies of causal-conv1d and mamba, H2O's third_party DeepSpeed / transformers and HELM copies,
                           # KVQuant's transformers forks, DPLM's vendored OpenFold, FrameDiff's OpenFold and ProteinMPNN
                           # copies, RoseTTAFold2's NVIDIA SE(3)-Transformer copy
                           "test66": ("analyze/convnexts4nd/", "causal-conv1d/", "mamba/mamba_ssm/", "mamba/benchmarks/",
                                      "mamba/evals/", "mamba/tests/", "mamba/setup.py", "third_party/", "helm/",
                                      "deployment/transformers/", "gradients/examples/", "gradients/src/",
                                      "gradients/scripts/", "gradients/utils/", "gradients/tests/", "gradients/docs/",
                                      "gradients/templates/", "quant/dbrx/", "vendor/", "openfold/", "ProteinMPNN/",
                                      "SE3Transformer/"),
                           # test70 (bench/corpus_test70/SELECTION.md, vendoring check): OLMo's copies of AutoGPTQ and of
                           # the efficiency benchmark / lm_eval, FuseAI's copies of mergekit (both), LiveBench, FastChat's
                           # MT-Bench and flash-attention monkey patch, and the math evaluation harness (both); amended before any label:
                           "test70": ("inference/compression/dependencies/", "inference/efficiency/dependencies/",
                                      "FuseChat/mergekit/", "FuseO1-Preview/mergekit/", "LiveBench/", "MT-Bench/",
                                      "llama_flash_attn_monkey_patch.py", "Math-Eval/", "math_evaluation/",
                                      # AudioLDM's copy of LAION-AI's CLAP training code (open_clip, training/)
                                      "audioldm_train/modules/clap/"),
                           # test73 (bench/corpus_test73/SELECTION.md, vendoring check): DiariZen's copies of
                           # pyannote-audio and dscore, ASV-Subtools' Kaldi scripts and kaldifeat copy, PatchTST's
                           # FEDformer / Pyraformer copies (Formers/), earth2mip's FourCastNet v2 (SFNO) network copy,
                           # Lag-Llama's GluonTS distribution / scaler copies, ProbTS' submodules/ (uni2ts, lag-llama, tsfm)
                           "test73": ("pyannote-audio/", "dscore/", "kaldi/", "runtime/kaldifeat/", "Formers/",
                                      "earth2mip/networks/fcnv2/", "gluon_utils/", "submodules/"),
                           # test75 (bench/corpus_test75/SELECTION.md, vendoring check): MagicPIG's copies of FBGEMM /
                           # CUTLASS (3rdparty/) and of NVIDIA's RULER, Quest's copy of LongBench, FastMoE's Transformer-XL
                           # utils (shared with DEQ), LLaMA2-Accessory's Large-DiT copies of DiT's diffusion code, Aria's
                           # copy of gpt-fast
                           "test75": ("3rdparty/", "evaluations/RULER/", "evaluation/LongBench/",
                                      "examples/transformer-xl/utils/", "Large-DiT-ImageNet/diffusion/",
                                      "Large-DiT-T2I/diffusion/", "gptfast/"),
                           # test71 (bench/corpus_test71/SELECTION.md, vendoring check): FastChat / LLaVA attention monkey
                           # patches, Qwen's remote-code files, Monkey's CenterNet2 / detectron2 copy and InternVL's flash
                           # attention, LLaVA / MPT and dalle2-pytorch copies, CharlesShang's DCNv2 and mmdetection's DCN, CenterNet's
                           # DataParallel, ABINet's and fairseq's files in LevOCR (AdvancedLiterateMachinery), DINOv2
                           # (FoundationStereo), GroundingDINO and segment-anything (Matting-Anything), CoTracker / RAFT
                           # copies and PyTorch3D's ops (dot), LDM / DINOv2 code (unimatch), PyTorch-Encoding's sync_bn
                           # (GANet), flownet2's correlation package (ARFlow), correlation-pytorch / channelnorm
                           # (PWC-Net), PWC-Net and MegaDepth copies (DAIN), LDM, pytorch-pwc, LPIPS and pytorch-ssim
                           # copies (LDMVFI)
                           "test71": ("llama_flash_attn_monkey_patch.py", "llama2_flash_attn_monkey_patch.py",
                                      "llama_xformers_attn_monkey_patch.py", "vary/model/llm/qwen/",
                                      "configuration_qwen.py", "qwen_generation_utils.py", "grit/third_party/",
                                      "internvl_chat/flash_attention.py", "TRCG/llava/", "LVTR/dalle2_pytorch/",
                                      "networks/DCNv2/", "networks/DCNv2_1.4/", "networks/dcn/",
                                      "models/data_parallel.py", "models/scatter_gather.py", "LevOCR/abinet/",
                                      "levt/layer_norm.py", "levt/incremental_decoding_utils.py", "levt/quant_noise.py",
                                      "levt/levenshtein_utils.py", "dinov2/", "GroundingDINO/", "segment-anything/",
                                      "models/shelf/", "utils/torch3d/", "ldm_unet/", "libs/sync_bn/",
                                      "models/correlation_package/", "external_packages/", "PWCNet/", "MegaDepth/",
                                      "ldm/lr_scheduler.py", "ldm/modules/ema.py", "flolpips/pwcnet.py",
                                      "flolpips/correlation/", "metrics/lpips/", "metrics/pytorch_ssim/"),
                           # test77 (bench/corpus_test77/SELECTION.md, vendoring check): ROME's MEND / knowledge-neurons
                           # baselines, EasyEdit's knowledge-neurons and LAVIS BLIP-2 copies and its files shared with
                           # ROME's MEND copy, LESS's copy of open-instruct's eval/, Self-RAG's Contriever copies and
                           # FastChat's flash-attention monkey patch, TCP's / MILE's Roach copies and TCP's CARLA leaderboard
                           # / scenario_runner, 3D Diffusion Policy's third_party/
                           "test77": ("baselines/", "knowledge_neurons/", "blip2_models/",
                                      "easyeditor/trainer/algs/ft.py", "easyeditor/trainer/algs/local_nn.py",
                                      "easyeditor/models/mend/oracle.py", "evaluation/eval/", "retrieval_lm/src/",
                                      "retrieval_lm/passage_retrieval.py", "retrieval_lm/generate_passage_embeddings.py",
                                      "llama_flash_attn_monkey_patch.py", "roach/", "agents/rl_birdview/", "carla_gym/",
                                      "leaderboard/leaderboard/", "scenario_runner/", "third_party/"),
                           # test76 (bench/corpus_test76/SELECTION.md, vendoring check): stylegan2-pytorch's
                           # conv2d_gradfix.py (the same file test39 labelled as VToonify's copy), PointTransformerV2's
                           # copy of Stratified Transformer's pointops2 (test23), FasterViT's MOTRv2 (test47) and DINO
                           # detector copies, stable-dreamfusion's LDM copy (blobs shared with LDMVFI), the 3D Gaussian
                           # splatting upstream files mip-splatting and gaussian-opacity-fields share blob for blob
                           # (the patterns also take 4DGaussians' metrics.py and utils/general_utils.py), and
                           # gaussian-opacity-fields' Tetra-NeRF copy; DCNv4's copies of InternImage's DCNv3 op and
                           # its mmdet / mmseg / mmcv support code (by folder name)
                           "test76": ("op/conv2d_gradfix.py", "libs/pointops2/", "downstream/object_tracking/motrv2/",
                                      "downstream/object_detection/dino/", "ldm/", "metrics.py",
                                      "utils/general_utils.py", "submodules/simple-knn/", "lpipsPyTorch/",
                                      "submodules/tetra-triangulation/", "ops_dcnv3/", "mmdet_custom/",
                                      "mmseg_custom/", "mmcv_custom/"),
                           # test79 (bench/corpus_test79/SELECTION.md, vendoring check): Ask-Anything's GRiT / CenterNet2 /
                           # detectron2 copies (grit_src/), its MiniGPT-4 copy (video_miniGPT4/) and its in-tree duplicate
                           # video_chat_text/, the UMT / VideoChat utility files shared with VideoMamba and PLLaVA, the
                           # MiniGPT-4 / LAVIS / LLaVA files shared among the video LLMs and with InternLM-XComposer, Emu and
                           # mPLUG-DocOwl, Video-ChatGPT's evaluation scripts in MiniGPT4-video, VITS' monotonic_align and
                           # text copies, the LongBench / RULER / math-eval / Quest / HunyuanVideo / VLMEvalKit copies in
                           # SeerAttention and x-attention, zoology's mamba_ssm / H3 / MRA / Nystromformer / Scatterbrain
                           # copies, flash-fft-conv's M2 / safari / HyenaDNA / flash-attention example copies, the 3D Gaussian
                           # splatting upstream files and submodules, smplx / MVDream / lpips / torch-ngp encoders /
                           # StyleGAN torch_utils / PyMAF-X / PIXIE copies in the avatar trees, Multimodal-GPT's OpenFlamingo copy
                           "test79": ("grit_src/", "video_chat_text/", "video_miniGPT4/",
                                      "video_chat/models/modeling_llama.py", "blip2/modeling_llama.py",
                                      "NExT-GPT-Lagacy/code/model/modeling_llama.py", "utils/basic_utils.py",
                                      "utils/config.py", "utils/config_utils.py", "utils/easydict.py",
                                      "utils/logger.py", "utils/optimizer.py", "utils/scheduler.py",
                                      "video_chat/dataset/dataloader.py", "models/bert/xbert.py", "GPT_evaluation/",
                                      "vqa_tools/", "minigpt4/common/gradcam.py", "minigpt4/common/logger.py",
                                      "builders/base_dataset_builder.py", "datasets/dataloader_utils.py",
                                      "minigpt4/models/Qformer.py", "minigpt4/models/blip2_outputs.py",
                                      "processors/base_processor.py", "processors/randaugment.py",
                                      "minigpt4/runners/__init__.py", "llamavid/constants.py",
                                      "eval/eval_science_qa.py", "eval/m4c_evaluator.py",
                                      "multimodal_projector/builder.py", "llamavid/model/qformer.py",
                                      "scripts/convert_gqa_for_eval.py", "gradio_css.py", "gradio_patch.py",
                                      "pipeline/data_utils/registry.py", "monotonic_align/", "text/english.py",
                                      "eval/longbench/", "eval/ruler/", "eval/reasoning_tasks/Utils/",
                                      "quest_modeling/", "eval/HunyuanVideo/", "eval/RULER/", "eval/LongBench/",
                                      "eval/VLMEvalKit/", "mixers/mamba_ssm/", "mixers/h3/", "mixers/mra/",
                                      "mixers/nystromformer/", "mixers/scatterbrain/", "smplx/", "mvdream/extern/",
                                      "diff-gaussian-rasterization/", "diff_gaussian_rasterization-alphadep/",
                                      "simple-knn/", "sh_utils.py", "utils/ssim.py", "utils/lpips/", "lpipsPyTorch/",
                                      "freqencoder/", "gridencoder/", "lib/common/optimizer.py", "torch_utils/",
                                      "pymafx/", "pixielib/", "scene/colmap_loader.py", "utils/general_utils.py",
                                      "utils/loss_utils.py", "utils/system_utils.py", "utils/graphics_utils.py",
                                      "open_flamingo/", "convert.py", "full_eval.py", "network_gui.py",
                                      "utils/image_utils.py", "examples/bert/", "examples/hyena/",
                                      "examples/hyena-dna/", "benchmarks/benchmark.py", "flash_attn_triton.py",
                                      "bert_padding.py"),
                           # test82 (bench/corpus_test82/SELECTION.md, vendoring check): nnU-Net v1's files in nnMamba
                           # (blobs in MIC-DKFZ/nnUNet's history) and nnU-Net's distributed.py / to_torch.py in the three
                           # nnU-Net forks, DGL-KE's copy in ogb, JT-VAE's fast_jtnn in DIG, MobileSAMv2 (EfficientViT /
                           # Ultralytics) and pytorch-ssim copies in Medical-SAM-Adapter, Deformable DETR's MSDeformAttn ops
                           # in DINO and Mask2Former, mmdetection3d and BEVFormer copies in MapTR, BEVFormer's files in
                           # SurroundOcc and VoxFormer, MobileStereoNet in VoxFormer
                           "test82": ("utilities/distributed.py", "utilities/to_torch.py",
                                      "nnunet/evaluation/model_selection/rank_candidates.py",
                                      "nnunet/inference/amos2022/inference_code.py", "nnunet/inference/predict_simple.py",
                                      "nnunet/training/model_restore.py",
                                      "nnunet/training/network_training/competitions_with_custom_Trainers/",
                                      "nnunet/training/network_training/nnUNetTrainerCascadeFullRes.py",
                                      "nnunet/training/network_training/nnUNetTrainerV2_CascadeFullRes.py",
                                      "nnunet/training/network_training/nnUNetTrainerV2_DP.py",
                                      "nnunet/training/network_training/nnUNet_variants/", "dgl-ke-ogb-lsc/",
                                      "fast_jtnn/", "models/MobileSAMv2/", "pytorch_ssim/", "models/dino/ops/",
                                      "pixel_decoder/ops/", "mmdetection3d/", "projects/mmdet3d_plugin/bevformer/",
                                      "models/utils/grid_mask.py", "tools/analysis_tools/benchmark.py",
                                      "tools/fp16/train.py", "tools/test.py", "tools/train.py",
                                      "surroundocc/modules/multi_scale_deformable_attn_function.py",
                                      "voxformer/modules/multi_scale_deformable_attn_function.py",
                                      "preprocess/mobilestereonet/"),
                           # test81 (bench/corpus_test81/SELECTION.md, vendoring check): RPTQ's lm-evaluation-harness copy,
                           # marlin's GPTQ copy, the GPTQ / MMLU helper files shared with gptq / sparsegpt / OLMo, qserve's
                           # LLaVA copy (shared with llm-awq), relora's Megatron / NeoX dataset copy, OpenMoE's ColossalAI
                           # replacement, Medusa's FastChat llm_judge copy, FlexGen's vendored transformers / DeepSpeed and
                           # the FlexGen files test66 labelled as H2O's copies, Text2Video-Zero's ControlNet annotators,
                           # LVDM's taming / LDM / I3D files, AudioLDM2's CLAP / HiFi-GAN / AudioMAE / VITS-text copies and
                           # the files shared with AudioLDM-training-finetuning, DAC's layers shared with higgs-audio,
                           # AcademiCodec's Encodec / HiFi-GAN copies, VALL-E's icefall / k2 files and the files shared
                           # with VALL-E-X, NATSpeech's HiFi-GAN / ESPnet copies, DAC's training script test21 labelled as
                           # X-Codec's copy and AcademiCodec's distributed helpers (X-Codec's, test21), Atom's four Punica
                           # copies (e2e/), alpaca_lora_4bit's text-generation-webui patch folder, llmtools' PEFT copy
                           "test81": ("lm_evaluation/", "gptq/datautils.py", "gptq/eval.py", "gptq/gptq.py",
                                      "gptq/llama2.py", "gptq/quant.py", "modelutils.py", "categories.py", "llava_base/",
                                      "megatron_dataset/", "colossalai_replace/", "llm_judge/",
                                      "benchmark/third_party/", "hf_ds/hf_opt.py", "flexgen/compression.py",
                                      "flexgen/dist_flex_opt.py", "flexgen/dist_utils.py", "flexgen/opt_config.py",
                                      "flexgen/profile_bandwidth.py", "flexgen/profile_matmul.py", "flexgen/timer.py",
                                      "annotator/", "losses/vqperceptual.py", "lvdm/models/modules/ema.py",
                                      "fvd_utils/pytorch_i3d.py", "audioldm2/clap/", "audioldm2/hifigan/",
                                      "modules/audiomae/", "modules/distributions/distributions.py",
                                      "latent_diffusion/modules/ema.py", "phoneme_encoder/text/",
                                      "utilities/audio/audio_processing.py", "utilities/data/add_on.py",
                                      "audioldm2/utilities/sampler.py", "dac/nn/layers.py", "hificodec/env.py",
                                      "academicodec/modules/", "academicodec/quantization/",
                                      "valle/utils/symbol_table.py", "valle/modules/optim.py",
                                      "valle/modules/scaling.py", "valle/modules/embedding.py",
                                      "valle/models/visualizer.py", "modules/vocoder/hifigan/",
                                      "conformer/espnet_positional_embedding.py",
                                      "conformer/espnet_transformer_attn.py", "scripts/train_no_adv.py",
                                      "encodec/distributed/", "e2e/", "text-generation-webui/",
                                      "llmtools/engine/lora/"),
                           # test84 (bench/corpus_test84/SELECTION.md, vendoring check): DoubleSparse's FlexGen and
                           # gpt-fast copies and its in-tree duplicates (offloading/triton_kernels/ = models/triton_kernels/,
                           # AIME's two patches), LongBench's metrics (shared with Quest / SeerAttention), Ouroboros' Spec-Bench
                           # copy, H3's files shared with s4 / zoology / flash-fft-conv / m2, DoRA's LLaVA, PEFT, VL-T5 and
                           # CLIP-ViL copies, LoRA-GA's PEFT files by PEFT's names, MaskLLM's Megatron-LM copy, the 3D Gaussian
                           # splatting copies (SuGaR's gaussian_splatting/, SpacetimeGaussians' thirdparty/gaussian_splatting/)
                           # and simple-knn, MambaInLlama's lm-eval wrapper (mamba's), NeuS2's instant-ngp helper, the
                           # Synchronized-BatchNorm copies (PointWeb, dgcnn.pytorch), PoinTr's GRNet / MSN extensions,
                           # SnowflakeNet's Pointnet2_PyTorch / ChamferDistancePytorch / MSN EMD copies, SA-SSD's PointRCNN /
                           # mmdetection files, CloserLook3D's KPConv cpp_wrappers
                           "test84": ("benchmark/e2e/flexgen/", "benchmark/e2e/gpt-fast/", "offloading/triton_kernels/",
                                      "AIME/modify_llama.py", "AIME/modify_qwen2.py", "LongBench/metrics.py",
                                      "test_specbench/", "csrc/cauchy/", "src/ops/fftconv.py", "src/ops/vandermonde.py",
                                      "src/ops/toeplitz.py", "ssm/hippo.py", "ssm/ssm_utils.py", "fftconv/lut_code_gen.py",
                                      "visual_instruction_tuning/llava/", "visual_instruction_tuning/scripts/",
                                      "visual_instruction_tuning/peft/", "commonsense_reasoning/peft/",
                                      "image_video_text_understanding/VL-T5/", "image_video_text_understanding/CLIP-ViL/",
                                      "peft/examples/boft_controlnet/", "peft/examples/boft_dreambooth/",
                                      "peft/examples/causal_language_modeling/", "peft/examples/conditional_generation/",
                                      "peft/examples/dora_finetuning/", "peft/examples/fp4_finetuning/",
                                      "peft/examples/int8_training/", "peft/examples/olora_finetuning/",
                                      "peft/examples/pissa_finetuning/", "peft/examples/sft/", "peft/scripts/",
                                      "peft/src/peft/tuners/", "peft/src/peft/mapping.py",
                                      "peft/src/peft/utils/integrations.py", "megatron/", "tools/retro/",
                                      "tools/openwebtext/", "tools/bert_embedding/", "tools/checkpoint/", "tasks/vision/",
                                      "tasks/orqa/", "tasks/msdp/", "tasks/glue/", "tasks/race/", "tasks/zeroshot_gpt/",
                                      "tasks/finetune_utils.py", "pretrain_gpt.py", "gaussian_splatting/", "simple-knn/",
                                      "lm_harness_eval.py", "scripts/common.py", "sync_bn/", "extensions/chamfer_dist/",
                                      "extensions/cubic_feature_sampling/", "extensions/gridding/", "emd/",
                                      "pointnet2_ops_lib/", "Chamfer3D/", "mmdet/ops/iou3d/", "mmdet/ops/pointnet2/",
                                      "mmdet/core/utils/misc.py", "cpp_wrappers/"),
                           # test85 (bench/corpus_test85/SELECTION.md, vendoring check): Moment-DETR's run_on_video/ (blobs
                           # shared with VidChapters, and OpenAI CLIP), UniFormer's SlowFast / mmdet / mmseg / mmpose / mmcv
                           # copies with their tools and configs, TokenLabeling and DeiT files, EDVR's and DiffIR's BasicSR
                           # files shared with each other or with earlier label files, DiffIR's LaMa / LDM / PieAPP / LPIPS
                           # copies, FastFlowNet's flownet2 correlation_package, FateZero's CLIP copy, VCN's thop copy,
                           # Uformer's warmup_scheduler copy, DiffRL's rl_games copy
                           "test85": ("run_on_video/", "slowfast/", "mmdet/", "mmseg/", "mmpose/", "mmcv_custom/",
                                      "object_detection/tools/", "semantic_segmentation/tools/",
                                      "pose_estimation/tools/", "object_detection/configs/",
                                      "pose_estimation/configs/", "object_detection/setup.py", "token_labeling/",
                                      "image_classification/engine.py", "image_classification/utils.py",
                                      "video_classification/tools/test_net.py",
                                      "basicsr/data/prefetch_dataloader.py", "utils/dist_util.py", "saicinpainting/",
                                      "DiffIR-inpainting/bin/", "DiffIR-inpainting/models/ade20k/", "ldm/",
                                      "metrics/PieAPP/", "metrics/LPIPS.py", "correlation_package/", "CLIP/", "thop/",
                                      "warmup_scheduler/", "externals/rl_games/"),
                           # test87 (bench/corpus_test87/SELECTION.md, vendoring check): ltu's transformers, PEFT and
                           # whisper copies and the LTU-AS files identical to LTU's (in-tree duplicates) or to cav-mae's,
                           # fiddler's mixtral-offloading copy, MC-MoE's GPTQ-for-LLaMa quant_linear, EvaByte's OLMES /
                           # catwalk / lm-eval and bigcode-harness evaluation copies, RADIO's mmsegmentation configs,
                           # mammoth's CLIP copies, mini-s' in-tree duplicates, mdetr's DETR helpers by name, DynMoE's DeepSpeed,
                           # MoE-LLaVA, tutel and DomainBed copies, Star-Attention's RULER and BABILong benchmark copies, its
                           # ring-flash-attention copy and transformers' flash-attention helper by name
                           "test87": ("hf-dev/", "peft-main/", "ltu_as/whisper/", "ltu_as/eval/eval_audiocaps.py",
                                      "ltu_as/eval/eval_esc.py", "ltu_as/eval/stats.py", "ltu_as/utils/callbacks.py",
                                      "ltu_as/utils/prompter.py", "ltu_as/utils/stats.py",
                                      "benchmarks/mixtral_offloading/", "utils/quant_linear.py", "evals/olmes/",
                                      "evals/gen_evals/", "mmseg/configs/", "attriclip_utils/clip/", "zscl_utils/clip/",
                                      "moe_adapters_utils/tokenizer.py", "scripts/finetune_minis.py", "scripts/utils.py",
                                      "util/misc.py", "util/box_ops.py", "util/plot_utils.py", "DeepSpeed-0.9.5/",
                                      "MoE-LLaVA/", "EMoE/tutel/", "domainbed/", "ruler/", "babilong/",
                                      "ring_flash_attn/", "star_attention/modeling_flash_attention_utils.py"),
                           # test88 (bench/corpus_test88/SELECTION.md, vendoring check): the 3D Gaussian splatting files
                           # of dreamgaussian and LucidDreamer (blobs shared with SuGaR / GART / mip-splatting ...) and
                           # simple-knn, dreamgaussian's zero123 pipeline (shared with GART), LucidDreamer's lora_diffusion
                           # copy, GET3D's StyleGAN2-ADA / StyleGAN3 files (torch_utils/, dnnlib/, metrics) and its in-tree
                           # dmtet_utils duplicate, the rosinality StyleGAN2 ops and distributed helper (StyleSDF, DiffPure),
                           # One-2-3-45's ldm copy (shared with stable-dreamfusion) and LoFTR copy, CRM's ImageDream / ldm
                           # copy, MeshAnything's Michelangelo copy, OpenLRM's DINOv2 and EG3D renderer copies, ROMP's
                           # TrackEval / mmdet deform_conv / RAFT / EPro-PnP copies and its in-tree duplicates, MotionBERT's
                           # timm drop.py, AlphaPose's YOLOX / EfficientDet / YOLOv3 / JDE tracker / ReID / mmdet nms copies
                           # and its HybrIK config helper, NICE-SLAM's conv_onet, MASt3R-SLAM's mast3r (with dust3r) and in3d
                           # copies, Show-o's LLaVA and SiT transport copies and its in-tree logging duplicate, rq-vae's
                           # inception, DiffPure's guided-diffusion, score_sde and ReColorAdv copies, CROWN-IBP's
                           # convex_adversarial copy
                           "test88": ("sh_utils.py", "simple-knn/", "zero123.py", "utils/image_utils.py",
                                      "utils/system_utils.py", "gaussian_renderer/network_gui.py", "lora_diffusion/",
                                      "torch_utils/", "dnnlib/", "metrics/equivariance.py",
                                      "metrics/frechet_inception_distance.py", "metrics/inception_score.py",
                                      "metrics/kernel_inception_distance.py", "metrics/metric_main.py",
                                      "metrics/metric_utils.py", "metrics/perceptual_path_length.py",
                                      "metrics/precision_recall.py", "op/fused_act.py", "op/upfirdn2d.py", "op/__init__.py",
                                      "distributed.py", "ldm/", "elevation_estimate/loftr/", "TrackEval/", "deform_conv/",
                                      "raft/", "epropnp/", "trace/lib/evaluation/eval_ds_utils.py",
                                      "trace/lib/parallel/balanced_dataparallel.py", "simple_romp/tracker/basetrack.py",
                                      "trace/lib/tracker/kalman_filter_3dcenter.py", "trace/lib/tracker/matching.py",
                                      "trace/lib/visualization/visualize_maps.py", "pack_smpl_params/pack_smplx_info.py",
                                      "lib/model/drop.py", "guided_diffusion/", "score_sde/", "stadv_eot/recoloradv/",
                                      "convex_adversarial/", "conv_onet/", "rqvae/metrics/inception.py",
                                      "uni_rep/rep_3d/dmtet_utils.py", "imagedream/", "MeshAnything/miche/",
                                      "detector/yolox/", "detector/efficientdet/", "detector/yolo/", "detector/tracker/",
                                      "detector/nms/", "trackers/tracking/", "trackers/ReidModels/",
                                      "alphapose/utils/config.py", "thirdparty/mast3r/", "thirdparty/in3d/",
                                      "llava/llava/", "show-o2/models/my_logging.py", "show-o2/transport/",
                                      "encoders/dinov2/", "models/rendering/utils/"),
                           # test90 (bench/corpus_test90/SELECTION.md, vendoring check): mfa_conformer's wenet copy (USED),
                           # DynamicHead's Swin Transformer backbone (USED, by name), LocalMamba's VMamba detection /
                           # segmentation downstream and its causal-conv1d and mamba_ssm copies (USED, blobs shared),
                           # PlainMamba's mmdetection / mmsegmentation downstream copies (blobs shared with UniFormer / DCNv4),
                           # Vlogger's Latte / LaVie diffusion/ and models/utils.py / resnet.py copies (blobs shared) and the
                           # AnimateDiff resnet.py / motion_module.py of Cinemo and Open-AnimateAnyone (AnimateDiff USED, by
                           # name), A-ViT's timm copy, HPSv2's open_clip copy (src/open_clip/, src/training/), MoleculeSTM's
                           # cuchemcommon (MegaMolBART's), evit's / DynamicViT's DeiT samplers.py, 3D-Generative-SBDD's
                           # sascorer.py (RDKit contrib), ImageReward's in-tree BLIP vit.py duplicate,
                           # hgraph2graph's and SepReformer's in-tree duplicates (the later copies of each identical blob)
                           "test90": ("wenet/", "extra/swint.py", "detection/", "segmentation/", "causal-conv1d/",
                                      "mamba-1p1p1/", "downstream/mmdetection/", "downstream/mmsegmentation/",
                                      "diffusion/", "models/utils.py", "models/resnet.py", "models/motion_module.py",
                                      "timm/", "src/open_clip/", "src/training/", "cuchemcommon/", "samplers.py",
                                      "utils/sascorer.py", "train/src/models/vit.py", "polymers/poly_hgraph/nnutils.py",
                                      "polymers/poly_hgraph/vocab.py", "SepReformer_Large_DM_WHAM/model.py",
                                      "SepReformer_Large_DM_WHAMR/model.py", "SepReformer_Large_DM_WSJ0/model.py",
                                      "SepReformer_Large_DM_WHAMR/modules/", "SepReformer_Large_DM_WSJ0/modules/",
                                      "SepReformer_Large_DM_WHAMR/engine.py", "SepReformer_Large_DM_WHAMR/main.py",
                                      "SepReformer_Large_DM_WSJ0/engine.py", "SepReformer_Large_DM_WSJ0/main.py"),
                           # test91 (bench/corpus_test91/SELECTION.md, vendoring check): RVSA's MAE copies (facebookresearch/mae
                           # USED; blobs shared with mae / SSL4EO-S12) and its Swin mmcv_custom helpers; TransMorph's CoTr and
                           # nnFormer copies (nnFormer USED; blobs shared with MedNeXt / nnMamba), CycleMorph's util/ (shared with
                           # DAIN) and its IXI/ tree (in-tree duplicates of its first copies); easyreg's pynd copy; PSENet's files
                           # shared with pan_pp.pytorch (USED); SwinTextSpotter's detectron2 copy (detectron2 USED) with
                           # detectron2's tools / demo / dev files, its AdelaiDet LME copy and DETR util files (shared with
                           # table-transformer, ABINet); DeepSolo's detectron2 copy, its DeepSolo++ in-tree duplicates and
                           # AdelaiDet files (AdelaiDet USED); deep-text-recognition-benchmark's create_lmdb_dataset.py (shared);
                           # mermaid's torchdiffeq copy and the sphinx theme shared by mermaid and easyreg
                           "test91": (
                                      "MAEPretrain_SceneClassification/util/",
                                      "MAEPretrain_SceneClassification/Paddle/util/",
                                      "MAEPretrain_SceneClassification/jittor/util/",
                                      "MAEPretrain_SceneClassification/engine_finetune.py",
                                      "MAEPretrain_SceneClassification/engine_pretrain.py",
                                      "MAEPretrain_SceneClassification/models_vit.py",
                                      "mmcv_custom/",
                                      "Baseline_Transformers/models/CoTr/",
                                      "Baseline_Transformers/models/nnFormer/",
                                      "CycleMorph/util/",
                                      "IXI/",
                                      "pynd/",
                                      "config/psenet/psenet_r50_ic15_736.py",
                                      "config/psenet/psenet_r50_ic15_736_finetune.py",
                                      "dataset/builder.py",
                                      "eval/ctw/",
                                      "eval/ic15/",
                                      "eval/ic15_rec/",
                                      "eval/msra/",
                                      "eval/tt/",
                                      "eval/tt_rec/",
                                      "models/builder.py",
                                      "models/backbone/builder.py",
                                      "models/head/builder.py",
                                      "models/loss/builder.py",
                                      "models/neck/builder.py",
                                      "models/utils/fuse_conv_bn.py",
                                      "detectron2/",
                                      "dev/packaging/",
                                      "tools/analyze_model.py",
                                      "tools/benchmark.py",
                                      "tools/convert-torchvision-to-d2.py",
                                      "tools/deploy/",
                                      "tools/plain_train_net.py",
                                      "tools/train_net.py",
                                      "tools/visualize_data.py",
                                      "tools/visualize_json_results.py",
                                      "demo/demo.py",
                                      "demo/predictor.py",
                                      "projects/SWINTS/LME/",
                                      "swints/util/box_ops.py",
                                      "swints/util/plot_utils.py",
                                      "swints/transformer.py",
                                      "DeepSolo++/adet/checkpoint/",
                                      "DeepSolo++/adet/config/",
                                      "DeepSolo++/adet/layers/",
                                      "DeepSolo++/adet/modeling/model/utils.py",
                                      "DeepSolo++/adet/modeling/swin/",
                                      "DeepSolo++/adet/modeling/vitae_v2/",
                                      "DeepSolo++/adet/utils/comm.py",
                                      "DeepSolo++/adet/utils/curve_utils.py",
                                      "DeepSolo++/setup.py",
                                      "DeepSolo/adet/checkpoint/adet_checkpoint.py",
                                      "DeepSolo/adet/config/config.py",
                                      "DeepSolo/adet/utils/comm.py",
                                      "DeepSolo/adet/evaluation/rrc_evaluation_funcs.py",
                                      "DeepSolo/adet/evaluation/rrc_evaluation_funcs_ic15.py",
                                      "DeepSolo/adet/evaluation/text_eval_script.py",
                                      "DeepSolo/adet/evaluation/text_eval_script_ic15.py",
                                      "pretrained_backbone/convert-torchvision-to-d2.py",
                                      "create_lmdb_dataset.py", "torchdiffeq/", "_themes/"),
                           # test93 (bench/corpus_test93/SELECTION.md, vendoring check): EDM's / StyleGAN's torch_utils/ and
                           # dnnlib/ (DMD2, ctm, ect, SiD; blobs shared among them and with Latte / ECON; NVlabs/edm and
                           # StyleGAN3 USED), DMD2's third_party/edm/ copy, StyleGAN's metrics files by name (ect, SiD),
                           # ctm's consistency_models / guided-diffusion helpers cm/dist_util.py, cm/fp16_util.py,
                           # cm/random_util.py (openai/consistency_models USED, by name), PatchFusion's DINOv2 and ZoeDepth
                           # copies (external/torchhub/, external/zoedepth/; both USED), FTVSR's mmediting copy (mmedit/;
                           # open-mmlab/mmagic USED), HCFlow's BasicSR dist_util.py (shared with EDVR / DiffIR), the
                           # prefix-linear-attention copies of mamba_ssm (based/models/mixers/mamba/), zoology
                           # (synthetic/zoology/), flash-attention's training scaffold and ops (train/src/, based/utils/,
                           # based/distributed/, based/ops/; blobs shared with flash-fft-conv), SEA-RAFT's RAFT flow_viz.py and
                           # ACVNet's cascade-stereo visualization.py (blobs shared), RectifiedFlow's score_sde_pytorch models
                           # (ImageGeneration/models/, blobs shared with DiffPure's score_sde copy), parkour's rsl_rl/ copy
                           # (leggedrobotics/rsl_rl USED, by folder name)
                           "test93": ("torch_utils/", "dnnlib/", "torch_utils_cm/", "third_party/edm/",
                                      "metrics/equivariance.py", "metrics/frechet_inception_distance.py",
                                      "metrics/inception_score.py", "metrics/kernel_inception_distance.py",
                                      "metrics/metric_main.py", "metrics/metric_utils.py",
                                      "metrics/perceptual_path_length.py", "metrics/precision_recall.py",
                                      "cm/dist_util.py", "cm/fp16_util.py", "cm/random_util.py",
                                      "external/torchhub/", "external/zoedepth/", "mmedit/", "codes/utils/dist_util.py",
                                      "based/models/mixers/mamba/", "synthetic/zoology/", "train/src/", "based/utils/",
                                      "based/distributed/", "based/ops/", "core/utils/flow_viz.py",
                                      "utils/visualization.py", "ImageGeneration/models/", "rsl_rl/"),
                           # test92 (bench/corpus_test92/SELECTION.md, vendoring check): FastDiff's NATSpeech files (NATSpeech
                           # USED; blobs shared) and its ParallelWaveGAN / wavenet_vocoder copies (by folder name);
                           # Comprehensive-Transformer-TTS's HiFi-GAN (USED) and deep-speaker copies (by folder name);
                           # ByProt's ProteinMPNN helper scripts (ProteinMPNN USED; blobs shared with se3_diffusion /
                           # multiflow); PB-LLM's GPTQ files (gptq / BiLLM, USED); DuQuant's and QLLM's lm-evaluation-harness
                           # copies (USED; blobs shared with each other, SpQR, RPTQ4LLM), their shared models_utils.py and
                           # DuQuant's MMLU categories.py (shared with MC-MoE); QKFormer's Spikingformer files (USED; also
                           # in-tree duplicates) and its MAE util/ copy (USED); SViTE's DeiT files whose blobs it shares with
                           # evit / DynamicViT / pmf (DeiT USED); OmniQuant's LMClass.py (DuQuant's blob shared with
                           # LLaMA3-Quantization, an OmniQuant copy; QLLM's by name; OmniQuant USED); owq's lm-evaluation-harness
                           # copy (lm_eval/, above); DSnoT's SparseGPT file (shared with wanda, USED); Spike-Driven-Transformer-V2's
                           # MAE util/ copy (shared with AudioLDM; MAE USED); MGMAE's RAFT copy (shared with RAFT / VBench)
                           "test92": ("egs/tts/fs2_orig.py", "utils/ddp_utils.py", "utils/indexed_datasets.py",
                                      "utils/rnnoise.py", "modules/parallel_wavegan/", "modules/wavenet_vocoder/",
                                      "hifigan/", "deepspeaker/", "examples/pmpnn_compatible/helper_scripts/",
                                      "gptq_pb/modelutils.py", "gptq_pb/eval_ppl_utils.py", "lm_eval/",
                                      "models/models_utils.py", "categories.py", "cifar10-dvs/autoaugment.py",
                                      "dvs128-gesture/autoaugment.py", "cifar10-dvs/monitor.py", "dvs128-gesture/monitor.py",
                                      "dvs128-gesture/utils.py", "imagenet/util/", "SViTE/hubconf.py", "SViTE/losses.py",
                                      "SViTE/run_with_submitit.py", "SViTE/samplers.py", "models/LMClass.py",
                                      "lib/sparsegpt.py", "classification/util/", "flow_utils/raft/"),
                           # test95 (bench/corpus_test95/SELECTION.md, vendoring check): PointRCNN's iou3d / roipool3d /
                           # pointnet2 ops (SE-SSD, EPNet), mmdetection's fp16 utils and sigmoid focal loss op and
                           # second.pytorch's KITTI evaluation, buildtools and find.py (SE-SSD, EPNet), the point
                           # transformer pointops2 copy (4D Gaussian splatting; shared with PointTransformerV2),
                           # simple-knn and the confidence rasterizer copy, 3DGS's metrics.py / utils/general_utils.py
                           # (blobs shared; the names take the other trees' same-named files too), gaussian-grouping's
                           # LaMa and DEVA copies, GPS-Gaussian's RAFT-Stereo corr.py, the in-tree or cross-tree duplicates
                           # of P4Transformer and TC-GNN, TALLRec's alpaca-lora finetune.py
                           "test95": ("iou3d/", "roipool3d/", "det3d/ops/pointnet2/", "pointnet2_lib/", "det3d/core/fp16/",
                                      "det3d/ops/sigmoid_focal_loss/", "kitti_object_eval_python/",
                                      "det3d/utils/buildtools/", "det3d/utils/find.py", "pointops2/", "simple-knn/",
                                      "diff-gaussian-rasterization-confidence/", "metrics.py", "utils/general_utils.py",
                                      "lama/", "Tracking-Anything-with-DEVA/", "core/corr.py",
                                      "modules-pytorch-1.8.1/pointnet2_test.py", "pyg-baseline/dataset.py",
                                      "finetune.py"),
                           # test96 (bench/corpus_test96/SELECTION.md, vendoring check): RoboFlamingo's OpenFlamingo copy
                           # (USED), SpatialVLA's Open X-Embodiment data configs (openvla's oxe/, USED, by folder name),
                           # CogACT's DiT diffusion files (blobs shared with LLaMA2-Accessory / LaVie; DiT USED), LISA's
                           # LLaVA and segment-anything copies (both USED), Earthformer's EarthNet toolkit, Makani's
                           # third_party/ and its two files shared with other NVIDIA trees, nuwave's tacotron2 STFT (USED),
                           # ProDiff's FastDiff / ParallelWaveGAN / HiFi-GAN copies and its files shared with FastDiff and
                           # NATSpeech (both USED), jukebox's apex and tensorboardX copies, MagicDec's RULER copy,
                           # SqueezedAttention's transformers and LongBench copies, XMem's f-BRS copy and the files XMem
                           # and STCN (both code bases of this split) share, ViT-Adapter's mmdet / mmseg base configs,
                           # Deformable-DETR ops, mmdet core, mmcv_custom and Mask2Former files (blobs shared with DCNv4 /
                           # Vision-RWKV / PlainMamba / UniFormer)
                           "test96": ("open_flamingo/", "data/oxe/", "action_model/__init__.py",
                                      "action_model/diffusion_utils.py", "action_model/timestep_sampler.py",
                                      "action_model/gaussian_diffusion.py", "action_model/respace.py",
                                      "model/llava/", "model/segment_anything/", "earthnet_toolkit/",
                                      "makani/third_party/", "datasets/__init__.py", "makani/mpu/__init__.py",
                                      "utils/stft.py", "modules/FastDiff/", "modules/parallel_wavegan/",
                                      "modules/hifigan/", "data_gen/tts/bin/binarize.py", "data_gen/tts/bin/pre_align.py",
                                      "data_gen/tts/wav_processors/base_processor.py", "tasks/vocoder/vocoder_base.py",
                                      "utils/common_schedulers.py", "utils/ddp_utils.py", "utils/indexed_datasets.py",
                                      "utils/rnnoise.py", "utils/text_encoder.py", "utils/tts_utils.py",
                                      "vocoders/vocoder_utils.py", "apex/", "tensorboardX/", "Data/Ruler/",
                                      "transformers/", "LongBench/", "inference/interact/fbrs/",
                                      "dataset/range_transform.py", "dataset/tps.py", "model/cbam.py",
                                      "scripts/resize_youtube.py", "util/load_subset.py", "util/log_integrator.py",
                                      "configs/_base_/", "detection/ops/", "segmentation/mmseg_custom/core/", "mmcv_custom/",
                                      "segmentation/mmseg_custom/datasets/pipelines/formatting.py",
                                      "segmentation/mmseg_custom/models/losses/", "segmentation/mmseg_custom/models/plugins/",
                                      "segmentation/mmseg_custom/models/segmentors/", "segmentation/mmseg_custom/models/utils/",
                                      "wsdm2023/mmdet_custom/models/utils/point_sample.py"),
                           # test98 (bench/corpus_test98/SELECTION.md, vendoring check): CARLA-Roach's RL expert
                           # (roach/, blobs shared between ThinkTwice, DriveAdapter and TCP), CARLA's leaderboard,
                           # scenario_runner and navigation agents, the mmdetection train loop and tools/train.py shared
                           # by ThinkTwice and DriveAdapter with their shared lidarnet.py, BEVDet's / FB-BEV's mmdet3d
                           # tree in BEV-Planner and HoP (blobs shared with FB-BEV / BEVFormer / mmdetection3d), BEVDet's
                           # analysis tools and TensorRT converter, BEVFormer's grid_mask, ICON's HybrIK / PARE / PIXIE /
                           # PyMAF / smplx copies, rpg_e2vid in ess (e2vid/) and its timers, ess's DSEC toolkit, Super
                           # SloMo in rpg_timelens, LPIPS in event_cnn_minimal, LiteFlowNet in IFRNet, pytorch_msssim in
                           # VFIformer, Palu's 3rdparty/, SVD-LLM's GPTQ and peft copies
                           "test98": ("roach/", "leaderboard/leaderboard/", "scenario_runner/", "agents/navigation/",
                                      "mmdet_train.py", "open_loop_training/train.py",
                                      "open_loop_training/code/model_code/backbones/lidarnet.py", "mmdet3d/",
                                      "tools/analysis_tools/", "tools/convert_bevdet_to_TRT.py", "grid_mask.py",
                                      "lib/hybrik/", "lib/pare/", "lib/pixielib/", "lib/pymaf/", "lib/smplx/",
                                      "e2vid/", "utils/timers.py", "DSEC/", "timelens/superslomo/",
                                      "PerceptualSimilarity/", "liteflownet/", "utils/pytorch_msssim/", "3rdparty/",
                                      "gptq/", "utils/peft/"),
                           # test99 (bench/corpus_test99/SELECTION.md, vendoring check): COAT's OLMo inference copies
                           # (AutoGPTQ, lm_eval / efficiency-pentathlon; blobs shared with OLMo), its Liger-Kernel copy and
                           # ToolBench's own files; INT4's and OpenMatch's transformers copies; MicroAdam's llm-foundry,
                           # Adam-mini's DeepSpeed-Chat, torchtitan, nanoGPT and AdaLomo copies; Quartet's QuaRot utils;
                           # ToCa's Open-Sora and ViDiT-Q's opensora copies, PixArt's LLaVA MPT copy; TaylorSeer's
                           # in-tree duplicates and its HunyuanVideo / Wan files shared with HunyuanVideo-I2V / Wan2.2;
                           # the latent-diffusion copies of q-diffusion and DeepCache; FasterCache's VideoSys DSP,
                           # OpenDiT kernels and CogVideo sgm / vae_modules copies; DuCa's copies of ToCa's Open-Sora and
                           # PixArt files and of TaylorSeer's DiT train.py (cross-tree duplicates, the later code base's
                           # copy); Dynamic-Tuning's mmsegmentation / BEiT mmcv_custom / configs copies
                           "test99": ("examples/OLMo/inference/", "coat/activation/liger/",
                                      "examples/ToolBench/toolbench/inference/", "examples/ToolBench/toolbench/model/",
                                      "examples/ToolBench/toolbench/utils.py",
                                      "examples/ToolBench/toolbench/train/train_lora.py",
                                      "SingleDivide/transformersLocal/", "llm-foundry/", "examples/RLHF/dschat/",
                                      "examples/llama/torchtitan/", "examples/gpt2/bench.py", "examples/gpt2/model.py",
                                      "examples/gpt2/sample.py", "examples/llama/adalomo.py", "src/quarot_utils/",
                                      "Open-Sora/", "t2v/opensora/", "diffusion/model/llava/",
                                      "TaylorSeer-FLUX-Kontext/src/cli_control.py",
                                      "TaylorSeer-FLUX-Kontext/src/flux/cli.py",
                                      "TaylorSeer-FLUX-Kontext/src/flux/cli_control.py",
                                      "TaylorSeer-FLUX-Kontext/src/flux/cli_fill.py",
                                      "TaylorSeer-FLUX-Kontext/src/flux/cli_redux.py",
                                      "TaylorSeer-FLUX-Kontext/src/geneval_flux.py", "TaylorSeer-FLUX/src/cli_control.py",
                                      "TaylorSeer-HiDream-I1-nf4/hdi1/models/attention_processor.py",
                                      "TaylorSeer-HunyuanVideo/hyvideo/modules/attenion.py",
                                      "TaylorSeer-HunyuanVideo/hyvideo/modules/fp8_optimization.py",
                                      "TaylorSeer-HunyuanVideo/utils/collect_env.py", "TaylorSeer-Wan2.1/wan/modules/attention.py",
                                      "ldm/modules/", "scripts/knn2img.py", "fastercache/dsp/", "fastercache/kernels/",
                                      "fastercache/models/cogvideox/sgm/", "fastercache/models/cogvideox/vae_modules/",
                                      "v1/Contrastive_Supervision_Synthesis/contrastqg/transformers/",
                                      "DuCa-Open-Sora/", "DuCa-DiT/train.py", "DuCa-PixArt-alpha/app/",
                                      "DuCa-PixArt-alpha/diffusion/utils/", "DuCa-PixArt-alpha/scripts/infer_pixart_8_bits.py",
                                      "DuCa-PixArt-alpha/scripts/inference_lcm.py", "DuCa-PixArt-alpha/scripts/interface.py",
                                      "DuCa-PixArt-alpha/scripts/interface_controlnet.py", "DuCa-PixArt-alpha/tools/",
                                      "DuCa-PixArt-alpha/train_scripts/train.py", "dense_tasks/Segmentation/mmseg/",
                                      "dense_tasks/Segmentation/mmcv_custom/", "dense_tasks/Segmentation/configs/",
                                      "dense_tasks/Segmentation/tools/test.py"),
                           # test102 (bench/corpus_test102/SELECTION.md, vendoring check): AnyLoc's CosPlace copy (a code
                           # base of this split, blobs shared), MixVPR copy (blobs shared with salad) and
                           # deep-visual-geo-localization-benchmark copy (by folder name; its sync_batchnorm blobs shared
                           # with PointWeb / dgcnn.pytorch), salad's four MixVPR aggregators (blobs shared with AnyLoc's
                           # MixVPR copy), VRCNet's ChamferDistancePytorch / MSN / GRNet ops copies (code bases of this
                           # split, blobs shared) and its Pointnet2.PyTorch copy (by folder name), MOTR's Deformable-DETR
                           # ops and detectron2 structures (blobs shared with FasterViT / DINO / PDVC), GuidedQuant's QTIP
                           # copies (qtip/ and inference/lib/, QTIP USED, in-tree duplicates) and SpinQuant copy (USED, by
                           # folder name), ShiftAddLLM's gptq zeroShot/ and modelutils.py (blobs shared with gptq, USED),
                           # PrefixQuant's AutoGPTQ triton_utils (blob shared with AutoGPTQ, USED), Jetfire's nanoGPT
                           # files (blobs shared with Adam-mini; nanoGPT USED), nnsvs' DiffSinger port (USED, by folder
                           # name), and the in-tree duplicates of lp-music-caps, nnsvs, few-shot-meta-baseline (with its
                           # google-research meta-dataset copy) and pytorch-meta
                           "test102": ("CosPlace/", "MixVPR/", "dvgl_benchmark/", "models/aggregators/convap.py",
                                       "models/aggregators/cosplace.py", "models/aggregators/gem.py",
                                       "models/aggregators/mixvpr.py", "utils/ChamferDistancePytorch/", "utils/MDS/",
                                       "utils/emd/", "utils/expansion_penalty/", "utils/cubic_feature_sampling/",
                                       "utils/gridding/", "utils/Pointnet2.PyTorch/", "models/ops/", "models/structures/",
                                       "qtip/", "inference/lib/", "spin_quant/", "zeroShot/", "modelutils.py",
                                       "quantize/triton_utils/", "INT8_GPT2/bench.py", "INT8_GPT2/sample.py",
                                       "INT8_GPT2/configurator.py", "INT8_GPT2/config/", "INT8_GPT2/data/",
                                       "nnsvs/diffsinger/", "demo/model/modules.py", "demo/utils/audio_utils.py",
                                       "recipes/pjs/dev-48k-world/local/data_prep.py", "meta-dataset/meta_dataset/",
                                       "meta-dataset/models/__init__.py", "meta-dataset/models/convnet4.py",
                                       "meta-dataset/models/models.py", "meta-dataset/models/resnet.py",
                                       "meta-dataset/models/resnet12.py", "examples/anil/utils.py"),
                           # test101 (bench/corpus_test101/SELECTION.md, vendoring check): the tabular baselines' own code
                           # copied into rtdl / TabSurvey / tabzilla / TALENT (NODE, DANet, DeepCTR-Torch's DeepFM, DeepGBM,
                           # DNF-Net, SAINT (a code base of this split), STG, Hopular, TabNet, TALENT's model/lib/ with
                           # TabPFN / TabM / RealMLP / ...), tabzilla's files shared with TabSurvey, saint's in-tree copies,
                           # anhp-andtt's THP (a code base of this split's pool) and SAHP copies, MAE's utilities in GreenMIM
                           # and mae_st, mae_st's SlowFast decoder, CAE's DALL-E / CLIP / mmseg / mmcv copies, DenseCL's
                           # files shared with Cream and its third-party / SVM tools, Cream's mmcv / mmdet / panoptic-deeplab
                           # / open_clip / timm / DETR / DeiT copies and in-tree duplicates, archai's H3 SSM ops and its
                           # lm-eval-harness copy, ViTAS' DeiT / timm data files, deformableLKA's nnFormer fork, timm (MERIT)
                           # / mmcv / DAT / Swin-Unet / D3Dnet copies and in-tree duplicates, VoCo's nnU-Net copy, its files
                           # shared with MONAI research-contributions (SwinUNETR) and its in-tree duplicates, Mamba-UNet's mamba and
                           # causal-conv1d copies and its MONAI UNETR file
                           "test101": ("lib/node/", "models/danet_lib/", "models/deepfm_lib/", "models/deepgbm_lib/",
                                       "models/dnf_lib/", "models/node_lib/", "models/saint_lib/", "models/stg_lib/",
                                       "models/hopular/", "models/tabnet_patch_lib/", "TabZilla/models/__init__.py",
                                       "TALENT/model/lib/", "old_version/models/model.py",
                                       "old_version/models/pretrainmodel_vision.py", "thp/thp_training/", "thp/thp_testing/",
                                       "sahp/sahp_training/", "sahp/sahp_testing/", "util/lr_decay.py", "util/lr_sched.py",
                                       "util/pos_embed.py", "util/decoder/", "dall_e/", "clip/",
                                       "semantic_segmentation/configs_local/", "semantic_segmentation/mmseg/",
                                       "semantic_segmentation/mmcv_custom/", "openselfsup/datasets/dataset_wrappers.py",
                                       "openselfsup/models/utils/accuracy.py", "openselfsup/models/utils/conv_ws.py",
                                       "openselfsup/third_party/", "benchmarks/svm_tools/",
                                       "CDARTS_detection/mmcv/", "CDARTS_detection/mmdet/",
                                       "CDARTS_segmentation/segmentation/", "CDARTS_segmentation/dataloaders/segdatasets/",
                                       "CDARTS_segmentation/dataloaders/transforms/", "CDARTS_segmentation/train/builder.py",
                                       "TinyCLIP/src/open_clip/", "TinyCLIP/src/training/", "TinyViT/data/augmentation/",
                                       "EfficientViT/downstream/configs/", "EfficientViT/downstream/mmcv_custom/",
                                       "EfficientViT/downstream/mmdet_custom/", "MiniViT/Mini-Swin/logger.py",
                                       "DETR-with-iRPE/datasets/", "DETR-with-iRPE/util/",
                                       "DETR-with-iRPE/models/position_encoding.py", "DETR-with-iRPE/run_with_submitit.py",
                                       "DETR-with-iRPE/rpe_ops/", "DETR-with-iRPE/models/rpe_attention/irpe.py",
                                       "DeiT-with-iRPE/hubconf.py", "DeiT-with-iRPE/losses.py",
                                       "DeiT-with-iRPE/run_with_submitit.py", "DeiT-with-iRPE/samplers.py",
                                       "DeiT-with-iRPE/rpe_ops/", "DeiT-with-iRPE/irpe.py", "AutoFormerV2/lib/utils.py",
                                       "AutoFormerV2/lib/datasets.py", "AutoFormerV2/lib/samplers.py",
                                       "AutoFormerV2/lib/config.py", "CDARTS/lib/models/loss.py",
                                       "CDARTS/lib/models/aux_head.py", "CDARTS/lib/datasets/data_utils.py",
                                       "ssm_utils/ssm_ops/", "ssm_utils/utils.py", "research/lm_eval_harness/",
                                       "data/random_erasing.py", "data/rasampler.py", "merit_lib/", "3D/d_lka_former/",
                                       "pancreas_code/networks/utilities/", "pancreas_code/networks/d_lka_former/",
                                       "pancreas_code/networks/dynunet_block.py", "pancreas_code/networks/layers.py",
                                       "pancreas_code/networks/initialization.py", "3D/dcn/", "2D/mmcv_custom/",
                                       "2D/networks/DAT/", "2D/networks/swinunet.py", "skin_code/model/swinunet/",
                                       "skin_code/model/deformable_LKA/", "skin_code/model/segformer.py",
                                       "skin_code/model/merit_lib/", "Finetune/nnUNet/", "optimizers/lr_scheduler.py",
                                       "Finetune/BTCV/utils/utils.py", "Finetune/CC-CCII/utils/utils.py",
                                       "Finetune/Flare22/utils/utils.py", "Finetune/Word/utils/utils.py",
                                       "Finetune/Flare22/trainer.py", "Finetune/MM-WHS/trainer.py", "Finetune/Flare22/val.py",
                                       "Finetune/Flare22/inferers.py", "Finetune/MM-WHS/inferers.py", "causal-conv1d/",
                                       "mamba/", "code/networks/unetr.py"),
                           # test106 (bench/corpus_test106/SELECTION.md, vendoring check): instruct-pix2pix's CompVis
                           # stable-diffusion copy, StyleDrop's timm / open_clip / taming copies and pytorch-fid files,
                           # Prompt-Diffusion's ControlNet copy (annotator, ldm, cldm, share.py, tool_add_control.py) and
                           # StyleGAN dnnlib, the NTU preprocessing / feeder / activation files shared by CTR-GCN, HD-GCN,
                           # MS-G3D and InfoGCN, SL-GCN's Shift-GCN graph tools, CorrNet's sync_batchnorm, the AdelaiDet
                           # files of DPText-DETR (with every setup.py), ESTextSpotter's detectron2 / DETR d2 / DINO copies,
                           # TextBPN++'s mmdet DCN, ContourNet's MaskTextSpotterV3-shared maskrcnn_benchmark files and its
                           # in-tree io_ duplicate, SPTS' shared blocks, forecast-mae's optim helper, circuit-tracer's in-tree
                           # test duplicate
                           "test106": ("stable_diffusion/", "timm/", "open_clip/", "taming/", "tools/fid_score.py",
                                       "tools/inception.py", "annotator/", "ldm/", "cldm/", "share.py",
                                       "tool_add_control.py", "dnnlib/", "data/ntu/", "data/ntu120/", "feeders/tools.py",
                                       "model/activation.py", "SL-GCN/graph/tools.py", "sync_batchnorm/",
                                       "adet/checkpoint/adet_checkpoint.py", "adet/config/config.py", "adet/data/__init__.py",
                                       "adet/evaluation/text_eval_script.py", "adet/layers/__init__.py", "adet/utils/comm.py",
                                       "demo/demo.py", "setup.py", "detectron2-0.2.1/", "d2/", "datasets/__init__.py",
                                       "datasets/coco_eval.py", "datasets/coco_panoptic.py", "datasets/data_util.py",
                                       "datasets/dataset.py", "datasets/panoptic_eval.py", "datasets/random_crop.py",
                                       "evaluation/rrc_evaluation_funcs_ic15.py", "models/ests/attention.py",
                                       "models/ests/ops/", "models/ests/position_encoding.py", "models/ests/segmentation.py",
                                       "models/ests/utils.py", "models/registry.py", "run_with_submitit.py", "util/box_loss.py",
                                       "util/box_ops.py", "util/get_param_dicts.py", "util/logger.py", "util/misc.py",
                                       "util/plot_utils.py", "util/slconfig.py", "util/slio.py", "util/time_counter.py",
                                       "util/utils.py", "util/vis_utils.py", "network/backbone/assets/dcn/",
                                       "network/layers/position_encoding.py", "ctw_eval/file_util.py",
                                       "maskrcnn_benchmark/config/__init__.py", "maskrcnn_benchmark/data/__init__.py",
                                       "maskrcnn_benchmark/data/datasets/list_dataset.py",
                                       "maskrcnn_benchmark/data/samplers/__init__.py",
                                       "maskrcnn_benchmark/data/samplers/iteration_based_batch_sampler.py",
                                       "maskrcnn_benchmark/layers/_utils.py", "maskrcnn_benchmark/modeling/detector/__init__.py",
                                       "maskrcnn_benchmark/modeling/registry.py", "maskrcnn_benchmark/modeling/rpn/__init__.py",
                                       "maskrcnn_benchmark/solver/__init__.py", "maskrcnn_benchmark/utils/collect_env.py",
                                       "maskrcnn_benchmark/utils/comm.py", "maskrcnn_benchmark/utils/env.py",
                                       "maskrcnn_benchmark/utils/miscellaneous.py",
                                       "maskrcnn_benchmark/utils/model_serialization.py",
                                       "maskrcnn_benchmark/data/datasets/evaluation/word/util/io_.py",
                                       "model/backbone/position_embedding.py", "model/block/frozen_bn.py", "model/block/mlp.py",
                                       "utils/nested_tensor.py", "src/utils/optim.py",
                                       "tests/transcoder/test_single_layer_transcoder.py",
                                       # the files CorrNet shares with VAC_CSLR (both code bases of this split; the
                                       # same paths in both, so both copies go), CLIP4STR's PARSeq strhub models / data
                                       # and its OpenAI CLIP copy
                                       "evaluation/slr_eval/mergectmstm.py", "evaluation/slr_eval/wer_calculation.py",
                                       "modules/BiLSTM.py", "preprocess/dataset_preprocess.py", "utils/__init__.py",
                                       "utils/decode.py", "utils/device.py", "utils/optimizer.py", "utils/pack_code.py",
                                       "utils/parameters.py", "utils/record.py", "strhub/clip/", "strhub/data/",
                                       "strhub/models/abinet/", "strhub/models/crnn/", "strhub/models/parseq/",
                                       "strhub/models/trba/", "strhub/models/vitstr/"),
                           # test105 (bench/corpus_test105/SELECTION.md, vendoring check): Deformable DETR's MSDeformAttn
                           # ops (OpenSeeD, OneFormer, OV-DETR; blobs shared with Mask2Former / DINO / MOTR) and
                           # Deformable DETR's data_prefetcher.py (OV-DETR, by name), ODISE's Mask2Former copy,
                           # Pointnet2_PyTorch's pointnet2 (graspnet-baseline, SAM-6D), gdrnpp's YOLOX copy, SAM-6D's
                           # DINOv2 layers and segment_anything, 3DGS's simple-knn / diff-gaussian-rasterization /
                           # SIBR_viewers, nvdiffrec's renderutils and light (GS-IR, GaussianShader), Vis-MVSNet
                           # (Relightable3DGaussian), doremi's flash-attention copy,
                           # QuRating's lm-evaluation-harness and ProX's lit_gpt (TinyLlama's)
                           "test105": ("encoder/ops/", "pixel_decoder/ops/", "models/ops/", "third_party/Mask2Former/",
                                       "datasets/data_prefetcher.py", "pointnet2/",
                                       "det/yolox/", "Instance_Segmentation_Model/model/layers/",
                                       "Instance_Segmentation_Model/segment_anything/", "simple-knn/",
                                       "diff-gaussian-rasterization/", "SIBR_viewers/", "pbr/renderutils/",
                                       "scene/NVDIFFREC/", "vismvsnet/", "flash-attention/",
                                       "lm-evaluation-harness/", "train/lit_gpt/"),
                           # test109 (bench/corpus_test109/SELECTION.md, vendoring check): MixFormer's external/ (Alpha-Refine's
                           # pytracking copy and PreciseRoIPooling), the Stark / pytracking files OSTrack and MixFormer share
                           # (the same paths in both, so both copies go) and MixFormer's MAE pos_utils.py; CenterTrack's
                           # CenterNet files; LAVISH's compacter files, its AVSBench files and its in-tree duplicate;
                           # VisualVoice's in-tree duplicates (the av-enhancement/ and av-separation-with-context/ copies);
                           # the three files volsdf and monosdf share (both copies go); SparseNeuS's files shared with
                           # One-2-3-45 (test88); MoRA's and DePT's peft files shared with other mirrors; SLAVC's EZ-VSL audio_io.py;
                           # Instant-angelo's instant-nsr-pl files and Vis-MVSNet, the COLMAP scripts it shares with
                           # manhattan_sdf (both copies go); loretta's MeZO files, its peft_local copies shared with other
                           # mirrors and its in-tree duplicates
                           # test113 (bench/corpus_test113/SELECTION.md, vendoring check): SKVQ's LongBench metrics.py (shared
                           # with ThinK / Palu); keyformer-llm's in-tree duplicate; ChunkLlama's vLLM copy and its SCROLLS and
                           # L-Eval metric folders; FlexPrefill's InfiniteBench and RULER folders; genie2's OpenFold modules (by
                           # name); DeeR-VLA's open_flamingo/ and the robot_flamingo files shared with RoboFlamingo; the files
                           # MoDE_Diffusion_Policy and flower_vla_calvin share (both copies go) and their vendored pyhash;
                           # RynnVLA-001's chameleon_model/ (Lumina-mGPT's, blobs shared); RawNet's voxceleb_trainer block;
                           # GEAR's KIVI quant kernels (shared with ThinK) and its in-tree duplicates; Locret's L-Eval and
                           # InfiniteBench folders and its transformers configuration files
                           "test113": ("metrics.py", "summarization/utils.py", "vllm/", "few-shot/scrolls_metrics/",
                                       "zero-shot/Evaluation/", "experiments/benchmark/infinitebench/",
                                       "experiments/benchmark/ruler/", "genie/model/modules/",
                                       "genie/utils/tensor_utils.py", "open_flamingo/",
                                       "robot_flamingo/data/real_dataset_hdf5.py",
                                       "robot_flamingo/data/vl_dataset.py", "robot_flamingo/models/flamingo_bc.py",
                                       "robot_flamingo/models/normalizer.py",
                                       "robot_flamingo/models/trajectory_gpt2.py", "robot_flamingo/models/unets.py",
                                       "mode/callbacks/ema.py", "flower/callbacks/ema.py",
                                       "mode/datasets/robomimic_dataset.py", "flower/datasets/robomimic_dataset.py",
                                       "mode/datasets/utils/episode_utils.py",
                                       "flower/datasets/utils/episode_utils.py", "mode/utils/adopt.py",
                                       "flower/utils/adopt.py", "mode/utils/clip_tokenizer.py",
                                       "flower/utils/clip_tokenizer.py", "mode/utils/lang_buffer.py",
                                       "flower/utils/lang_buffer.py", "mode/utils/language_annotator.py",
                                       "flower/utils/language_annotator.py", "mode/utils/lr_schedulers/",
                                       "flower/utils/lr_schedulers/", "mode/utils/save_to_hf.py",
                                       "flower/utils/save_to_hf.py", "mode/utils/utils.py", "flower/utils/utils.py",
                                       "preprocess/extract_by_key.py", "pyhash-0.9.3/", "models/chameleon_model/",
                                       "python/RawNet3/models/RawNetBasicBlock.py", "cuda_supported_gear/quant/",
                                       "GEARLM/TrueCompression/models/cpp_kernels.py",
                                       "GEARLM/Simulated/modeling_llama_new.py", "benchmark/LEval-main/",
                                       "benchmark/infinite_bench/", "locret/models/llama/configuration_llama.py",
                                       "locret/models/phi3/configuration_phi3.py"),
                           # test116 (bench/corpus_test116/SELECTION.md, vendoring check): Transformer-M's fairseq copy
                           # (fairseq/, fairseq_cli/, examples/; blobs shared with OFA) and its Graphormer files; torch-ngp's
                           # encoders, ray marching, fully fused MLP and activation.py in RAD-NeRF and INSTA-pytorch (blobs
                           # shared with TADA / SyncTalk / GeneFacePlusPlus / stable-dreamfusion, or by folder name); RAD-NeRF's
                           # AD-NeRF data_utils (shared with SyncTalk / Linly-Talker / video-retalking); INSTA-pytorch's bvh/
                           # (bvh-distance-queries) and instant-ngp's colmap2nerf.py; Gaussian-Head-Avatar's 3DGS
                           # graphics_utils.py; TalkingGaussian's 3DGS files, EasyPortrait / mmseg copy and Linly-Talker-shared
                           # data_utils; IMavatar's DECA and face-parsing copies; RefVSR's mmedit/ (mmediting); FMA-Net's RAFT
                           # files; svt's TimeSformer files; mvd's timm random_erasing.py
                           # test119 (bench/corpus_test119/SELECTION.md, vendoring check): the mmdetection3d package copies
                           # of Fast-BEV and futr3d (mmdet3d/; blobs shared with HoP / BEV-Planner) and Fast-BEV's mmcv_custom/;
                           # FlashOCC's BEVDet ops and the mmdetection3d tools it shares with HoP / BEV-Planner; BEVStereo's
                           # BEVDepth voxel pooling; FADNet's flownet2 layers, correlation-pytorch, GANet and sync_bn copies;
                           # CLIPA's open_clip package and open_clip training files; DeCLIP's and UniCL's blob-shared files
                           "test119": ("mmdet3d/", "mmcv_custom/", "projects/mmdet3d_plugin/ops/bev_pool/",
                                       "projects/mmdet3d_plugin/ops/bev_pool_v2/", "projects/mmdet3d_plugin/core/hook/utils.py",
                                       "tools/analysis_tools/analyze_logs.py", "tools/data_converter/", "tools/deployment/",
                                       "tools/misc/", "tools/model_converters/", "tools/update_data_coords.py",
                                       "ops/voxel_pooling/", "layers_package/channelnorm_package/",
                                       "layers_package/correlation_package/", "layers_package/resample2d_package/",
                                       "layers_package/correlation-pytorch-master/", "libs/GANet/", "libs/sync_bn/",
                                       "dataloader/GANet/", "clipa_torch/open_clip/", "clipa_torch/training/file_utils.py",
                                       "clipa_torch/training/logger.py", "clipa_torch/training/scheduler.py",
                                       "prototype/data/datasets/base_dataset.py", "model/text_encoder/registry.py"),
                           # test124 (bench/corpus_test124/SELECTION.md, vendoring check): D3Feat's KPConv cpp_wrappers and
                           # kernel_points (the entry also removes RoITr's cpp_wrappers/pointops, PointWeb's); I2L-MeshNet's
                           # and Pose2Mesh's manopth / smplpytorch copies (blobs shared); learning3d's pointnet2 ops (blobs
                           # shared with Density_aware_Chamfer_Distance) and chamfer / EMD CUDA losses; overhaul-distillation's
                           # Synchronized-BatchNorm; RePaint's guided-diffusion files but its own sampler; METRO's
                           # pytorch-transformers BERT files; AOT-GAN's pytorch-fid InceptionV3; SimKD's RepDistiller crd /
                           # distiller_zoo; HAT's fairseq files (all but its own *_super, evolution, fed_utils, init and
                           # distill_dataset files)
                           "test124": ("cpp_wrappers/", "manopth/", "smplpytorch/", "kernels/kernel_points.py", "utils/lib/", "losses/cuda/",
                                      "Segmentation/modeling/sync_batchnorm/", "guided_diffusion/dist_util.py",
                                      "guided_diffusion/fp16_util.py", "guided_diffusion/nn.py",
                                      "guided_diffusion/unet.py", "guided_diffusion/respace.py",
                                      "guided_diffusion/script_util.py", "guided_diffusion/image_datasets.py",
                                      "metro/modeling/bert/file_utils.py", "metro/modeling/bert/modeling_bert.py",
                                      "metro/modeling/bert/modeling_utils.py", "src/metric/inception.py", "crd/",
                                      "distiller_zoo/", "fairseq/criterions/", "fairseq/optim/", "fairseq/tasks/",
                                      "fairseq/data/encoders/", "fairseq/__init__.py", "fairseq/binarizer.py",
                                      "fairseq/bleu.py", "fairseq/checkpoint_utils.py", "fairseq/data/__init__.py",
                                      "fairseq/data/base_wrapper_dataset.py", "fairseq/data/concat_dataset.py",
                                      "fairseq/data/data_utils.py", "fairseq/data/dictionary.py",
                                      "fairseq/data/fairseq_dataset.py", "fairseq/data/id_dataset.py",
                                      "fairseq/data/indexed_dataset.py", "fairseq/data/iterators.py",
                                      "fairseq/data/language_pair_dataset.py",
                                      "fairseq/data/strip_token_dataset.py", "fairseq/data/truncate_dataset.py",
                                      "fairseq/distributed_utils.py", "fairseq/file_utils.py",
                                      "fairseq/hub_utils.py", "fairseq/legacy_distributed_data_parallel.py",
                                      "fairseq/meters.py", "fairseq/models/__init__.py",
                                      "fairseq/models/distributed_fairseq_model.py",
                                      "fairseq/models/fairseq_decoder.py", "fairseq/models/fairseq_encoder.py",
                                      "fairseq/models/fairseq_incremental_decoder.py",
                                      "fairseq/models/fairseq_model.py", "fairseq/models/transformer.py",
                                      "fairseq/modules/__init__.py", "fairseq/modules/adaptive_softmax.py",
                                      "fairseq/modules/gelu.py", "fairseq/modules/layer_norm.py",
                                      "fairseq/modules/learned_positional_embedding.py",
                                      "fairseq/modules/multihead_attention.py",
                                      "fairseq/modules/positional_embedding.py",
                                      "fairseq/modules/sinusoidal_positional_embedding.py",
                                      "fairseq/modules/transformer_layer.py",
                                      "fairseq/modules/transformer_sentence_encoder.py",
                                      "fairseq/modules/transformer_sentence_encoder_layer.py",
                                      "fairseq/modules/unfold.py", "fairseq/options.py", "fairseq/progress_bar.py",
                                      "fairseq/registry.py", "fairseq/search.py", "fairseq/sequence_generator.py",
                                      "fairseq/sequence_scorer.py", "fairseq/tokenizer.py", "fairseq/trainer.py",
                                      "fairseq/utils.py"),
                           # test125 (bench/corpus_test125/SELECTION.md, vendoring check): se3_diffusion's ProteinMPNN and
                           # openfold copies; MeshGraphormer's HRNet and utils files (blobs shared with MeshTransformer) and
                           # its pytorch-transformers BERT files; Hand4Whole's smplx copy; mvit's timm random_erasing
                           # test127 (bench/corpus_test127/SELECTION.md, vendoring check): DSMNet's GANet and sync_bn libs
                           # (FADNet's blobs); self-mono-sf's flownet2 correlation_package; votenet's Pointnet2_PyTorch ops;
                           # Practical-RIFE's pytorch_msssim; CoTr's nnU-Net; MedSegDiff's guided-diffusion dist / fp16 utils;
                           # InstantAvatar's fast-snarf, smplx and PyTorch3D copies; ARAH's EasyMocap and IDR rend_util
                           "test127": ("libs/GANet/", "libs/sync_bn/", "models/correlation_package/", "pointnet2/",
                                       "model/pytorch_msssim/", "nnUNet/", "guided_diffusion/dist_util.py",
                                       "guided_diffusion/fp16_util.py", "instant_avatar/deformers/fast_snarf/",
                                       "instant_avatar/deformers/smplx/", "third_parties/pytorch3d/",
                                       "preprocess_datasets/easymocap/", "im2mesh/metaavatar_render/renderer/rend_util.py"),
                           # test130 (bench/corpus_test130/SELECTION.md, vendoring check): BigGAN-PyTorch's
                           # Synchronized-BatchNorm copy; WaveRNN's keithito tacotron text frontend; imaginaire's
                           # third_party (flownet2-pytorch's FlowNet2 and CUDA ops, stylegan2-ada's bias_act / upfirdn2d)
                           "test130": ("sync_batchnorm/", "utils/text/", "imaginaire/third_party/"),
                           # test131 (bench/corpus_test131/SELECTION.md, vendoring check): OccFormer's mmdetection3d copy
                           # and mmdetection3d's benchmark script; simple_bev's Deformable-DETR ops; AdaFace's insightface
                           # IJB helper; SAM-Track's AOT copy; DSS's pix2pix copy; 3DGS's metrics.py / general_utils.py;
                           # PVD's ChamferDistancePytorch and PyTorchEMD copies
                           "test131": ("mmdetection3d/", "tools/analysis_tools/benchmark.py", "nets/ops/",
                                       "validation_mixed/insightface_ijb_helper/", "aot/", "DSS/misc/pix2pix/",
                                       "metrics.py", "utils/general_utils.py", "metrics/ChamferDistancePytorch/",
                                       "metrics/PyTorchEMD/"),
                           # test133 (bench/corpus_test133/SELECTION.md, vendoring check): STANet's CycleGAN files (blobs
                           # shared); MambaCD's VMamba folders; SpCL's open-reid utilities (blobs shared); video-caption's
                           # coco-caption; SwinBERT's timm, Video Swin, Swin and BERT copies; DRN's mmdetection DCN ops;
                           # encodec-pytorch's copies of facebookresearch/encodec's modules (blobs shared)
                           "test133": ("options/__init__.py", "util/html.py", "classification/", "kernels/selective_scan/",
                                       "analyze/", "spcl/evaluation_metrics/ranking.py", "spcl/utils/__init__.py",
                                       "spcl/utils/logging.py", "spcl/utils/meters.py", "spcl/utils/osutils.py",
                                       "coco-caption/", "src/timm/", "src/modeling/video_swin/", "src/modeling/swin/",
                                       "src/layers/bert/", "model/layers/dcn/", "modules/", "quantization/", "distrib.py"),
                           # test135 (bench/corpus_test135/SELECTION.md, vendoring check): CCNet's PyTorch-Encoding
                           # parallel helpers; HandOccNet's manopth and HandMesh's smplpytorch copies (blobs shared);
                           # HandMesh's fvcore config / registry files (blobs shared); PVN3D's Pointnet2_PyTorch ops,
                           # sync_batchnorm, etw_pytorch_utils, ip_basic, fps tools and transformations.py (blobs shared
                           # but the pointnet2 folder); clean-pvnet's DCNv2 copy, fps tools and RAdam; Scene-Graph-
                           # Benchmark's maskrcnn-benchmark layers (blobs and sha256 shared with earlier splits' copies);
                           # fourier_neural_operator's copy of the neuraloperator library (sha256 shared with test13's)
                           "test135": ("utils/encoding.py", "common/utils/manopth/", "smplpytorch/",
                                       "mobrecon/configs/compat.py", "mobrecon/tools/registry.py",
                                       "pvn3d/lib/pointnet2_utils/", "pvn3d/lib/utils/sync_batchnorm/",
                                       "pvn3d/lib/utils/etw_pytorch_utils/", "pvn3d/lib/utils/ip_basic/",
                                       "pvn3d/lib/utils/dataset_tools/fps/", "pvn3d/lib/transformations.py",
                                       "lib/csrc/dcn_v2/", "lib/csrc/fps/", "lib/utils/optimizer/radam.py",
                                       "maskrcnn_benchmark/layers/", "neuralop/"),
                           "test125": ("ProteinMPNN/", "openfold/", "src/modeling/hrnet/", "src/utils/",
                                       "src/modeling/bert/file_utils.py", "src/modeling/bert/modeling_bert.py",
                                       "src/modeling/bert/modeling_utils.py", "common/utils/smplx/",
                                       "mvit/datasets/random_erasing.py"),
                           # test120 (bench/corpus_test120/SELECTION.md, vendoring check): TracKit's pysot / DAVIS
                           # toolkits, pytracking's online modules and mmdetection's DCN; SiamMask's pycocotools, pysot
                           # toolkit and VOT toolkit; AFB-URR's davis2017-evaluation; SalsaNext's Synchronized-BatchNorm;
                           # JS3C-Net's spconv, SparseConvNet, PointGroup and nearest-neighbour copies (pybind11 blobs
                           # shared with EasyMocap); MaterialGAN's LPIPS and HiGAN copies; DiffusionMBIR's and GPEN's
                           # StyleGAN2 ops (rosinality), GPEN's RetinaFace and LPIPS; VQFR's BasicSR package folders and
                           # scripts (blobs shared with huawei-noah's BasicSR copy); TCL's timm optim /
                           # scheduler (adahessian.py's blob shared with VisRAG) and COCO caption / VQA tools;
                           # extreme-parkour's unmodified legged_gym / rsl_rl files (blobs shared with those repositories); FIBER's
                           # maskrcnn-benchmark copy; ViLT's files shared by METER and FIBER (both copies) or with all-in-one
                           "test120": ("lib/eval_toolkit/", "lib/online/", "lib/models/online/", "lib/models/dcn/",
                                       "data/coco/pycocotools/", "utils/pysot/", "utils/pyvotkit/",
                                       "longvideo_evaluation/davis2017/", "train/common/sync_batchnorm/",
                                       "lib/spconv/", "lib/sparseconvnet/", "lib/pointgroup_ops/", "lib/nearest_neighbors/",
                                       "PerceptualSimilarity/", "higan/", "op/", "face_detect/",
                                       "training/lpips/", "vqfr/ops/", "vqfr/utils/", "vqfr/data/", "vqfr/metrics/",
                                       "vqfr/losses/", "vqfr/archs/inception.py", "vqfr/models/base_model.py",
                                       "vqfr/models/lr_scheduler.py", "metric_paper/calculate_fid_folder.py",
                                       "metric_paper/calculate_niqe.py", "metric_paper/calculate_psnr_ssim.py",
                                       "metric_paper/calculate_lpips.py", "optim/",
                                       "scheduler/", "refTools/", "vqaTools/",
                                       "legged_gym/legged_gym/envs/anymal_b/", "legged_gym/legged_gym/envs/anymal_c/",
                                       "legged_gym/legged_gym/envs/cassie/", "legged_gym/legged_gym/envs/base/base_config.py",
                                       "legged_gym/legged_gym/tests/test_env.py", "legged_gym/legged_gym/utils/logger.py",
                                       "legged_gym/setup.py", "rsl_rl/setup.py", "rsl_rl/rsl_rl/env/vec_env.py",
                                       "rsl_rl/rsl_rl/utils/utils.py", "legged_gym/legged_gym/__init__.py", "fine_grained/maskrcnn_benchmark/",
                                       "datamodules/coco_caption_karpathy_datamodule.py",
                                       "datamodules/conceptual_caption_datamodule.py",
                                       "datamodules/f30k_caption_karpathy_datamodule.py", "datamodules/nlvr2_datamodule.py",
                                       "datamodules/sbu_datamodule.py", "datamodules/vg_caption_datamodule.py",
                                       "datamodules/multitask_datamodule.py", "datasets/nlvr2_dataset.py",
                                       "datasets/sbu_caption_dataset.py", "datasets/vg_caption_dataset.py",
                                       "datasets/vqav2_dataset.py", "datasets/f30k_caption_karpathy_dataset.py",
                                       "gadgets/my_metrics.py", "modules/heads.py", "modules/dist_utils.py",
                                       "transforms/randaug.py"),
                           "test116": ("fairseq/", "fairseq_cli/", "examples/",
                                       "Transformer-M/data/dgl_datasets/__init__.py",
                                       "Transformer-M/data/dgl_datasets/dgl_dataset_lookup_table.py",
                                       "Transformer-M/data/ogb_datasets/__init__.py",
                                       "Transformer-M/data/pyg_datasets/__init__.py", "Transformer-M/modules/droppath.py",
                                       "freqencoder/", "gridencoder/", "shencoder/", "raymarching/", "ffmlp/",
                                       "activation.py", "data_utils/face_tracking/", "data_utils/face_parsing/",
                                       "data_utils/deepspeech_features/", "bvh/", "scripts/colmap2nerf.py",
                                       "utils/graphics_utils.py", "utils/image_utils.py", "utils/sh_utils.py",
                                       "utils/system_utils.py", "gaussian_renderer/network_gui.py", "lpipsPyTorch/",
                                       "scene/colmap_loader.py", "data_utils/easyportrait/", "data_utils/process.py",
                                       "data_utils/wav2mel.py", "data_utils/wav2mel_hparams.py", "data_utils/wav2vec.py",
                                       "preprocess/DECA/", "preprocess/face-parsing.PyTorch/", "mmedit/", "preprocessing/raft.py",
                                       "preprocessing/corr.py", "preprocessing/extractor.py", "preprocessing/update.py",
                                       "preprocessing/datasets.py", "preprocessing/utils/", "datasets/build.py",
                                       "datasets/cv2_transform.py", "datasets/multigrid_helper.py",
                                       "datasets/video_container.py", "utils/metrics.py", "random_erasing.py"),
                           "test109": ("external/AR/", "external/PreciseRoIPooling/",
                                       "lib/models/mixformer_vit/pos_utils.py", "lib/test/analysis/extract_results.py",
                                       "lib/test/evaluation/__init__.py", "lib/test/evaluation/data.py",
                                       "lib/test/evaluation/got10kdataset.py",
                                       "lib/test/evaluation/lasot_lmdbdataset.py",
                                       "lib/test/evaluation/lasotdataset.py", "lib/test/evaluation/nfsdataset.py",
                                       "lib/test/evaluation/otbdataset.py", "lib/test/evaluation/tc128cedataset.py",
                                       "lib/test/evaluation/tc128dataset.py",
                                       "lib/test/evaluation/trackingnetdataset.py", "lib/test/evaluation/uavdataset.py",
                                       "lib/test/utils/_init_paths.py", "lib/test/utils/params.py",
                                       "lib/test/utils/transform_got10k.py", "lib/test/utils/transform_trackingnet.py",
                                       "lib/train/_init_paths.py", "lib/train/actors/base_actor.py",
                                       "lib/train/admin/__init__.py", "lib/train/admin/multigpu.py",
                                       "lib/train/admin/settings.py", "lib/train/admin/stats.py",
                                       "lib/train/admin/tensorboard.py", "lib/train/data/__init__.py",
                                       "lib/train/data/bounding_box_utils.py", "lib/train/data/image_loader.py",
                                       "lib/train/data/sampler.py", "lib/train/data/transforms.py",
                                       "lib/train/dataset/COCO_tool.py", "lib/train/dataset/base_image_dataset.py",
                                       "lib/train/dataset/base_video_dataset.py", "lib/train/dataset/coco.py",
                                       "lib/train/dataset/coco_seq_lmdb.py", "lib/train/dataset/got10k_lmdb.py",
                                       "lib/train/dataset/imagenetvid.py", "lib/train/dataset/imagenetvid_lmdb.py",
                                       "lib/train/dataset/lasot_lmdb.py", "lib/train/dataset/tracking_net.py",
                                       "lib/train/dataset/tracking_net_lmdb.py", "lib/utils/lmdb_utils.py",
                                       "lib/utils/merge.py", "lib/utils/tensor.py", "lib/vis/plotting.py",
                                       "tracking/_init_paths.py", "tracking/analysis_results_ITP.py",
                                       "tracking/create_default_local_file.py",
                                       "tracking/download_pytracking_results.py", "tracking/pre_read_datasets.py",
                                       "src/_init_paths.py", "src/lib/external/setup.py",
                                       "src/lib/model/data_parallel.py", "src/lib/model/scatter_gather.py",
                                       "AVE/nets/inits.py", "AVE/nets/kronecker.py", "AVQA/net_grd_avst/visual_net.py",
                                       "AVS/avs_scripts/avs_s4/loss.py",
                                       "AVS/avs_scripts/avs_s4/model/ResNet_AVSModel.py",
                                       "AVS/avs_scripts/avs_s4/model/TPAVI.py", "AVS/avs_scripts/avs_s4/model/pvt.py",
                                       "AVS/avs_scripts/avs_s4/model/resnet.py", "AVS/avs_scripts/avs_s4/test.py",
                                       "AVS/avs_scripts/avs_s4/torchvggish/mel_features.py",
                                       "AVS/avs_scripts/avs_s4/torchvggish/vggish.py",
                                       "AVS/avs_scripts/avs_s4/torchvggish/vggish_input.py",
                                       "AVS/avs_scripts/avs_s4/torchvggish/vggish_params.py",
                                       "AVS/avs_scripts/avs_s4/utils/pyutils.py",
                                       "AVS/avs_scripts/avs_s4/utils/system.py",
                                       "AVS/avs_scripts/avs_s4/utils/utility.py",
                                       "AVS/preprocess_scripts/preprocess_ms3.py",
                                       "AVS/preprocess_scripts/preprocess_s4.py",
                                       "av-enhancement/data/base_data_loader.py", "av-enhancement/data/base_dataset.py",
                                       "av-enhancement/data/custom_dataset_data_loader.py",
                                       "av-enhancement/data/data_loader.py",
                                       "av-enhancement/models/audioVisual_model.py",
                                       "av-enhancement/models/criterion.py", "av-enhancement/models/networks.py",
                                       "av-enhancement/train.py", "av-enhancement/utils/utils.py",
                                       "av-enhancement/utils/video_reader.py",
                                       "av-separation-with-context/data/base_data_loader.py",
                                       "av-separation-with-context/data/base_dataset.py",
                                       "av-separation-with-context/data/custom_dataset_data_loader.py",
                                       "av-separation-with-context/data/data_loader.py",
                                       "av-separation-with-context/evaluateSeparation.py",
                                       "av-separation-with-context/models/criterion.py",
                                       "av-separation-with-context/models/lipreading_model.py",
                                       "av-separation-with-context/models/lipreading_models/resnet.py",
                                       "av-separation-with-context/models/lipreading_models/shufflenetv2.py",
                                       "av-separation-with-context/models/lipreading_models/tcn.py",
                                       "av-separation-with-context/models/models.py",
                                       "av-separation-with-context/options/base_options.py",
                                       "av-separation-with-context/options/test_options.py",
                                       "av-separation-with-context/options/test_real_options.py",
                                       "av-separation-with-context/options/train_options.py",
                                       "av-separation-with-context/test.py", "av-separation-with-context/train.py",
                                       "av-separation-with-context/utils/crop_mouth_from_video.py",
                                       "av-separation-with-context/utils/detectFaces.py",
                                       "av-separation-with-context/utils/lipreading_preprocess.py",
                                       "av-separation-with-context/utils/transform.py",
                                       "av-separation-with-context/utils/utils.py",
                                       "av-separation-with-context/utils/video_reader.py", "code/model/density.py",
                                       "code/model/embedder.py", "code/utils/rend_util.py", "loss/depth_metric.py",
                                       "loss/ncc.py", "models/embedder.py", "models/fast_renderer.py",
                                       "models/featurenet.py", "models/fields.py", "ops/grid_sampler.py",
                                       "tsparse/modules.py", "tsparse/torchsparse_utils.py", "utils/misc_utils.py",
                                       "utils/training_utils.py", "peft-mora/src/peft/tuners/adalora/__init__.py",
                                       "peft-mora/src/peft/tuners/adalora/bnb.py",
                                       "peft-mora/src/peft/tuners/adalora/gptq.py",
                                       "peft-mora/src/peft/tuners/adaption_prompt/__init__.py",
                                       "peft-mora/src/peft/tuners/ia3/__init__.py",
                                       "peft-mora/src/peft/tuners/ia3/bnb.py",
                                       "peft-mora/src/peft/tuners/ia3/config.py",
                                       "peft-mora/src/peft/tuners/loha/__init__.py",
                                       "peft-mora/src/peft/tuners/loha/config.py",
                                       "peft-mora/src/peft/tuners/loha/model.py",
                                       "peft-mora/src/peft/tuners/lokr/__init__.py",
                                       "peft-mora/src/peft/tuners/lokr/config.py",
                                       "peft-mora/src/peft/tuners/lokr/model.py",
                                       "peft-mora/src/peft/tuners/lora/aqlm.py",
                                       "peft-mora/src/peft/tuners/lora/awq.py",
                                       "peft-mora/src/peft/tuners/lora/gptq.py",
                                       "peft-mora/src/peft/tuners/mixed/__init__.py",
                                       "peft-mora/src/peft/tuners/multitask_prompt_tuning/__init__.py",
                                       "peft-mora/src/peft/tuners/multitask_prompt_tuning/config.py",
                                       "peft-mora/src/peft/tuners/oft/__init__.py",
                                       "peft-mora/src/peft/tuners/oft/config.py",
                                       "peft-mora/src/peft/tuners/oft/model.py",
                                       "peft-mora/src/peft/tuners/p_tuning/__init__.py",
                                       "peft-mora/src/peft/tuners/p_tuning/config.py",
                                       "peft-mora/src/peft/tuners/p_tuning/model.py",
                                       "peft-mora/src/peft/tuners/poly/__init__.py",
                                       "peft-mora/src/peft/tuners/poly/config.py",
                                       "peft-mora/src/peft/tuners/prefix_tuning/__init__.py",
                                       "peft-mora/src/peft/tuners/prefix_tuning/config.py",
                                       "peft-mora/src/peft/tuners/prefix_tuning/model.py",
                                       "peft-mora/src/peft/tuners/prompt_tuning/__init__.py",
                                       "peft-mora/src/peft/utils/merge_utils.py", "peft-mora/tests/conftest.py",
                                       "peft-mora/tests/test_auto.py", "peft-mora/tests/test_low_level_api.py",
                                       "peft-mora/tests/test_mixed.py", "peft-mora/tests/test_poly.py",
                                       "peft/tuners/adalora.py", "peft/tuners/p_tuning.py",
                                       "peft/tuners/prefix_tuning.py", "peft/tuners/prompt_tuning.py",
                                       "peft/utils/hub_utils.py", "audio_io.py",
                                       "datasets/colmap_utils.py", "launch.py", "models/base.py", "models/nerf.py",
                                       "models/ray_utils.py", "systems/__init__.py", "systems/base.py",
                                       "systems/criterions.py", "systems/nerf.py", "systems/utils.py",
                                       "utils/callbacks.py", "utils/loggers.py", "utils/obj.py",
                                       "third_party/Vis-MVSNet/", "scripts/utils/database.py",
                                       "scripts/utils/read_write_dense.py", "scripts/utils/read_write_model.py",
                                       "docs/run_colmap/utils/database.py", "docs/run_colmap/utils/read_write_dense.py",
                                       "docs/run_colmap/utils/read_write_model.py", "bert_model/metrics.py",
                                       "large_models/ht_opt.py", "large_models/lora.py", "large_models/metrics.py",
                                       "large_models/prefix.py", "large_models/templates.py", "large_models/utils.py",
                                       "large_models/peft_local/", "bert_model/peft_local/utils/__init__.py",
                                       "bert_model/peft_local/utils/adapters_utils.py",
                                       "bert_model/peft_local/utils/other.py",
                                       "loretta/loretta/utils/adapters_utils.py", "loretta/loretta/utils/other.py",
                                       "loretta/loretta/utils/config.py", "loretta/loretta/utils/save_and_load.py"),
                           # test112 (bench/corpus_test112/SELECTION.md, vendoring check): LKU-Net's TransMorph IXI files; the
                           # SSL4MIS files BCP and MC-Net share (the same paths in both, so both copies go); SAMed's
                           # segment_anything/ and its SAMed_h/ in-tree duplicates; the ChamferDistancePytorch, pointnet2_ops,
                           # Pointnet2.PyTorch, MSN EMD / expansion-penalty and GRNet gridding / cubic-feature-sampling copies
                           # of seedformer, Density_aware_Chamfer_Distance and Point_Diffusion_Refinement (with PDR's in-tree
                           # second PyTorchEMD copy); the CompressAI copies of GainedVAE and InvCompress; RC-PyTorch's torchac;
                           # snn_angular_velocity's slayerPytorch
                           "test112": ("LKU-Net_3D_IXI/utils.py", "LKU-Net_3D_IXI/data/",
                                       "LKU-Net-Affine_RnR-ExM-2023/Pipeline/Functions.py",
                                       "LKU-Net-Affine_RnR-ExM-2023/Pipeline/Models.py",
                                       "code/dataloaders/acdc_data_processing.py", "code/dataloaders/la_heart_processing.py",
                                       "code/utils/metrics.py", "code/utils/ramps.py",
                                       "segment_anything/", "SAMed_h/datasets/dataset_synapse.py",
                                       "SAMed_h/sam_lora_image_encoder.py",
                                       "codes/Chamfer3D/", "codes/pointnet2_ops_lib/", "codes/pointnet_utils/",
                                       "utils/ChamferDistancePytorch/", "utils/Pointnet2.PyTorch/", "utils/emd/",
                                       "utils/expansion_penalty/", "utils/cubic_feature_sampling/", "utils/gridding/",
                                       "utils_v2/metrics/", "pointnet2/models/pvd/metrics/ChamferDistancePytorch/",
                                       "pointnet2/models/pvd/metrics/PyTorchEMD/", "pointnet2_ops_lib/",
                                       "compressai/", "compressai_examples/", "codes/examples/",
                                       "src/torchac/", "slayerpytorch/"),
                           }
# Splits whose SPLIT_EXCLUDED_SUBTREES also apply to their top-up pools (tuned_t14g's applied to its main rounds only).
TOPUP_EXCLUDES_SUBTREES = frozenset({"test43", "test45", "test47", "test49", "test51", "test53", "test56", "test59",
                                     "test60", "test63", "test64", "test66", "test68", "test70", "test73", "test75",
                                     "test71", "test77", "test76", "test79", "test82", "test81", "test84",
                                     "test85", "test87", "test88", "test90", "test91", "test93", "test92", "test95", "test96",
                                     "test98", "test99", "test102", "test101", "test106", "test105", "test109",
                                     "test112", "test113", "test116", "test119", "test120", "test124",
                                     "test125", "test127", "test130", "test131", "test133", "test135"})
PER_CODE_BASE = 2
# test16 on (bench/corpus_test16/SELECTION.md): at most this many files per code base in the whole split (main rounds,
# top-up and further rounds); a file of a code base that already has this many drawn files is skipped.
MAX_FILES_PER_CODE_BASE = {"test16": 8, "test17": 8, "test18": 8, "test19": 8, "test20": 8, "test21": 8, "test22": 8,
                           "test23": 8, "test24": 8, "test25": 8, "test26": 8, "test27": 8,
                           "test28": 8, "test33": 8, "test34": 8, "test36": 8, "test37": 8, "test39": 8,
                           "test40": 8, "test42": 8, "test43": 8, "test45": 8, "test47": 8, "test49": 8, "test51": 8,
                           "test53": 8, "test56": 8, "test59": 8, "test60": 8, "test63": 8, "test64": 8, "test66": 8, "test68": 8,
                           "test70": 8, "test73": 8, "test75": 8, "test71": 8, "test77": 8, "test76": 8, "test79": 8, "test82": 8,
                           "test81": 8, "test84": 8, "test85": 8, "test87": 8, "test88": 8, "test90": 8, "test91": 8,
                           "test93": 8, "test92": 8, "test95": 8, "test96": 8, "test98": 8, "test99": 8, "test102": 8, "test101": 8,
                           "test106": 8, "test105": 8, "test109": 8, "test112": 8, "test113": 8, "test116": 8, "test119": 8, "test120": 8,
                           "test124": 8,
                           "test125": 8, "test127": 8, "test130": 8, "test131": 8, "test133": 8, "test135": 8,
                           "tuned_s15c": 6,
                           "tuned_t16c": 6, "tuned_t17c": 6, "tuned_t18c": 6, "tuned_t19e": 6,
                           "tuned_t22a": 6, "tuned_t22b": 6, "tuned_t25a": 4}
# test25 (bench/corpus_test25/SELECTION.md): the top-up runs in this category order, with this target of must-flag
# pairs per category and this cap of top-up files per category (test4's to test24's rule: recall.CATEGORIES' order,
# 20 and 12). Nothing here reads it; it records the rule for whoever replays the draw.
TOPUP_RULES = {"test25": {"order": ("kernel", "attention", "precision", "device", "distributed", "apex", "third_party"),
                          "target": 25, "cap": 16},
               # test26 (bench/corpus_test26/SELECTION.md)
               "test26": {"order": ("precision", "attention", "kernel", "device", "distributed", "apex", "third_party"),
                          "target": 25, "cap": 16},
               # test27 (bench/corpus_test27/SELECTION.md): test26's order and cap; target 25, but 30 for precision
               # ("targets": a category's own target where it differs from "target")
               "test27": {"order": ("precision", "attention", "kernel", "device", "distributed", "apex", "third_party"),
                          "target": 25, "targets": {"precision": 30}, "cap": 16},
               # test28 (bench/corpus_test28/SELECTION.md)
               "test28": {"order": ("kernel", "distributed", "precision", "attention", "device", "apex", "third_party"),
                          "target": 25, "cap": 16},
               # test33 (bench/corpus_test33/SELECTION.md): test27's rule; order kernel, precision, distributed, then the
               # others in test27's order; target 25, but 30 for kernel
               "test33": {"order": ("kernel", "precision", "distributed", "attention", "device", "apex", "third_party"),
                          "target": 25, "targets": {"kernel": 30}, "cap": 16},
               # test34 (bench/corpus_test34/SELECTION.md): distributed, precision, attention first; target 25, but 15 for
               # attention
               "test34": {"order": ("distributed", "precision", "attention", "kernel", "device", "apex", "third_party"),
                          "target": 25, "targets": {"attention": 15}, "cap": 16},
               # test36 (bench/corpus_test36/SELECTION.md): test27's rule; order kernel, third_party, precision, then the
               # others in test27's order; target 25, but 30 for kernel and third_party
               "test36": {"order": ("kernel", "third_party", "precision", "attention", "device", "distributed", "apex"),
                          "target": 25, "targets": {"kernel": 30, "third_party": 30}, "cap": 16},
               # test37 (bench/corpus_test37/SELECTION.md): attention, apex, distributed, precision first; target 25, but
               # 15 for apex
               "test37": {"order": ("attention", "apex", "distributed", "precision", "kernel", "device", "third_party"),
                          "target": 25, "targets": {"apex": 15}, "cap": 16},
               # test39 (bench/corpus_test39/SELECTION.md): test36's rule (order kernel, third_party, precision, then the
               # others in test27's order; target 25, but 30 for kernel and third_party), with SPLIT_TOPUP_WORDS' extension
               "test39": {"order": ("kernel", "third_party", "precision", "attention", "device", "distributed", "apex"),
                          "target": 25, "targets": {"kernel": 30, "third_party": 30}, "cap": 16},
               # test40 (bench/corpus_test40/SELECTION.md): test37's rule (order attention, apex, distributed, precision,
               # then the others; target 25, but 15 for apex)
               "test40": {"order": ("attention", "apex", "distributed", "precision", "kernel", "device", "third_party"),
                          "target": 25, "targets": {"apex": 15}, "cap": 16},
               # test42 (bench/corpus_test42/SELECTION.md): order attention, distributed, third_party, precision, then
               # kernel, device, apex; target 25, but 30 for attention and distributed and 15 for apex; with
               # SPLIT_TOPUP_WORDS' test42 extension
               "test42": {"order": ("attention", "distributed", "third_party", "precision", "kernel", "device", "apex"),
                          "target": 25, "targets": {"attention": 30, "distributed": 30, "apex": 15}, "cap": 16},
               # test43 (bench/corpus_test43/SELECTION.md): kernel, third_party, distributed, attention first; target 25,
               # but 30 for kernel and third_party and 15 for apex; SPLIT_TOPUP_WORDS' test43 extension
               "test43": {"order": ("kernel", "third_party", "distributed", "attention", "precision", "device", "apex"),
                          "target": 25, "targets": {"kernel": 30, "third_party": 30, "apex": 15}, "cap": 16},
               # test45 (bench/corpus_test45/SELECTION.md): third_party, distributed, kernel, attention first; target 25,
               # but 40 for third_party and 15 for apex; SPLIT_TOPUP_WORDS' test45 entry (test42's plus test39's kernel)
               "test45": {"order": ("third_party", "distributed", "kernel", "attention", "precision", "device", "apex"),
                          "target": 25, "targets": {"third_party": 40, "apex": 15}, "cap": 16},
               # test47 (bench/corpus_test47/SELECTION.md): kernel, third_party, attention, precision first; target 25,
               # but 35 for kernel and third_party and 15 for apex; SPLIT_TOPUP_WORDS' test47 entry (test45's)
               "test47": {"order": ("kernel", "third_party", "attention", "precision", "distributed", "device", "apex"),
                          "target": 25, "targets": {"kernel": 35, "third_party": 35, "apex": 15}, "cap": 16},
               # test49 (bench/corpus_test49/SELECTION.md): attention, precision, third_party, apex first; target 25,
               # but 35 for attention and precision and 15 for apex; SPLIT_TOPUP_WORDS' test49 entry (test47's)
               "test49": {"order": ("attention", "precision", "third_party", "apex", "kernel", "distributed", "device"),
                          "target": 25, "targets": {"attention": 35, "precision": 35, "apex": 15}, "cap": 16},
               # test51 (bench/corpus_test51/SELECTION.md): precision, third_party, distributed, kernel first; target
               # 25, but 35 for precision and 15 for apex; SPLIT_TOPUP_WORDS' test51 entry (test49's)
               "test51": {"order": ("precision", "third_party", "distributed", "kernel", "apex", "attention", "device"),
                          "target": 25, "targets": {"precision": 35, "apex": 15}, "cap": 16},
               # test53 (bench/corpus_test53/SELECTION.md): kernel, third_party, precision, distributed first; target
               # 25, but 30 for kernel, third_party and precision and 15 for apex; SPLIT_TOPUP_WORDS' test53 entry
               # (test51's)
               "test53": {"order": ("kernel", "third_party", "precision", "distributed", "apex", "attention", "device"),
                          "target": 25, "targets": {"kernel": 30, "third_party": 30, "precision": 30, "apex": 15},
                          "cap": 16},
               # test56 (bench/corpus_test56/SELECTION.md): kernel, precision, third_party, distributed first; target
               # 25, but 30 for kernel, precision and third_party and 15 for apex; SPLIT_TOPUP_WORDS' test56 entry
               # (test53's)
               "test56": {"order": ("kernel", "precision", "third_party", "distributed", "apex", "attention", "device"),
                          "target": 25, "targets": {"kernel": 30, "precision": 30, "third_party": 30, "apex": 15},
                          "cap": 16},
               # test59 (bench/corpus_test59/SELECTION.md): precision, distributed, third_party, apex first; target
               # 25, but 30 for precision, distributed and third_party and 15 for apex; SPLIT_TOPUP_WORDS' test59 entry
               # (test53's)
               "test59": {"order": ("precision", "distributed", "third_party", "apex", "kernel", "attention", "device"),
                          "target": 25, "targets": {"precision": 30, "distributed": 30, "third_party": 30, "apex": 15},
                          "cap": 16},
               # test60 (bench/corpus_test60/SELECTION.md): kernel, distributed, attention, third_party first; target
               # 25, but 30 for kernel, distributed and attention and 15 for apex; SPLIT_TOPUP_WORDS' test60 entry
               # (test59's)
               "test60": {"order": ("kernel", "distributed", "attention", "third_party", "precision", "apex", "device"),
                          "target": 25, "targets": {"kernel": 30, "distributed": 30, "attention": 30, "apex": 15},
                          "cap": 16},
               # test63 (bench/corpus_test63/SELECTION.md): precision, third_party, apex, distributed first; target
               # 25, but 30 for precision, third_party and distributed and 15 for apex; SPLIT_TOPUP_WORDS' test63 entry
               # (test59's)
               "test63": {"order": ("precision", "third_party", "apex", "distributed", "kernel", "attention", "device"),
                          "target": 25, "targets": {"precision": 30, "third_party": 30, "distributed": 30, "apex": 15},
                          "cap": 16},
               # test64 (bench/corpus_test64/SELECTION.md): apex, attention, precision, distributed first; target
               # 25, but 30 for attention, precision and distributed and 20 for apex; SPLIT_TOPUP_WORDS' test64 entry
               # (test59's)
               "test64": {"order": ("apex", "attention", "precision", "distributed", "kernel", "third_party", "device"),
                          "target": 25, "targets": {"attention": 30, "precision": 30, "distributed": 30, "apex": 20},
                          "cap": 16},
               # test66 (bench/corpus_test66/SELECTION.md): third_party, precision, kernel, attention first; target
               # 20, but 35 for third_party, precision, kernel and attention; SPLIT_TOPUP_WORDS' test66 entry
               # (test64's)
               "test66": {"order": ("third_party", "precision", "kernel", "attention", "apex", "distributed", "device"),
                          "target": 20, "targets": {"third_party": 35, "precision": 35, "kernel": 35, "attention": 35},
                          "cap": 16},
               # test68 (bench/corpus_test68/SELECTION.md): precision, third_party, attention, kernel first; target
               # 20, but 35 for precision, third_party, attention and kernel; SPLIT_TOPUP_WORDS' test68 entry
               # (test64's)
               "test68": {"order": ("precision", "third_party", "attention", "kernel", "apex", "distributed", "device"),
                          "target": 20, "targets": {"precision": 35, "third_party": 35, "attention": 35, "kernel": 35},
                          "cap": 16},
               # test70 (bench/corpus_test70/SELECTION.md): attention, kernel, third_party, precision first; target
               # 20, but 35 for third_party, precision, kernel and attention; SPLIT_TOPUP_WORDS' test70 entry (test64's)
               "test70": {"order": ("attention", "kernel", "third_party", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"attention": 35, "kernel": 35, "third_party": 35, "precision": 35},
                          "cap": 16},
               # test73 (bench/corpus_test73/SELECTION.md): kernel, third_party, precision, attention first; target
               # 20, but 35 for kernel, third_party, precision and attention; SPLIT_TOPUP_WORDS' test73 entry (test64's)
               "test73": {"order": ("kernel", "third_party", "precision", "attention", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "precision": 35, "attention": 35},
                          "cap": 16},
               # test75 (bench/corpus_test75/SELECTION.md): attention, third_party, kernel, precision first; target
               # 20, but 35 for attention, third_party, kernel and precision; SPLIT_TOPUP_WORDS' test75 entry (test64's)
               "test75": {"order": ("attention", "third_party", "kernel", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"attention": 35, "third_party": 35, "kernel": 35, "precision": 35},
                          "cap": 16},
               # test71 (bench/corpus_test71/SELECTION.md): third_party, kernel, attention, precision first; target
               # 20, but 35 for third_party, precision, kernel and attention; SPLIT_TOPUP_WORDS' test71 entry (test64's)
               "test71": {"order": ("third_party", "kernel", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"third_party": 35, "kernel": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test77 (bench/corpus_test77/SELECTION.md): third_party, attention, precision, kernel first; target
               # 20, but 35 for third_party, attention, precision and kernel; SPLIT_TOPUP_WORDS' test77 entry (test75's)
               "test77": {"order": ("third_party", "attention", "precision", "kernel", "apex", "distributed", "device"),
                          "target": 20, "targets": {"third_party": 35, "attention": 35, "precision": 35, "kernel": 35},
                          "cap": 16},
               # test76 (bench/corpus_test76/SELECTION.md): kernel, third_party, attention, precision first; target
               # 20, but 35 for kernel, third_party, attention and precision; SPLIT_TOPUP_WORDS' test76 entry (test75's)
               "test76": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test79 (bench/corpus_test79/SELECTION.md): third_party, kernel, attention, precision first; target
               # 20, but 35 for third_party, kernel, attention and precision; SPLIT_TOPUP_WORDS' test79 entry (test75's)
               "test79": {"order": ("third_party", "kernel", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"third_party": 35, "kernel": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test82 (bench/corpus_test82/SELECTION.md): kernel, third_party, attention, precision first; target
               # 20, but 35 for kernel, third_party, attention and precision; SPLIT_TOPUP_WORDS' test82 entry (test79's)
               "test82": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test81 (bench/corpus_test81/SELECTION.md): kernel, third_party, attention, precision first; target
               # 20, but 35 for kernel, third_party, attention and precision; SPLIT_TOPUP_WORDS' test81 entry (test79's)
               "test81": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test84 (bench/corpus_test84/SELECTION.md): test81's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test84 entry (test81's)
               "test84": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test85 (bench/corpus_test85/SELECTION.md): kernel, third_party, attention, precision first; target
               # 20, but 35 for kernel, third_party, attention and precision; SPLIT_TOPUP_WORDS' test85 entry (test81's)
               "test85": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test87 (bench/corpus_test87/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test87 entry (test84's)
               "test87": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test88 (bench/corpus_test88/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test88 entry (test84's)
               "test88": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test90 (bench/corpus_test90/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test90 entry (test84's)
               "test90": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test91 (bench/corpus_test91/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test91 entry (test84's)
               "test91": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test93 (bench/corpus_test93/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test93 entry (test84's)
               "test93": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test92 (bench/corpus_test92/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test92 entry (test84's)
               "test92": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test95 (bench/corpus_test95/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test95 entry (test84's)
               "test95": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test96 (bench/corpus_test96/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test96 entry (test84's)
               "test96": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test98 (bench/corpus_test98/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test98 entry (test84's)
               "test98": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test99 (bench/corpus_test99/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test99 entry (test84's)
               "test99": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                          "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                          "cap": 16},
               # test102 (bench/corpus_test102/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test102 entry (test84's)
               "test102": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test101 (bench/corpus_test101/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test101 entry (test84's)
               "test101": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test106 (bench/corpus_test106/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test106 entry (test84's)
               "test106": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test105 (bench/corpus_test105/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test105 entry (test84's)
               "test105": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test109 (bench/corpus_test109/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test109 entry (test84's)
               "test109": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test112 (bench/corpus_test112/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test112 entry (test84's)
               "test112": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test113 (bench/corpus_test113/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test113 entry (test84's)
               "test113": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test116 (bench/corpus_test116/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test116 entry (test84's)
               "test116": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test119 (bench/corpus_test119/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test119 entry (test84's)
               "test119": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test120 (bench/corpus_test120/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test120 entry (test84's)
               "test120": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test124 (bench/corpus_test124/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test124 entry (test84's)
               "test124": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test125 (bench/corpus_test125/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test125 entry (test84's)
               "test125": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test127 (bench/corpus_test127/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test127 entry (test84's)
               "test127": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test130 (bench/corpus_test130/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test130 entry (test84's)
               "test130": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test131 (bench/corpus_test131/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test131 entry (test84's)
               "test131": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                            "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                            "cap": 16},
               # test133 (bench/corpus_test133/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test133 entry (test84's)
               "test133": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16},
               # test135 (bench/corpus_test135/SELECTION.md): test84's rule; kernel, third_party, attention, precision
               # first; target 20, but 35 for those four; SPLIT_TOPUP_WORDS' test135 entry (test84's)
               "test135": {"order": ("kernel", "third_party", "attention", "precision", "apex", "distributed", "device"),
                           "target": 20, "targets": {"kernel": 35, "third_party": 35, "attention": 35, "precision": 35},
                           "cap": 16}}
# test19 on (bench/corpus_test19/SELECTION.md): a file that `audit`'s default discovery skips (under build/, dist/
# or another of auditor/discover.py's DEFAULT_EXCLUDE folders) is not eligible: no user's audit sees it (test18 drew
# pyiqa's build/lib/ copy of its own package). Earlier splits keep their rule, so their replays do not change.
AUDITED_ONLY_SPLITS = frozenset({"test19", "test20", "test21", "test22", "test23", "test24", "test25", "test26", "test27",
                                 "test28", "test33", "test34", "test36", "test37", "test39", "test40", "test42", "test43",
                                 "test45", "test47", "test49", "test51", "test53", "test56", "test59",
                                 "test60", "test63", "test64", "test66", "test68", "test70", "test71", "test73", "test75", "test77",
                                 "test76", "test79", "test82", "test81", "test84", "test85", "test87", "test88", "test90", "test91",
                                 "test93", "test92", "test95", "test96", "test98", "test99", "test102", "test101", "test106", "test105",
                                 "test109", "test112", "test113", "test116", "test119", "test120", "test124",
                                 "test125", "test127", "test130", "test131", "test133", "test135",
                                 "tuned_t17c",
                                 "tuned_t18c", "tuned_t19e", "tuned_t22a", "tuned_t22b", "tuned_t25a"})


def eligible(root: Path, split: str = "test") -> list[str]:
    return [p for p in _eligible_texts(root, SPLIT_EXCLUDED_SUBTREES.get(split, ())) if _seen_by_audit(root, p, split)]


def _seen_by_audit(root: Path, path: str, split: str) -> bool:
    return split not in AUDITED_ONLY_SPLITS or path in _audited_paths(root)


@functools.cache
def _audited_paths(root: Path) -> frozenset[str]:
    """The paths (relative to the unpacked archive) that `audit root` reads with its default folder exclusions. Not
    its .gitignore reading: bench/_corpus lies in this checkout, whose .gitignore names it."""
    from auditor.discover import discover   # only test19 on needs the auditor

    return frozenset(path.relative_to(root).as_posix() for path, _ in discover([root], respect_gitignore=False).files)


@functools.cache
def _eligible_texts(root: Path, extra_excluded: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Eligible paths of one unpacked archive with their lines (read once: the top-up reuses them)."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if not f.is_file():
            continue      # a folder named like a module (fastMRI's `unet_reproduce_20201111.py/`; l91, session 39)
        if (EXCLUDED_DIRS & set(rel.parts[:-1])
                or any("/" + t in "/" + rel.as_posix() for t in EXCLUDED_SUBTREES + extra_excluded)):
            continue
        lines = f.read_text(errors="replace").splitlines()
        if not MIN_LINES <= len(lines) <= MAX_LINES:
            continue
        if sum(1 for line in lines if GPU_RE.search(line)) >= MIN_MATCHING_LINES:
            out[rel.as_posix()] = tuple(lines)
    return out


def seeded_order(name: str, paths: list[str], seed_prefix: str = SEED_PREFIX) -> list[str]:
    paths = sorted(paths)
    random.Random(seed_prefix + name).shuffle(paths)
    return paths


def draw(per: int | None, split: str = "test") -> list[tuple[dict, str]]:
    drawn = []
    for src in main_sources(split):
        root = recall.source_dir(src["name"], src["version"])
        if not root.exists():
            raise recall.BenchError(f"{root} missing: run `python bench/recall.py --split {split} fetch`")
        order = seeded_order(src["name"], eligible(root, split), SEED_PREFIXES[split])
        drawn += [(src, p) for p in (order if per is None else order[:per])]
    return drawn


@functools.cache
def topup_order(category: str, split: str = "test3") -> list[tuple[dict, str]]:
    """Eligible files of every code base of the split that match `category`'s word list on at
    least TOPUP_MIN_LINES lines, as (source, path) in one seeded order over all code bases."""
    return _category_pool(category, main_sources(split), split, SEED_PREFIXES[split] + "top-up:" + category)


def main_sources(split: str) -> list[dict]:
    """The code bases of the main rounds and top-up: those not reserved for a supplement."""
    return [s for s in recall.load_sources(split) if "supplement" not in s]


@functools.cache
def supplement_order(category: str, split: str = "test4") -> list[tuple[dict, str]]:
    """A category supplement's pool and order (bench/corpus_test4/SELECTION.md, "Apex supplement"):
    the eligible files of the code bases marked `"supplement": category` matching the category's
    word list on at least TOPUP_MIN_LINES lines, in one seeded order."""
    sources = [s for s in recall.load_sources(split) if s.get("supplement") == category]
    return _category_pool(category, sources, split, SEED_PREFIXES[split] + category + "-supplement")


def _category_pool(category: str, sources: list[dict], split: str, seed: str) -> list[tuple[dict, str]]:
    words = re.compile(topup_words(category, split), re.IGNORECASE)
    pool = []
    for src in sources:
        root = recall.source_dir(src["name"], src["version"])
        if not root.exists():
            raise recall.BenchError(f"{root} missing: run `python bench/recall.py --split {split} fetch`")
        # test43 on: the split's excluded subtrees leave its top-up pools too (tuned_t14g's pools keep their replay)
        extra = SPLIT_EXCLUDED_SUBTREES.get(split, ()) if split in TOPUP_EXCLUDES_SUBTREES else ()
        for p, lines in _eligible_texts(root, extra).items():
            if _seen_by_audit(root, p, split) and sum(1 for line in lines if words.search(line)) >= TOPUP_MIN_LINES:
                pool.append((src["name"], p, src))
    pool.sort(key=lambda t: (t[0], t[1]))
    random.Random(seed).shuffle(pool)
    return [(src, p) for _, p, src in pool]


def resolve_test3(labels: dict[tuple[str, str], recall.LabelledFile],
                  split: str = "test3") -> tuple[list[tuple[str, str, str]], tuple[str, str] | None]:
    """Apply test3's whole rule, reading its stopping points from the labels made so far.

    Returns the drawn files as (code base, path, why) in drawing order, and the next file the rule
    needs labelled before it can go on (None when the draw is complete). `labels` maps
    (code base, path) to the labels of each file labelled so far.
    """
    sources = recall.load_sources(split)
    orders = {}
    for src in sources:
        root = recall.source_dir(src["name"], src["version"])
        if not root.exists():
            raise recall.BenchError(f"{root} missing: run `python bench/recall.py --split {split} fetch`")
        orders[src["name"]] = seeded_order(src["name"], eligible(root), SEED_PREFIXES[split])
    drawn: list[tuple[str, str, str]] = []
    lines = 0
    must_flag = {c: 0 for c in recall.CATEGORIES}

    def take(key: tuple[str, str], why: str) -> bool:
        nonlocal lines
        drawn.append((*key, why))
        lf = labels.get(key)
        if lf is None:
            return False
        lines += len(lf.lines)
        for ll in lf.lines.values():
            for c in ll.categories:
                must_flag[c] += 1
        return True

    rnd = 0
    while rnd < MAIN_ROUNDS_MIN or lines < MAIN_MIN_LABELLED:
        if all(rnd >= len(o) for o in orders.values()):
            break
        for src in sources:
            order = orders[src["name"]]
            if rnd < len(order) and not take((src["name"], order[rnd]), f"round {rnd + 1}"):
                return drawn, drawn[-1][:2]
        rnd += 1
    taken = {c: 0 for c in recall.CATEGORIES}
    for cap in TOPUP_CAPS:
        for cat in recall.CATEGORIES:
            for src, path in topup_order(cat, split):
                if must_flag[cat] >= TOPUP_TARGET or taken[cat] >= cap:
                    break
                if any((src["name"], path) == d[:2] for d in drawn):
                    continue
                taken[cat] += 1
                if not take((src["name"], path), f"top-up {cat} {taken[cat]}"):
                    return drawn, drawn[-1][:2]
    return drawn, None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per", type=int, default=PER_CODE_BASE, help="files per code base")
    ap.add_argument("--all", action="store_true", help="every eligible file, in seeded order")
    ap.add_argument("--split", choices=list(SEED_PREFIXES), default="test",
                    help="which blind split's code bases (and seed)")
    ap.add_argument("--topup", choices=list(TOPUP_WORDS),
                    help="list this category's top-up order instead (test3's rule)")
    ap.add_argument("--supplement", choices=list(TOPUP_WORDS),
                    help="list this category's supplement order (test4's apex supplement)")
    ap.add_argument("--resolve", action="store_true",
                    help="test3: the whole draw, stopping points read from its labels so far")
    args = ap.parse_args(argv)
    try:
        if args.resolve:
            labels = {(lf.package, lf.path): lf for lf in recall.load_all_labels(args.split)}
            drawn, needed = resolve_test3(labels, args.split)
            for name, path, why in drawn:
                print(f"{name}\t{path}\t{why}")
            if needed:
                print(f"next to label: {needed[0]} {needed[1]}")
            return 0
        picked = (supplement_order(args.supplement, args.split) if args.supplement
                  else topup_order(args.topup, args.split) if args.topup
                  else draw(None if args.all else args.per, args.split))
        for src, path in picked:
            print(f"{src['name']}\t{src['version']}\t{path}")
    except recall.BenchError as e:
        print(f"select_test.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
