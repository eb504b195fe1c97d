"""t20a (session 20): test22's misses and the kernel / third_party families around them."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# awd-lstm-lm's main.py / finetune.py: a --cuda switch on unless given, and the project's `model` module rebound to
# the network built from it
AWD_MAIN = b"""import argparse
import torch
import model

parser = argparse.ArgumentParser(description='PyTorch PennTreeBank RNN/LSTM Language Model')
parser.add_argument('--cuda', action='store_false',
                    help='use CUDA')
parser.add_argument('--tied', action='store_false',
                    help='tie the word embedding and softmax weights')
args = parser.parse_args()

model = model.RNNModel(args.model, ntokens, args.emsize, args.nhid)
if args.cuda:
    model = model.cuda()
    criterion = criterion.cuda()
"""


def test_store_false_cuda_option_is_on_by_default():
    assert _lines(AWD_MAIN, "NPU025") == [6]


def test_store_true_cuda_option_is_the_users_switch():
    assert _lines(AWD_MAIN.replace(b"store_false',\n                    help='use", b"store_true',\n  help='use"),
                  "NPU025") == []


def test_imported_module_rebound_to_a_network_is_not_the_module():
    assert _lines(AWD_MAIN, "NPU001") == [14, 15]


def test_function_of_an_imported_module_stays_quiet():
    src = b"from torchdrug import utils\n\ndef evaluate(self, batch):\n    return utils.cuda(batch, device=self.device)\n"
    assert _lines(src, "NPU001") == []


# hyena-dna / safari csrc/fftconv/setup.py (copied from apex's setup.py): nvcc's flags extended in a helper, and
# torch.utils.cpp_extension's own nvcc flag list edited
FFTCONV_SETUP = b"""import torch
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME


def append_nvcc_threads(nvcc_extra_args):
    _, bare_metal_major, bare_metal_minor = get_cuda_bare_metal_version(CUDA_HOME)
    if int(bare_metal_major) >= 11 and int(bare_metal_minor) >= 2:
        return nvcc_extra_args + ["--threads", "4"]
    return nvcc_extra_args


nvcc_flags = ["-O3"]
if os.name != "nt":
    nvcc_flags.append("-Xcompiler=-fno-strict-aliasing")
nvcc_flags = nvcc_flags + ["-DNDEBUG"]
cxx_flags = ["-O3"]
cxx_flags.append("-fopenmp")
torch.utils.cpp_extension.COMMON_NVCC_FLAGS.remove('-D__CUDA_NO_HALF2_OPERATORS__')
logger.info("nvcc flags: " + str(nvcc_flags + ["-g"]))
"""


def test_flags_added_to_or_removed_from_an_nvcc_flag_list():
    assert _lines(FFTCONV_SETUP, "NPU369", "setup.py") == [8, 12, 14, 15, 18]


def test_one_finding_for_a_list_extended_in_its_own_assignment():
    hits = [f for f in ENGINE.analyze_bytes(FFTCONV_SETUP, "setup.py").findings if f.code == "NPU369" and f.line == 15]
    assert len(hits) == 1


def test_flash_attn_template_with_the_thread_count_from_the_environment():
    src = (b'import os\n\n\ndef append_nvcc_threads(nvcc_extra_args):\n'
           b'    nvcc_threads = os.getenv("NVCC_THREADS") or "4"\n'
           b'    return nvcc_extra_args + ["--threads", nvcc_threads]\n\n\n'
           b'nvcc_flags.append(f"-arch=sm_{cc}")\nnvcc_flags.extend(get_flags())\n')
    assert _lines(src, "NPU369", "setup.py") == [6, 9]
    assert _lines(src, "NPU367", "setup.py") == [5]


def test_flags_added_to_the_nvcc_slot_are_nvccs_flags_not_the_nvcc_command():
    src = (b'extra_compile_args = {"cxx": ["-O3"], "nvcc": ["-O3"]}\n'
           b'extra_compile_args["nvcc"].append("-lineinfo")\n'
           b'extra_compile_args["nvcc"] += ["-DNDEBUG"]\n'
           b'extra_compile_args["nvcc"] = extra_compile_args["nvcc"] + ["-g"]\n'
           b'nvcc = shutil.which("nvcc")\n')
    findings = ENGINE.analyze_bytes(src, "setup.py").findings
    assert sorted((f.line, f.code) for f in findings if f.code in ("NPU353", "NPU407")) == [
        (1, "NPU353"), (2, "NPU353"), (3, "NPU353"), (4, "NPU353"), (5, "NPU407")]
