"""verifiers: evaluate a model behind an OpenAI-compatible URL, vf-eval style (run in the verifiers venv, with deploy/verifiers installed):
python examples/verifiers_eval.py MODEL BASE_URL   (e.g. `transformers serve MODEL` gives http://127.0.0.1:8000/v1)"""
import os
import sys

import verifiers as vf

env = vf.load_environment("agentworld-env", gym_id="AgentWorld/finance-v0", n_tasks=2, max_turns=3)
os.environ.setdefault("OPENAI_API_KEY", "none")  # a local server needs no key
client = vf.ClientConfig(api_base_url=sys.argv[2], api_key_var="OPENAI_API_KEY", max_retries=0)
results = env.evaluate_sync(client=client, model=sys.argv[1], num_examples=2, sampling_args={"max_tokens": 32, "temperature": 0.0})
print("episodes", len(results["outputs"]), "errors", sum(o.get("error") is not None for o in results["outputs"]),
      "rewards", [o["reward"] for o in results["outputs"]])
