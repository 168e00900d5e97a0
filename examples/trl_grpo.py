"""GRPO with TRL on AgentWorld tool episodes: python examples/trl_grpo.py [MODEL] (default smollm2-135m)."""
import sys

from trl import GRPOConfig, GRPOTrainer

from agentworld_gym.integrations.trl import grpo_inputs, prepare_tokenizer
from agentworld_gym.policies.llm import load_model

model, tok = load_model(sys.argv[1] if len(sys.argv) > 1 else "smollm2-135m", device="cpu")
args = GRPOConfig(output_dir="runs/trl_grpo", max_steps=2, per_device_train_batch_size=2, num_generations=2,
                  max_completion_length=48, report_to="none", use_cpu=True, save_strategy="no", logging_steps=1)
trainer = GRPOTrainer(model=model, processing_class=prepare_tokenizer(tok), args=args,
                      **grpo_inputs("AgentWorld/finance-v0", n_tasks=4))
trainer.train()
print("steps", trainer.state.global_step, "rewards", [row["reward"] for row in trainer.state.log_history if "reward" in row])
