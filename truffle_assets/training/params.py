"""LoRA hyperparameters, kept apart from the trainer so the Dagster config can extend them
without importing the trainer (and its environment settings) when the definitions load."""

from pydantic import BaseModel, ConfigDict


class LoraParams(BaseModel):
    """The LoRA and optimizer settings of one run, and the one place their defaults live.

    The Dagster `LoraConfig` extends this model, so `truffle train` and direct `train()` callers
    start from the same values.
    """

    model_config = ConfigDict(frozen=True)

    rank: int = 16
    alpha: int = 32
    dropout: float = 0.0
    learning_rate: float = 2e-4
    epochs: float = 1.0
    max_steps: int = -1  # > 0 caps the run (demo and benchmark); -1 trains the full epochs
    seq_len: int = 2048  # the runtime's embedded prompt (~1.7K tokens) and its answer fit whole
    batch_size: int = 1
    grad_accum: int = 1
    target_modules: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    dpo: bool = False
    dpo_beta: float = 0.1
    dpo_max_steps: int = -1
    dpo_learning_rate: float | None = None  # None = learning_rate; DPO usually wants a smaller step than SFT
    dpo_kinds: list[str] = []  # only these pack kinds' pairs (e.g. the refusal families); empty = every pair
    # > 0 adds that weight of NLL on the chosen answers to the DPO loss (RPO): DPO alone can lower
    # both answers' likelihood, and what the SFT taught goes with them
    dpo_sft_weight: float = 0.0
    dpo_seed: int | None = None  # None = seed; a DPO stage (`dpo_from`) needs its own to draw its pairs in a new order
    seed: int = 0
    # activation checkpointing saves memory for long sequences on a GPU; on a CPU with RAM to spare
    # it only costs a second forward pass per step (TRL would turn it on by default)
    gradient_checkpointing: bool = False
