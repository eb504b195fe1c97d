"""Precision fixes of pd44 (session 29, issue 11; heldout32 TUNED). Code written afresh in the shapes heldout32's
false rows showed, each with a control that keeps its finding or severity:

- a helper of a script reached only from code after `if not torch.cuda.is_available(): raise` in main() (through
  another helper): its device lines are behind the gate, warnings (gates._gated_tables);
- a flag set from a torch.cuda probe and read in a conditional (`"GPU": name() if cuda else None`): the probe is
  renamed where it is called, the read is no finding of its own (flags.py, decision 4);
- a name-to-dtype conversion whose dtype sits under a support check nested in the branch (`elif amp == "bf16": if
  torch.cuda.is_bf16_supported(): dtype = torch.bfloat16`): chooses nothing (value_reads, decision 11);
- `.astype("float16")` of a numpy array (a faiss blend before `torch.from_numpy`): a host value (host_scopes)."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _by_line(tmp_path, src, field="severity", rel="scripts/profile.py"):
    return run_values_by_line(tmp_path, {rel: src}, rel, field)


PROFILE = '''\
import argparse
import time

import torch


def profile_model(model, inputs, runs=10):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(runs):
        with torch.no_grad():
            model(inputs)
    torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) / runs
    return {"seconds": elapsed, "peak": torch.cuda.max_memory_allocated()}


def profile_across_sizes(model, sizes, device):
    results = {}
    for size in sizes:
        x = torch.randn(size, 3, 224, 224, device=device)
        results[size] = profile_model(model, x)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA is required for profiling. No GPU detected.")
    device = "cuda"
    model = torch.hub.load("pytorch/vision", "resnet50").to(device).eval()
    print(profile_across_sizes(model, args.sizes, device))


if __name__ == "__main__":
    main()
'''


def test_a_helper_reached_only_behind_a_raise_gate_is_a_warning(tmp_path):
    sev = _by_line(tmp_path, PROFILE)
    for needle in ("torch.cuda.reset_peak_memory_stats()", '"peak": torch.cuda.max_memory_allocated()'):
        assert sev.get(line_of(PROFILE, needle)) == {"warning"}, needle


def test_a_helper_also_called_before_the_gate_keeps_its_error(tmp_path):
    src = PROFILE.replace("    args = parser.parse_args()\n",
                          "    args = parser.parse_args()\n    print(profile_model(torch.nn.Identity(), torch.ones(1)))\n")
    sev = _by_line(tmp_path, src)
    assert "error" in sev.get(line_of(src, '"peak": torch.cuda.max_memory_allocated()'), set())


def test_a_library_module_helper_keeps_its_error(tmp_path):
    # no `__main__` block: another module may import and call the helper with no gate
    src = PROFILE.replace('\n\nif __name__ == "__main__":\n    main()\n', "\n")
    sev = _by_line(tmp_path, src, rel="pkg/profile.py")
    assert "error" in sev.get(line_of(src, '"peak": torch.cuda.max_memory_allocated()'), set())


SYSINFO = '''\
import os
import platform

import torch
from importlib.util import find_spec


def collect_system_info():
    cuda = torch.cuda.is_available()
    info = {
        "OS": platform.platform(),
        "CPU count": os.cpu_count(),
        "GPU": torch.cuda.get_device_name(0) if cuda else None,
        "Backend": "gpu-build" if cuda else "cpu-build",
    }
    return info


HAS_FLASH_ATTN = find_spec("flash_attn") is not None


def pick_attention():
    if HAS_FLASH_ATTN:
        return "flash_attention_2"
    return "sdpa"
'''


def test_a_probe_flag_read_for_a_printout_is_not_a_finding(tmp_path):
    codes = _by_line(tmp_path, SYSINFO, "code", rel="pkg/env.py")
    assert "NPU002" in codes.get(line_of(SYSINFO, "cuda = torch.cuda.is_available()"), set())
    assert line_of(SYSINFO, '"Backend": "gpu-build" if cuda else "cpu-build"') not in codes
    # control: a flash-attn availability flag's read is where the CUDA-only branch is taken
    assert codes.get(line_of(SYSINFO, "    if HAS_FLASH_ATTN:")), codes


AMP = '''\
import warnings

import torch


def amp_dtype_of(args):
    if args.amp:
        if args.amp_dtype == "fp16":
            amp_dtype = torch.float16
        elif args.amp_dtype == "bf16":
            if torch.cuda.is_bf16_supported():
                amp_dtype = torch.bfloat16
            else:
                warnings.warn("bf16 is not supported on this device. Using fp16 instead.")
                amp_dtype = torch.float16
        else:
            amp_dtype = torch.float32
    else:
        amp_dtype = torch.float32
    return amp_dtype


def weights_dtype(args):
    if args.low_memory:
        return torch.bfloat16
    return torch.float32
'''


def test_a_conversion_branch_with_a_nested_support_check_chooses_nothing(tmp_path):
    codes = _by_line(tmp_path, AMP, "code", rel="pkg/amp.py")
    assert line_of(AMP, "amp_dtype = torch.bfloat16") not in codes
    # controls: the fallback to another dtype than the branch names, and a bf16 chosen by a flag
    fallback = AMP.splitlines().index("                amp_dtype = torch.float16") + 1
    assert "NPU202" in codes.get(fallback, set())
    assert "NPU201" in codes.get(line_of(AMP, "return torch.bfloat16"), set())


BLEND = '''\
import faiss
import numpy as np
import torch


class IndexBlend:
    def __init__(self, index_path, is_half, device):
        self.index = faiss.read_index(index_path)
        self.big_npy = self.index.reconstruct_n(0, self.index.ntotal)
        self.is_half = is_half
        self.device = device

    def blend(self, feats, rate):
        npy = feats[0].cpu().numpy().astype("float32")
        score, ix = self.index.search(npy, k=8)
        weight = np.square(1 / score)
        weight /= weight.sum(axis=1, keepdims=True)
        npy = np.sum(self.big_npy[ix] * np.expand_dims(weight, axis=2), axis=1)
        if self.is_half:
            npy = npy.astype("float16")
        return torch.from_numpy(npy).unsqueeze(0).to(self.device) * rate + (1 - rate) * feats


def compress(tensor):
    return tensor.astype("float16", copy=False)
'''


def test_a_numpy_astype_is_a_host_cast(tmp_path):
    codes = _by_line(tmp_path, BLEND, "code", rel="pkg/blend.py")
    assert line_of(BLEND, 'npy = npy.astype("float16")') not in codes
    # control: `.astype` of a parameter (an MXNet NDArray in horovod's compression) keeps its hint
    assert "NPU202" in codes.get(line_of(BLEND, 'return tensor.astype("float16", copy=False)'), set())


ORT = '''\
import numpy as np
import onnxruntime
import torch


class OnnxBackend:
    def __init__(self, weights, device, fp16=False):
        cuda = device.type != "cpu"
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]
        self.session = onnxruntime.InferenceSession(weights, providers=providers)
        self.io = self.session.io_binding()
        self.bindings = []
        for output in self.session.get_outputs():
            y_tensor = torch.empty(output.shape, dtype=torch.float16 if fp16 else torch.float32).to(device)
            self.io.bind_output(
                name=output.name,
                device_type=device.type,
                device_id=device.index if cuda else 0,
                element_type=np.float16 if fp16 else np.float32,
                shape=tuple(y_tensor.shape),
                buffer_ptr=y_tensor.data_ptr(),
            )
            self.bindings.append(y_tensor)
        self.scratch = torch.zeros(8, dtype=torch.float16, device=device)
'''


def test_an_onnx_runtime_io_binding_buffer_takes_the_exports_dtype(tmp_path):
    codes = _by_line(tmp_path, ORT, "code", rel="pkg/ort_backend.py")
    assert line_of(ORT, "y_tensor = torch.empty(output.shape") not in codes
    # control: a float16 tensor the code computes with keeps its hint
    assert "NPU202" in codes.get(line_of(ORT, "self.scratch = torch.zeros(8, dtype=torch.float16"), set())


SEEDED = PROFILE.replace('''def main():
''', '''def set_seed(seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def main():
''').replace('''    device = "cuda"
''', '''    set_seed(0)
    device = "cuda"
''')


def test_a_reseed_probe_behind_the_gate_stays_info(tmp_path):
    # the gate's warning does not hide the re-seed reading: the probe guards only a re-seed after torch.manual_seed
    sev = _by_line(tmp_path, SEEDED)
    probe = SEEDED.splitlines().index("        torch.cuda.manual_seed_all(seed)")     # the line above it, 1-based
    assert sev.get(probe) == {"info"}


def test_a_cast_before_the_backend_dispatch_keeps_its_hint(tmp_path):
    # `im = im.half()` serves every backend; only the ONNX arm binds `im` as ORT's input buffer
    src = ORT + '''
    def forward(self, im):
        if self.fp16 and im.dtype != torch.float16:
            im = im.half()
        if self.onnx:
            self.io.bind_input(name="images", device_type=im.device.type, device_id=0,
                               element_type=np.float16 if self.fp16 else np.float32, shape=tuple(im.shape),
                               buffer_ptr=im.data_ptr())
            self.session.run_with_iobinding(self.io)
            return self.bindings
        return self.model(im)
'''
    codes = _by_line(tmp_path, src, "code", rel="pkg/ort_backend.py")
    assert "NPU202" in codes.get(line_of(src, "im = im.half()"), set())
    assert line_of(src, "y_tensor = torch.empty(output.shape") not in codes
