"""t17a (issue 15, tuned on project test20 / test21): small trees written the way the missed projects are, with lines
that must and must not be reported:

- `python -m pkg.mod` launches (quip-sharp's `python -m quantize_llama.finetune_e2e_llama`): the module's file is the
  launched script, as a `.py` path is; `python -m pip` / `-m torch.distributed.launch train.py` handled as before;
- a chain of unconditional imports longer than four files (MAGI-1's entry.py -> package __init__ -> pipeline -> model
  package -> model -> flash_attn) and one ending in a third_party library (NPU436, radial-attention's flashinfer);
- the finding on the line naming the script (`wan_t2v_inference.py \\` below `torchrun --nproc_per_node=4 \\`);
- an extension built by a top folder's setup.py (`kernels/setup.py` -> `omniserve_backend.*`) imported by its
  installed name;
- an option whose value is a script variable (`--use-flash $FLASH` after `export FLASH=0`: off, not a bare switch);
- a run's saved arguments in its own output folder (DuoAttention's pattern `config.json`): no finding;
- a CUDA source whose first CUDA include is a CUTLASS-layout project header (QUIK's `"symmetric/gemm/device/..."`).
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.static_snippets import tree_codes_by_line, write_source



_write = write_source
_audit = tree_codes_by_line


def _quant_tree(root: Path) -> Path:
    _write(root, "lib/__init__.py", "")
    _write(root, "lib/codebook.py", """\
        import torch
        import quiptools_cuda


        def decode(x):
            return quiptools_cuda.decompress(x)
        """)
    _write(root, "quiptools/setup.py", """\
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension

        setup(name="quiptools_cuda",
              ext_modules=[CUDAExtension(name="quiptools_cuda", sources=["quiptools_wrapper.cpp", "quiptools.cu"])],
              cmdclass={"build_ext": BuildExtension})
        """)
    _write(root, "quantize_llama/__init__.py", "")
    _write(root, "quantize_llama/finetune_e2e_llama.py", """\
        import argparse

        from lib import codebook


        def main(args):
            return codebook.decode(args)
        """)
    _write(root, "quantize_llama/example.sh", """\
        # python -m quantize_llama.finetune_e2e_llama --help
        python -m quantize_llama.finetune_e2e_llama --base_model meta-llama/Llama-2-7b-hf --ft_epochs 8
        python -m pip install -r requirements.txt
        python -m torch.distributed.launch --nproc_per_node 2 quantize_llama/finetune_e2e_llama.py --ft_bs 1
        """)
    return root


def test_a_module_launch_is_the_file_of_its_dotted_path(tmp_path):
    got = _audit(_quant_tree(tmp_path), "quantize_llama/example.sh")
    # the module launch and the torch.distributed.launch of the file reach the extension a top folder's setup.py
    # builds (`quiptools_cuda`); the comment and `-m pip` give nothing
    assert "NPU827" in got.get(2, set()) and "NPU827" in got.get(4, set()), got
    assert not got.get(1) and "NPU827" not in got.get(3, set()), got


def _pipeline_tree(root: Path) -> Path:
    _write(root, "inference/__init__.py", "")
    _write(root, "inference/pipeline/__init__.py", "from .pipeline import MagiPipeline\n")
    _write(root, "inference/pipeline/pipeline.py", "import torch\n\nfrom inference.model.dit import get_dit\n\n"
           "class MagiPipeline:\n    pass\n")
    _write(root, "inference/model/__init__.py", "")
    _write(root, "inference/model/dit/__init__.py", "from .dit_model import get_dit\n")
    _write(root, "inference/model/dit/dit_model.py", "import torch\n\nfrom .dit_module import Attention\n\n"
           "def get_dit():\n    return Attention()\n")
    _write(root, "inference/model/dit/dit_module.py", """\
        import torch
        import deep_gemm
        import flashinfer
        from flash_attn import flash_attn_varlen_func


        class Attention(torch.nn.Module):
            def forward(self, q, k, v, cu):
                return flash_attn_varlen_func(q, k, v, cu, cu, 128, 128)
        """)
    _write(root, "inference/pipeline/entry.py", """\
        import argparse

        from inference.pipeline import MagiPipeline


        def main():
            MagiPipeline()
        """)
    _write(root, "example/run.sh", """\
        export PYTHONPATH="$MAGI_ROOT:$PYTHONPATH"
        CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 \\
            inference/pipeline/entry.py \\
            --config_file example/4.5B/4.5B_base_config.json
        """)
    return root


def test_a_six_file_chain_reaches_the_attention_and_third_party_imports_on_the_scripts_line(tmp_path):
    got = _audit(_pipeline_tree(tmp_path), "example/run.sh")
    # entry.py -> pipeline/__init__ -> pipeline.py -> dit/__init__ -> dit_model -> dit_module: six files; the launch
    # findings sit on the line naming the script, the CUDA_VISIBLE_DEVICES prefix keeps its own line
    assert {"NPU828", "NPU436"} <= got.get(3, set()), got
    assert "NPU828" not in got.get(2, set()) and "NPU436" not in got.get(2, set()), got


def test_an_extension_built_by_a_top_folders_setup_py_is_a_kernel_import(tmp_path):
    root = tmp_path / "serve"
    _write(root, "kernels/setup.py", """\
        from setuptools import setup
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension

        ops = CUDAExtension(name="serve_backend.activation_ops", sources=["csrc/activation.cu"])
        setup(name="serve_backend", ext_modules=[ops], cmdclass={"build_ext": BuildExtension})
        """)
    _write(root, "serve/__init__.py", "")
    _write(root, "serve/layers.py", "import torch\nfrom serve_backend import activation_ops\n")
    _write(root, "generate.py", "import argparse\n\nfrom serve.layers import activation_ops\n")
    _write(root, "other.py", "import argparse\n\nimport serve\n")
    _write(root, "scripts/run.sh", "python generate.py --model m\npython other.py --model m\n")
    got = _audit(root, "scripts/run.sh")
    assert "NPU827" in got.get(1, set()) and "NPU827" not in got.get(2, set()), got


def test_an_option_given_by_a_variable_the_script_set_to_off_is_off(tmp_path):
    _write(tmp_path, "eval_mtbench.py", "import argparse\n")
    _write(tmp_path, "run_mtbench.sh", """\
        export FLASH=0
        CUDA_VISIBLE_DEVICES=0 python eval_mtbench.py --level 5 --use-flash $FLASH --use-pp 0
        export FLASH=1
        python eval_mtbench.py --level 5 --use-flash $FLASH --use-pp 0
        python eval_mtbench.py --level 5 --use-flash $UNSET_FLASH --use-pp 0
        """)
    got = _audit(tmp_path, "run_mtbench.sh")
    assert got.get(2) == {"NPU004"}, got            # the device prefix only
    # switched on by the variable, and (as before) a variable the script never sets: the switch is taken as given
    assert "NPU363" in got.get(4, set()) and "NPU363" in got.get(5, set()), got


def test_a_runs_saved_arguments_in_its_own_output_folder_are_a_record(tmp_path):
    folder = "attn_patterns/Mistral-7B-Instruct-v0.2/lr=0.02-reg=0.05-ctx=1000_32000-multi_passkey10"
    args = {"model_name": "models/Mistral-7B-Instruct-v0.2", "output_dir": folder, "sink_size": 128,
            "recent_size": 256, "device": "cuda:0", "streaming_attn_implementation": "blocksparse"}
    _write(tmp_path, f"{folder}/config.json", json.dumps(args))
    assert _audit(tmp_path, f"{folder}/config.json") == {}
    # the same settings in a config that writes elsewhere (a training config someone edits) keep their finding
    _write(tmp_path, "configs/train.json", json.dumps({**args, "output_dir": "outputs/run1"}))
    assert "NPU019" in _audit(tmp_path, "configs/train.json").get(1, set())


def test_a_cutlass_layout_project_header_is_the_first_cuda_include():
    from auditor.project.cuda_source import inventory

    source = textwrap.dedent("""\
        #include "int4.h"
        #include "symmetric/gemm/device/gemm_dequant.h"
        #include "util.h"

        namespace QUIK::symmetric {
        torch::Tensor int4FusedDequantizeCUDA(const torch::Tensor &A, const torch::Tensor &B);
        }
        """)
    assert inventory(source)["first_kernel_line"] == 2
    unit_test = '#include <iostream>\n#include "../common/cutlass_unit_test.h"\n#include "gemm/thread/mma.h"\n'
    assert inventory(unit_test)["first_kernel_line"] == 2
    plain = '#include "int4.h"\n#include "util.h"\n\nint add(int a, int b) { return a + b; }\n'
    assert inventory(plain)["first_kernel_line"] == 1
