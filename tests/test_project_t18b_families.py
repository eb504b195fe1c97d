"""Project-file families behind test23's misses after the draw (issue 15, t18b; test23 is tuned on): a launch line
that passes the script a YAML config whose setting turns on the script's CUDA-only attention branch (Wonder3D's
`accelerate launch train_mvdiffusion_image.py --config configs/train/stage1.yaml` with
`enable_xformers_memory_efficient_attention: true`)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from static_snippets import write_tree


def _tree_findings(tmp_path: Path, files: dict[str, str]):
    from auditor.runner import run_static

    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return [(Path(r.path).as_posix().rsplit("/", 1)[-1], f) for r in run.results for f in r.findings]


TRAIN = textwrap.dedent("""\
    import argparse
    from dataclasses import dataclass

    import torch
    from accelerate import Accelerator
    from diffusers import UNet2DConditionModel
    from omegaconf import OmegaConf


    @dataclass
    class TrainingConfig:
        pretrained_model_name_or_path: str
        enable_xformers_memory_efficient_attention: bool
        attention_backend: str


    def log_validation(pipeline, dataloader, cfg: TrainingConfig, global_step, save_dir):
        images = []
        for i, batch in enumerate(dataloader):
            with torch.autocast("cuda"):
                out = pipeline(batch["imgs_in"], guidance_scale=cfg.guidance_scale).images
            images.append(out)
            if i >= cfg.validation_batches:
                break
        return images


    def main(cfg: TrainingConfig):
        accelerator = Accelerator(gradient_accumulation_steps=cfg.gradient_accumulation_steps,
                                  mixed_precision=cfg.mixed_precision)
        unet = UNet2DConditionModel.from_pretrained(cfg.pretrained_model_name_or_path, subfolder="unet")
        if cfg.enable_xformers_memory_efficient_attention:
            unet.enable_xformers_memory_efficient_attention()
        optimizer = torch.optim.AdamW(unet.parameters(), lr=cfg.learning_rate)
        unet, optimizer = accelerator.prepare(unet, optimizer)
        for step in range(cfg.max_train_steps):
            with accelerator.accumulate(unet):
                loss = unet(torch.randn(1, 4, 32, 32), step, torch.randn(1, 77, 768)).sample.mean()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
        accelerator.wait_for_everyone()
        return unet


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--config", type=str, required=True)
        args, extras = parser.parse_known_args()
        schema = OmegaConf.structured(TrainingConfig)
        main(OmegaConf.merge(schema, OmegaConf.load(args.config)))
    """)


def test_a_launch_whose_config_turns_on_xformers(tmp_path):
    on = "pretrained_model_name_or_path: lambdalabs/sd-image-variations-diffusers\n" \
         "enable_xformers_memory_efficient_attention: true\nattention_backend: sdpa\n"
    off = on.replace("attention: true", "attention: false")
    script = textwrap.dedent("""\
        # stage 1
        accelerate launch --config_file 1gpu.yaml train_image.py --config configs/train/stage1.yaml
        accelerate launch --config_file 1gpu.yaml train_image.py --config=configs/train/stage1_sdpa.yaml
        accelerate launch --config_file 1gpu.yaml train_image.py --config $CONFIG
        python train_image.py --config configs/train/stage1.yaml --enable_xformers_memory_efficient_attention false
        # accelerate launch train_image.py --config configs/train/stage1.yaml
        """)
    got = _tree_findings(tmp_path, {"train_image.py": TRAIN, "run_train.sh": script, "1gpu.yaml": "num_processes: 1\n",
                                    "configs/train/stage1.yaml": on, "configs/train/stage1_sdpa.yaml": off})
    hits = [f for name, f in got if name == "run_train.sh" and f.code == "NPU354"]
    assert [f.line for f in hits] == [2], got
    assert "`enable_xformers_memory_efficient_attention: true` in configs/train/stage1.yaml" in hits[0].message


def test_a_config_setting_compared_with_a_value(tmp_path):
    train = TRAIN.replace("if cfg.enable_xformers_memory_efficient_attention:",
                          'if cfg.model.attention_backend == "xformers":')
    script = "python train_image.py --cfg configs/xformers.yml\npython train_image.py --cfg configs/sdpa.yml\n"
    got = _tree_findings(tmp_path, {"train_image.py": train, "launch.sh": script,
                                    "configs/xformers.yml": "model:\n  attention_backend: xformers\n",
                                    "configs/sdpa.yml": "model:\n  attention_backend: sdpa\n"})
    assert [f.line for name, f in got if name == "launch.sh" and f.code == "NPU354"] == [1], got


DIFFUSION = textwrap.dedent("""\
    import hydra.utils
    import lightning as L
    import torch

    import models


    class Diffusion(L.LightningModule):
        def __init__(self, config, tokenizer):
            super().__init__()
            self.config = config
            self.vocab_size = tokenizer.vocab_size
            if self.config.backbone == 'dit':
                self.backbone = models.dit.DIT(self.config, vocab_size=self.vocab_size)
            elif self.config.backbone == 'mlp':
                self.backbone = models.mlp.MLP(self.config, vocab_size=self.vocab_size)
            else:
                raise ValueError(f'Unknown backbone: {self.config.backbone}')
            self.noise = hydra.utils.instantiate(self.config.noise)

        def forward(self, x, sigma):
            with torch.amp.autocast("cpu", dtype=torch.float32):
                return self.backbone(x, sigma)
    """)
DIT = textwrap.dedent("""\
    import flash_attn
    import flash_attn.layers.rotary
    import torch
    import torch.nn as nn


    class DIT(nn.Module):
        def __init__(self, config, vocab_size):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, config.model.hidden_size)

        def forward(self, qkv, cu_seqlens, seq_len):
            return flash_attn.flash_attn_interface.flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, seq_len, 0.0)
    """)
MLP = textwrap.dedent("""\
    import torch.nn as nn


    class MLP(nn.Module):
        def __init__(self, config, vocab_size):
            super().__init__()
            self.net = nn.Sequential(nn.Embedding(vocab_size, 256), nn.Linear(256, vocab_size))
    """)


def test_a_config_value_that_selects_a_flash_attention_module(tmp_path):
    config = textwrap.dedent("""\
        defaults:
          - _self_
          - /model: small
        mode: train  # train / ppl_eval / sample_eval
        backbone: dit  # dit / mlp
        # backbone: dit
        """)
    script = textwrap.dedent("""\
        #!/bin/bash
        #SBATCH --gres=gpu:4
        srun python -u -m main \\
          data=openwebtext-split \\
          backbone=dit \\
          model.length=1024
        python -u -m main backbone=mlp mode=ppl_eval
        # python -u -m main backbone=dit
        """)
    got = _tree_findings(tmp_path, {"main.py": "import diffusion\n", "diffusion.py": DIFFUSION,
                                    "models/__init__.py": "from . import dit\nfrom . import mlp\n",
                                    "models/dit.py": DIT, "models/mlp.py": MLP,
                                    "configs/config.yaml": config, "scripts/train_owt.sh": script})
    hits = sorted((name, f.line) for name, f in got if f.code == "NPU363")
    assert hits == [("config.yaml", 5), ("train_owt.sh", 5)], got
    message = next(f.message for name, f in got if f.code == "NPU363")
    assert "models/dit.py" in message and "flash_attn" in message


def test_a_launch_leaving_a_default_that_loads_bitsandbytes(tmp_path):
    train = textwrap.dedent("""\
        from dataclasses import dataclass, field
        from typing import Optional

        import torch
        import transformers


        @dataclass
        class ModelArguments:
            model_name_or_path: Optional[str] = field(default="LoftQ/Llama-2-7b-hf-4bit-64rank")
            full_precision: bool = field(default=False)
            token: Optional[str] = field(default=None)


        def load(model_args):
            if model_args.full_precision:
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    model_args.model_name_or_path, torch_dtype=torch.float32, token=model_args.token)
            else:
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    model_args.model_name_or_path,
                    low_cpu_mem_usage=True,
                    token=model_args.token,
                    quantization_config=transformers.BitsAndBytesConfig(
                        load_in_4bit=True,
                        bnb_4bit_quant_type="nf4",
                    ),
                )
            return model


        def main():
            parser = transformers.HfArgumentParser((ModelArguments,))
            (model_args,) = parser.parse_args_into_dataclasses()
            model = load(model_args)
            tokenizer = transformers.AutoTokenizer.from_pretrained(model_args.model_name_or_path)
            trainer = transformers.Trainer(model=model, tokenizer=tokenizer)
            trainer.train()


        if __name__ == "__main__":
            main()
        """)
    script = textwrap.dedent("""\
        # LoftQ: train 4-bit 64-rank llama-2-7b on wikitext-2 using 8 GPU
        python train_clm.py \\
          --model_name_or_path LoftQ/Llama-2-7b-hf-4bit-64rank \\
          --learning_rate 3e-4
        python train_clm.py --model_name_or_path meta-llama/Llama-2-7b-hf --full_precision True
        """)
    got = _tree_findings(tmp_path, {"train_clm.py": train, "scripts/train_wikitext.sh": script})
    hits = [f for name, f in got if name == "train_wikitext.sh" and f.code == "NPU437"]
    assert [f.line for f in hits] == [2], got
    assert hits[0].category == "third_party" and "BitsAndBytesConfig" in hits[0].message


def test_the_command_an_ssh_line_runs_on_the_remote_host(tmp_path):
    script = textwrap.dedent("""\
        #!/bin/bash
        for host in `cat hostfiles`; do
            host_ip=`echo $host | cut -d ' ' -f 1`
            ssh -o StrictHostKeyChecking=no $host_ip "python -c 'import torch; print(torch.randn(100).cuda())'"
            ssh -o StrictHostKeyChecking=no $host_ip "sudo rm -rf /scratch/simo && sudo mkdir -p /scratch/simo"
            ssh -p 2222 -i ~/.ssh/id_rsa worker-1 "export NCCL_IB_DISABLE=1; nvidia-smi"
            # ssh $host_ip "python -c 'import torch; torch.zeros(1).cuda()'"
            ssh $host_ip "echo use torch.cuda() here"
        done
        """)
    got = _tree_findings(tmp_path, {"run_multi.sh": script})
    assert sorted({(f.line, f.code) for _, f in got}) == [(4, "NPU001"), (6, "NPU017"), (6, "NPU121")], got
