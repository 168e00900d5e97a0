"""KV-cache reuse across the turns of batched rollouts: the same tokens as encoding every transcript afresh."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentworld_gym.envs import get_theme  # noqa: E402

from agentworld_gym.env import AgentWorldEnv  # noqa: E402
from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.policies.llm import (  # noqa: E402
    CachedGenerator,
    ChatEncoder,
    HFPolicy,
    generate_batch,
    load_model,
    model_messages,
    run_episodes_batched,
)
from agentworld_gym.synthesis import synthesize_task  # noqa: E402

MAX_NEW = 10


@pytest.fixture(scope="module")
def tasks():
    theme = get_theme("finance")
    return [synthesize_task(theme, 1 + i % 2, i) for i in range(12)]


@pytest.fixture(scope="module")
def lively(tiny, tasks):
    """The tiny model with larger random weights, so greedy replies depend on the context (the stock tiny
    model repeats one token), and with the end token's output row swapped with that of the token its
    replies to the tasks most often contain after their first token: replies end at different steps.
    Replies starting with '[' are parse errors, so those episodes go on to further turns."""
    model, tok = load_model(tiny, "cpu")
    enc = ChatEncoder(tok)
    torch.manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.3)
        env = AgentWorldEnv("finance")
        prompts = []
        for t in tasks:
            _, info = env.reset(options={"task": t})
            prompts.append(enc.start(model_messages(info["messages"], info["tools"])).ids)
        later = [token for reply in generate_batch(model, enc, prompts, MAX_NEW) for token in reply[1:]]
        common = max(set(later), key=later.count)
        head = model.model.embed_tokens.weight.clone()
        head[[enc.end_id, common]] = head[[common, enc.end_id]]
        model.lm_head.weight = torch.nn.Parameter(head)  # untied: the input embeddings stay as they were
    return model.eval(), tok


def test_cached_turns_equal_fresh_encoding(lively, tasks):
    """Rows grow by their reply and uneven 'tool results', some end early, some leave the batch: every turn
    the cached generator gives exactly what re-encoding all transcripts gives."""
    model, tok = lively
    enc = ChatEncoder(tok)
    rng = random.Random(0)
    env = AgentWorldEnv("finance")
    seqs = []
    for t in tasks:
        _, info = env.reset(options={"task": t})
        seqs.append(enc.start(model_messages(info["messages"], info["tools"])).ids)
    gen = CachedGenerator(model, enc, MAX_NEW)
    alive = list(range(len(seqs)))
    lengths = set()
    for turn in range(4):
        outs = gen.generate([seqs[i] for i in alive])
        assert outs == generate_batch(model, enc, [seqs[i] for i in alive], MAX_NEW), f"turn {turn}"
        for i, out in zip(alive, outs, strict=True):
            lengths.add((len(out), out[-1] == enc.end_id))
            seqs[i] += out + ([] if out[-1] == enc.end_id else [enc.end_id])
            seqs[i] += [rng.randrange(3, 390) for _ in range(rng.randint(1, 30))]  # a tool result + next prompt
        dropped = alive[turn % len(alive)]
        gen.keep([k for k, i in enumerate(alive) if i != dropped])
        alive.remove(dropped)
    assert any(ended and n < MAX_NEW for n, ended in lengths) and (MAX_NEW, False) in lengths  # both kinds of reply
    alone = [generate_batch(model, enc, [seqs[i]], MAX_NEW)[0] for i in alive]
    assert gen.generate([seqs[i] for i in alive]) == alone


def test_batched_episodes_reusing_the_cache_match_re_encoding(lively, tasks):
    """Whole episodes (greedy, different turn budgets so episodes leave the batch at different turns): same
    token trajectories and masks with and without cache reuse."""
    model, tok = lively
    policy = HFPolicy(model, tok, max_new_tokens=MAX_NEW, temperature=0.0)

    def play(reuse: bool, log: list) -> list[dict]:
        envs = [AgentWorldEnv("finance", tasks=[t], max_turns=2 + i % 3) for i, t in enumerate(tasks)]
        return run_episodes_batched(envs, policy, options=[{"task": t} for t in tasks], reuse_cache=reuse, turn_log=log)

    log: list[dict] = []
    fresh, reused = play(False, []), play(True, log)
    assert [(r["ids"], r["mask"], r["reward"], r["turns"]) for r in reused] == [(r["ids"], r["mask"], r["reward"], r["turns"]) for r in fresh]
    assert [row["episodes"] for row in log] == sorted((row["episodes"] for row in log), reverse=True)
    assert sum(row["gen_tokens"] for row in log) == sum(r["gen_tokens"] for r in reused)


def test_cached_generator_rejects_misuse(lively):
    model, tok = lively
    gen = CachedGenerator(model, ChatEncoder(tok), 3)
    seqs = [[5, 6, 7], [8, 9]]
    outs = gen.generate(seqs)
    with pytest.raises(ConfigError, match="Expected 2 sequences"):
        gen.generate([seqs[0] + outs[0] + [10]])
    with pytest.raises(ConfigError, match="grown"):
        gen.generate([seqs[0][:1], seqs[1] + outs[1] + [10]])
