"""tq56b (precision bench, session 56; TUNED on heldout74): a folder README the root README sends the reader to in
words, under GitHub's lower-case `readme.md`, whose commands run the folder's shell scripts (VL-Adapter's "Please go
into CLIP-ViL folder and follow the README there", whose `bash scripts/gqa_adapters.sh` launches `src/tasks/gqa.py`),
... Trees modelled on the projects' files, each with a positive and a quiet control."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at
from tests.test_tq55c import CAPTION_INFERENCE, caption_tree

ROOT_README_WORDS = '''
    # VL-Adapter

    Please go into captioning folder and follow the README there for running the captioning experiments.
    This README is for the adapters on VL-BART.
'''

ROOT_README_NO_README = '''
    # VL-Adapter

    The captioning model is in the captioning folder.
'''

CAPTION_README_SCRIPTS = '''
    # Captioning adapters

    ## Training
    ```bash
    # Full fine-tuning
    bash scripts/caption_adapters.sh 0 snap/caption/adapters 9590 1
    ```
'''

CAPTION_SCRIPT = '''
    # The name of this experiment.
    name=$2
    output=$name
    mkdir -p $output/src

    CUDA_VISIBLE_DEVICES=$1 PYTHONPATH=$PYTHONPATH:./src \\
        python -m torch.distributed.launch --master_port=$3 --nproc_per_node=$4 inference.py \\
        --arch video_llama --output $output ${@:5}
'''

OTHER_SCRIPT = '''
    CUDA_VISIBLE_DEVICES=$1 python evaluate.py --output $2
'''


def _caption_tree(readme: str, script: str = CAPTION_SCRIPT) -> dict[str, str]:
    """tq55c's captioning tree, its folder README under GitHub's lower-case name and running a shell script."""
    tree = caption_tree(readme)
    del tree["captioning/README.md"]
    return {**tree, "captioning/readme.md": CAPTION_README_SCRIPTS, "captioning/scripts/caption_adapters.sh": script}


def test_program_a_named_folder_readme_script_launches_is_reached(tmp_path):
    found = dedented_tree(tmp_path, _caption_tree(ROOT_README_WORDS))
    assert severity_at(found, "captioning/inference.py", CAPTION_INFERENCE, '.to("cuda")').get("NPU003") == "error"


def test_folder_named_without_its_readme_stays_unreached(tmp_path):
    found = dedented_tree(tmp_path, _caption_tree(ROOT_README_NO_README))
    assert severity_at(found, "captioning/inference.py", CAPTION_INFERENCE, '.to("cuda")').get("NPU003") == "info"


def test_program_the_readme_script_does_not_launch_stays_unreached(tmp_path):
    found = dedented_tree(tmp_path, _caption_tree(ROOT_README_WORDS, OTHER_SCRIPT))
    assert severity_at(found, "captioning/inference.py", CAPTION_INFERENCE, '.to("cuda")').get("NPU003") == "info"


IRM_UPDATE = '''
    import torch
    import torch.nn.functional as F


    class IRM:
        def update(self, minibatches, unlabeled=None):
            device = "cuda" if minibatches[0][0].is_cuda else "cpu"
            all_x = torch.cat([x for x, y in minibatches])
            all_y = torch.cat([y for x, y in minibatches])
            loss = F.mse_loss(self.network(all_x), all_y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            return {"loss": loss.item()}
'''

IRM_PREDICT = '''
    import torch


    class IRM:
        def predict(self, minibatches):
            device = "cuda" if minibatches[0][0].is_cuda else "cpu"
            all_x = torch.cat([x for x, y in minibatches]).to(device)
            return self.network(all_x)
'''


def test_unread_device_choice_asking_is_cuda_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"domainbed/algorithms.py": IRM_UPDATE})
    assert severity_at(found, "domainbed/algorithms.py", IRM_UPDATE, "is_cuda").get("NPU005") == "info"


def test_device_choice_the_function_uses_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, {"domainbed/algorithms.py": IRM_PREDICT})
    assert severity_at(found, "domainbed/algorithms.py", IRM_PREDICT, "is_cuda").get("NPU005") == "error"


SCGPT_CONFIG = '''
    import torch
    from transformers import PretrainedConfig


    class ScGPTConfig(PretrainedConfig):
        model_type = "scgpt"

        def __init__(self, vocab_size=60697, embsize=512, nlayers=12, use_fast_transformer=True,
                     use_flash_attention=True, **kwargs):
            self.vocab_size = vocab_size
            self.embsize = embsize
            self.nlayers = nlayers
            self.use_fast_transformer = use_fast_transformer
            self.use_flash_attention = self.use_fast_transformer and torch.cuda.is_available(
            ) and use_flash_attention
            super().__init__(**kwargs)
'''

SCGPT_CONFIG_UNGATED = SCGPT_CONFIG.replace("""self.use_fast_transformer and torch.cuda.is_available(
            ) and use_flash_attention""", "self.use_fast_transformer and use_flash_attention")


def test_flash_switch_anded_with_cuda_probe_goes(tmp_path):
    found = dedented_tree(tmp_path, {"tdc/models/scgpt.py": SCGPT_CONFIG})
    assert "NPU357" not in severity_at(found, "tdc/models/scgpt.py", SCGPT_CONFIG, "use_flash_attention=True")


def test_flash_switch_read_without_the_probe_keeps_its_warning(tmp_path):
    found = dedented_tree(tmp_path, {"tdc/models/scgpt.py": SCGPT_CONFIG_UNGATED})
    assert severity_at(found, "tdc/models/scgpt.py", SCGPT_CONFIG_UNGATED,
                       "use_flash_attention=True").get("NPU357") == "warning"


MOLDQN_ENV = '''
    name: mol_dqn
    channels:
      - rdkit
      - defaults
    dependencies:
      - python=3.6.8=h0371630_0
      - rdkit=2019.03.1.0=py36hc20afe1_1
      - tensorflow-gpu=1.13.1=h0d30ee6_0
      - numpy=1.16.3=py36h7e9f1db_0
'''

MOLDQN_NETWORK = '''
    import numpy as np
    import tensorflow as tf


    class DeepQNetwork:
        def __init__(self, input_shape, q_fn, learning_rate=0.001):
            self.input_shape = input_shape
            self.q_fn = q_fn
            self.learning_rate = learning_rate

        def build(self):
            self.state_t = tf.placeholder(tf.float32, self.input_shape, name="obs")
            self.q_t = self.q_fn(self.state_t)
            return np.zeros(1)
'''

TORCH_TRAIN = '''
    import torch


    def train(model, batch):
        return model(batch.to("cuda")).sum()
'''

ROOT_MODEL = '''
    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            return x * 2
'''


def test_environment_of_a_tensorflow_example_whose_code_sits_below_is_info(tmp_path):
    files = {"tdc/model.py": ROOT_MODEL, "moldqn/mol_dqn.yml": MOLDQN_ENV,
             "moldqn/chemgraph/dqn/deep_q_networks.py": MOLDQN_NETWORK, "moldqn/chemgraph/dqn/__init__.py": ""}
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "moldqn/mol_dqn.yml", MOLDQN_ENV, "tensorflow-gpu").get("NPU440") == "info"


def test_environment_of_a_folder_with_pytorch_code_below_keeps_its_error(tmp_path):
    files = {"tdc/model.py": ROOT_MODEL, "moldqn/mol_dqn.yml": MOLDQN_ENV,
             "moldqn/chemgraph/dqn/deep_q_networks.py": MOLDQN_NETWORK, "moldqn/chemgraph/dqn/__init__.py": "",
             "moldqn/experimental/train.py": TORCH_TRAIN}
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "moldqn/mol_dqn.yml", MOLDQN_ENV, "tensorflow-gpu").get("NPU440") == "error"


PPO_GENERATOR = '''
    from pathlib import Path

    import torch


    class PPODirectedGenerator:
        def generate_optimized_molecules(self, scoring_function, number_molecules):
            cuda_available = torch.cuda.is_available()
            device = "cuda" if cuda_available else "cpu"
            model_def = Path(self.pretrained_model_path).with_suffix(".json")
            model = load_rnn_model(model_def, self.pretrained_model_path, device, copy_to_cpu=True)
            return model.sample(number_molecules)
'''

PPO_GENERATOR_HELPER = '''
    from pathlib import Path

    from guacamol.utils.helpers import cuda_available


    class PPODirectedGenerator:
        def generate_optimized_molecules(self, scoring_function, number_molecules):
            device = "cuda" if cuda_available else "cpu"
            model_def = Path(self.pretrained_model_path).with_suffix(".json")
            model = load_rnn_model(model_def, self.pretrained_model_path, device, copy_to_cpu=True)
            return model.sample(number_molecules)
'''


def test_flag_holding_the_probe_answer_is_no_capability_helper(tmp_path):
    found = dedented_tree(tmp_path, {"smiles_lstm_ppo/ppo_directed_generator.py": PPO_GENERATOR})
    at = severity_at(found, "smiles_lstm_ppo/ppo_directed_generator.py", PPO_GENERATOR, 'if cuda_available else')
    assert "NPU030" not in at
    assert severity_at(found, "smiles_lstm_ppo/ppo_directed_generator.py", PPO_GENERATOR,
                       "torch.cuda.is_available()").get("NPU002") == "error"


def test_imported_capability_flag_keeps_its_finding(tmp_path):
    found = dedented_tree(tmp_path, {"smiles_lstm_ppo/ppo_directed_generator.py": PPO_GENERATOR_HELPER})
    at = severity_at(found, "smiles_lstm_ppo/ppo_directed_generator.py", PPO_GENERATOR_HELPER,
                     'if cuda_available else')
    assert "NPU030" in at


NLVR_DATASET = '''
    import torch
    from torch.utils.data import Dataset


    class NLVRFineTuneDataset(Dataset):
        def __init__(self, split="train", raw_dataset=None, rank=-1, topk=-1, verbose=True, args=None):
            super().__init__()
            self.raw_dataset = raw_dataset
            self.topk = topk
            self.verbose = verbose
            self.args = args
            data = self.raw_dataset.data
            if self.topk > 0:
                data = data[:int(self.topk)]
            self.n_gpus = torch.cuda.device_count()
            self.rank = rank
            self.data = data

        def __len__(self):
            return len(self.data)

        def __getitem__(self, idx):
            return self.data[idx]
'''

NLVR_TRAINER = '''
    from nlvr_data import NLVRFineTuneDataset


    def get_loader(args, split="train", rank=-1, topk=-1):
        dataset = NLVRFineTuneDataset(split, rank=rank, topk=topk, args=args)
        return dataset
'''

NLVR_TRAINER_READS = '''
    from nlvr_data import NLVRFineTuneDataset


    def get_loader(args, split="train", rank=-1, topk=-1):
        dataset = NLVRFineTuneDataset(split, rank=rank, topk=topk, args=args)
        batch_size = args.batch_size // max(dataset.n_gpus, 1)
        return dataset, batch_size
'''


def test_device_count_stored_in_an_attribute_nothing_reads_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"src/nlvr_data.py": NLVR_DATASET, "src/nlvr.py": NLVR_TRAINER})
    assert severity_at(found, "src/nlvr_data.py", NLVR_DATASET, "device_count").get("NPU002") == "info"


def test_device_count_attribute_another_file_reads_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, {"src/nlvr_data.py": NLVR_DATASET, "src/nlvr.py": NLVR_TRAINER_READS})
    assert severity_at(found, "src/nlvr_data.py", NLVR_DATASET, "device_count").get("NPU002") == "error"
