"""GRPO with TRL on AgentWorld tool episodes, after a cold-start SFT: python examples/trl_grpo.py [MODEL] [STEPS]."""
import sys

from trl import GRPOConfig

from agentworld_gym.integrations.trl import AgentWorldGRPOTrainer, cold_start, grpo_inputs, prepare_tokenizer
from agentworld_gym.policies.llm import load_model

model, tok = load_model(sys.argv[1] if len(sys.argv) > 1 else "smollm2-135m", device="cpu")
tok = prepare_tokenizer(tok)
cold_start(model, tok, "AgentWorld/finance-v0", n_episodes=4, epochs=1, output_dir="runs/trl_sft")  # its first calls
args = GRPOConfig(output_dir="runs/trl_grpo", max_steps=int(sys.argv[2]) if len(sys.argv) > 2 else 2, per_device_train_batch_size=4,
                  num_generations=4, max_completion_length=384, beta=0.0, max_tool_calling_iterations=6, report_to="none",
                  use_cpu=True, save_strategy="no", logging_steps=1)
trainer = AgentWorldGRPOTrainer(model=model, processing_class=tok, args=args, **grpo_inputs("AgentWorld/finance-v0", n_tasks=4, max_turns=6))
trainer.train()
print("steps", trainer.state.global_step, "rewards", [row["reward"] for row in trainer.state.log_history if "reward" in row])
