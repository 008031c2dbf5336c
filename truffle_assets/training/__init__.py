"""Fine-tuning harness logic (no dagster import): chat template, datasets, trainer, GGUF export."""
