"""tp52b (session 52, project test147): families the project-file readers missed on session 51's blind split test147
(LLM serving, OCR, speech trees). Recall: config keys that pick CUTLASS GEMM kernels by their tile tags or library
names (NPU988, NanoFlow's `gemm_op_tag` lists); a `cmake ..` of a script that steps out of its checkout and back in by
the checkout's folder name. Each with controls (other strings of the same shape, comments, builds of other folders)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes


NANOFLOW_CONFIG = """\
{
    "model_configs": {
        "torch_dtype": "float16",
        "gpu_num": 1,
        "gpu_mem": 68719476736
    },
    "pipeline_configs": {
        "gemm_op_tag": [
            "128_128_32_64_64_32_2_4_RowMajor_RowMajor_RowMajor",
            "128_256_64_64_64_64_1_3_RowMajor_ColumnMajor_RowMajor"
        ],
        "global_batch_size": 1024,
        "nanobatch_1_size": 384
    },
    "serve_configs": {"actual_gpu_num": 1, "pipeline_type": "NANOBATCH_LOCAL"}
}
"""

PROFILER_CONFIG = """\
# kernels the benchmark sweeps (cutlass_profiler --kernels=...)
sweep:
  kernels:
    - cutlass_tensorop_s1688gemm_f16_256x128_32x2_nt_align8
    - cutlass_tensorop_h16816gemm_128x128_32x3_nn_align8
  default_kernel: cutlass3x_sm90_tensorop_gemm_f16_f16_f32_void_f16_128x128x64_1x1x1_0_tnn_align8_warpspecialized
  cutlass_dir: third_party/cutlass
  note: "cutlass kernels are tuned below"
"""

LOOKALIKE_CONFIG = """\
{
    "storage": {"layout": "RowMajor", "order": ["RowMajor", "ColumnMajor"]},
    "tile_shape": ["128_128_32", "64_64_32_2_4"],
    "run_name": "128_128_32_64_64_32_2_4",
    "library": "cutlass",
    "kernel": "cutlass_notes_gemm"
}
"""


def test_cutlass_gemm_tags_in_a_serving_config(tmp_path):
    found = audit_file(tmp_path, "config_all/llama3-8B/1024.json", NANOFLOW_CONFIG)
    assert "NPU988" in codes_of_line(found, 8)                  # the key, not each tag
    assert not any(code == "NPU988" for line, code, _ in found if line != 8)
    expect_line_codes(found, {}, (4, 5, 9, 10, 12, 15))


def test_cutlass_library_kernel_names(tmp_path):
    found = audit_file(tmp_path, "bench/sweep.yaml", PROFILER_CONFIG)
    assert "NPU988" in codes_of_line(found, 3)
    assert "NPU988" in codes_of_line(found, 6)
    expect_line_codes(found, {}, (1, 4, 5, 7, 8))


def test_strings_of_the_same_shape_stay_quiet(tmp_path):
    found = audit_file(tmp_path, "configs/layout.json", LOOKALIKE_CONFIG)
    assert not any(code == "NPU988" for _line, code, _ in found)
