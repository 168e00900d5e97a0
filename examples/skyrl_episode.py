"""SkyRL-gym: evaluate a model on one AgentWorld episode via skyrl_gym.make: python examples/skyrl_episode.py [MODEL]."""
import sys

import skyrl_gym

from agentworld_gym.integrations.skyrl import skyrl_dataset
from agentworld_gym.policies.llm import load_model

model, tok = load_model(sys.argv[1] if len(sys.argv) > 1 else "smollm2-135m", device="cpu")
row = skyrl_dataset("AgentWorld/finance-v0", 1, max_turns=3)[0]
env = skyrl_gym.make(row["env_class"], extras=row)
chat, out = env.init(row["prompt"])[0], {"done": False}
while not out["done"]:
    ids = tok.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    reply = tok.decode(model.generate(**ids, max_new_tokens=48, do_sample=False)[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
    out = env.step(reply)
    chat += [{"role": "assistant", "content": reply}, *out["observations"]]
print("turns", env.turns, "reward", out["reward"])
