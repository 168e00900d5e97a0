"""MaskablePPO (sb3-contrib) on the candidate-action adapter: only real candidates are ever sampled.
python examples/maskable_ppo.py [STEPS]   (pip install 'agentworld-gym[rl]' sb3-contrib)"""
import sys

import numpy as np
from agentworld_gym.wrappers import make_sb3_env
from sb3_contrib import MaskablePPO

env = make_sb3_env("AgentWorld/finance-v0", difficulty=1, max_turns=4)
model = MaskablePPO("MlpPolicy", env, learning_rate=2.5e-3, n_steps=64, batch_size=64, gamma=0.95, seed=0, verbose=0)
model.learn(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
wins, invalid = 0, 0
for seed in range(1_000_000, 1_000_030):  # held-out task seeds
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        masks = env.get_wrapper_attr("action_masks")()
        action = int(model.predict(obs, action_masks=masks, deterministic=True)[0])
        invalid += not masks[action]
        obs, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    wins += reward >= 1.0
print(f"success {wins}/30 = {wins / 30:.2f}; invalid picks {invalid}; masks {np.mean(masks):.2f} of slots filled")
