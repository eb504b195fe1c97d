from lab import label
CUPY_BACKEND = (r"""backend=['"]cupy['"]""", "kernel", "spikingjelly backend='cupy': the neuron's CuPy CUDA kernels (decision 15)")
for p in ["cifar10/model.py", "imagenet/model.py", "cifar10dvs/model.py"]:
    label("spikformer", p, [CUPY_BACKEND])
for p in ["module/ms_conv.py", "model/spikeformer.py", "module/sps.py"]:
    label("Spike-Driven-Transformer", p, [CUPY_BACKEND])
L = "src/lava/lib/dl/slayer/"
EXT = [(r"^from torch.utils.cpp_extension import load", "kernel", "cpp_extension.load import (JIT CUDA extension build)"),
       (r"os.environ\['TORCH_CUDA_ARCH_LIST'\]", "kernel", "TORCH_CUDA_ARCH_LIST set for the JIT CUDA build"),
       (r"Accelerated.module = load\(", "kernel", "load(sources=[*.cu]) JIT CUDA build of the own extension")]
label("lava-dl", L + "utils/time/shift.py", EXT + [(r"return Accelerated.shift.shift\(", "kernel", "call into the own CUDA extension")])
CALL = "call into the own CUDA extension"
label("lava-dl", L + "neuron/dynamics/adaptive_phase_th.py",
      EXT + [(r"= Accelerated.adaptive_phase_th.(dynamics|fwd)\(", "kernel", CALL)])
label("lava-dl", L + "neuron/dynamics/adaptive_resonator.py",
      EXT + [(r"= Accelerated(\.adaptive_resonator)?\\$", "kernel", CALL)])
label("lava-dl", L + "utils/filter/conv.py", EXT + [(r"return Accelerated.conv.(fwd|bwd)\(", "kernel", "call into the own CUDA extension")])
