"""Precision fixes of tq54a (session 54, tuned on heldout70 trees 1, 2, 4, 5, 6): host reads on branches taken once
every N epochs (auditor/static/host_scopes.py), ... Each family has a positive case and a control that keeps its
finding. Code written afresh in the shape of those trees."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line

WORKSPACE = '''\
import torch
import tqdm


class TrainDiffusionWorkspace:
    def run(self, cfg, policy, train_dataloader, optimizer):
        device = torch.device(cfg.training.device)
        train_sampling_batch = None
        step_log = dict()
        for local_epoch_idx in range(cfg.training.num_epochs):
            train_losses = list()
            with tqdm.tqdm(train_dataloader, desc=f"Training epoch {self.epoch}") as tepoch:
                for batch_idx, batch in enumerate(tepoch):
                    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                    if train_sampling_batch is None:
                        train_sampling_batch = batch
                    loss = policy.compute_loss(batch)
                    loss.backward()
                    optimizer.step()
                    train_losses.append(loss.detach())

            # run diffusion sampling on a training batch
            if (self.epoch % cfg.training.sample_every) == 0:
                with torch.no_grad():
                    result = policy.predict_action(train_sampling_batch["obs"])
                    mse = torch.nn.functional.mse_loss(result["action_pred"], train_sampling_batch["action"])
                    step_log["train_action_mse_error"] = mse.item()
                    del result
            self.global_step += 1
            self.epoch += 1
'''


def _codes(tmp_path, src: str, needle: str) -> set[str]:
    codes = run_values_by_line(tmp_path, {"diffusion_policy/workspace/train_workspace.py": src},
                               "diffusion_policy/workspace/train_workspace.py", "code")
    return codes.get(line_of(src, needle), set())


def test_host_read_on_a_branch_taken_every_n_epochs_is_dropped(tmp_path):
    assert "NPU703" not in _codes(tmp_path, WORKSPACE, 'step_log["train_action_mse_error"] = mse.item()')


def test_host_read_on_an_every_n_epochs_test_inside_the_batch_loop_stays(tmp_path):
    """Control: inside the batch loop the test is true on every batch of such an epoch."""
    src = WORKSPACE.replace("                    train_losses.append(loss.detach())\n",
                            "                    train_losses.append(loss.detach())\n"
                            "                    if (self.epoch % cfg.training.sample_every) == 0:\n"
                            "                        step_log['batch_loss'] = loss.item()\n")
    assert "NPU703" in _codes(tmp_path, src, "step_log['batch_loss'] = loss.item()")


def test_host_read_on_a_branch_of_a_step_counter_stays(tmp_path):
    """Control: `self.global_step % N` in the epoch loop is no epoch counter (a plain assignment, not logging)."""
    src = WORKSPACE.replace("if (self.epoch % cfg.training.sample_every) == 0:",
                            "if (self.global_step % cfg.training.sample_every) == 0:")
    assert "NPU703" in _codes(tmp_path, src, 'step_log["train_action_mse_error"] = mse.item()')
