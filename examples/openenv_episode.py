"""OpenEnv: evaluate a model on one episode served over OpenEnv's API: python examples/openenv_episode.py [MODEL]."""
import sys

from agentworld_gym.integrations.openenv import AgentWorldAction, AgentWorldClient, serve_in_background
from agentworld_gym.policies.llm import HFPolicy

server = serve_in_background("AgentWorld/finance-v0", port=8011, max_turns=3)
policy = HFPolicy(sys.argv[1] if len(sys.argv) > 1 else "smollm2-135m", device="cpu", max_new_tokens=48)
with AgentWorldClient(base_url="http://127.0.0.1:8011").sync() as env:
    result = env.reset(seed=0)
    while not result.done:
        result = env.step(AgentWorldAction(text=policy.act(result.observation.text, result.observation.model_dump())))
print("turns", result.observation.turn, "reward", result.reward)
