"""KV-cache reuse across the turns of batched rollouts: the same tokens as encoding every transcript afresh."""

from __future__ import annotations

import json
import random

import gymnasium
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
    run_episodes_grouped,
)
from agentworld_gym.policies.slots import SlotRollout, run_episodes_batched  # noqa: E402
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
        return run_episodes_grouped(envs, policy, options=[{"task": t} for t in tasks], reuse_cache=reuse, turn_log=log)

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


# --------------------------------------------------------------------------------------------
# Continuous batching (slots refilled at the token level)


class RepliesAsLookups(gymnasium.ActionWrapper):
    """Turns every reply into an account lookup by that text: the tiny model's replies become tool calls
    whose results (an error naming the text) differ in length, so episodes run until their turn budget."""

    def action(self, text):
        return json.dumps({"name": "get_account", "arguments": {"account_id": text[:40]}})


def _play(policy, tasks, play, log=None, turns=lambda i: 2 + i % 3):
    envs = [RepliesAsLookups(AgentWorldEnv("finance", tasks=[t], max_turns=turns(i))) for i, t in enumerate(tasks)]
    return play(envs, policy, [{"task": t} for t in tasks], log)


def _groups_of(size):
    def play(envs, policy, options, log):
        out = []
        for lo in range(0, len(envs), size):
            out += run_episodes_grouped(envs[lo:lo + size], policy, options=options[lo:lo + size], turn_log=log)
        return out
    return play


def _slots(n):
    return lambda envs, policy, options, log: run_episodes_batched(envs, policy, options=options, slots=n, turn_log=log)


def _trajectories(results):
    return [(r["ids"], r["mask"], r["reward"], r["turns"], r["success"]) for r in results]


@pytest.mark.parametrize("slots", [1, 3, 8])
def test_slots_play_the_same_episodes_as_groups(lively, tasks, slots):
    """Greedy: 12 episodes of 2-4 turns through 1, 3 or 8 slots (refilled as episodes end) give the token
    trajectories, masks and rewards of the group-at-a-time rollout, and the turn log adds up."""
    model, tok = lively
    policy = HFPolicy(model, tok, max_new_tokens=MAX_NEW, temperature=0.0)
    log: list[dict] = []
    steps = []  # each forward pass's PackedStep
    hook = model.register_forward_hook(lambda mod, args, kwargs, out: steps.append(kwargs["slot_step"]), with_kwargs=True)
    try:
        got = _play(policy, tasks, _slots(slots), log)
    finally:
        hook.remove()
    assert _trajectories(got) == _trajectories(_play(policy, tasks, _groups_of(4)))
    assert sum(row["gen_tokens"] for row in log) == sum(r["gen_tokens"] for r in got)
    assert len(log) == sum(r["turns"] for r in got) and max(r["turns"] for r in got) > 1
    # with several slots, a turn's tool results ride in the same forward pass as other slots' decoding
    assert any(step.rows and step.chunks for step in steps) == (slots > 1)


def test_slots_share_a_repeated_first_prompt(lively, tasks):
    """A GRPO-like group (each task 4 times): the repeated first prompt is encoded once per task and the
    episodes equal those played alone; with replies cut at one token every turn ends at its first pick."""
    model, tok = lively
    policy = HFPolicy(model, tok, max_new_tokens=MAX_NEW, temperature=0.0)
    group = [t for t in tasks[:3] for _ in range(4)]
    calls = []  # the positions each forward pass fed
    hook = model.register_forward_hook(lambda mod, args, kwargs, out: calls.append(kwargs["position_ids"][0].tolist()), with_kwargs=True)
    try:
        got = _play(policy, group, _slots(5), turns=lambda i: 3)
    finally:
        hook.remove()
    fed = [p for positions in calls for p in positions]
    prefix_end = len(calls[0])
    assert calls[0] == list(range(prefix_end)) and fed.count(0) == 1  # the prefix all prompts share, encoded once
    assert fed.count(prefix_end) == 3  # then each task's own part once, though each task starts 4 episodes
    alone = _play(policy, tasks[:3], _groups_of(1), turns=lambda i: 3)
    assert _trajectories(got) == [x for x in _trajectories(alone) for _ in range(4)]
    short = HFPolicy(model, tok, max_new_tokens=1, temperature=0.0)
    assert _trajectories(_play(short, tasks, _slots(4))) == _trajectories(_play(short, tasks, _groups_of(12)))


def test_slots_sample_reproducibly(lively, tasks):
    """At temperature 1 the slots sample: the same torch seed gives the same episodes, another seed others."""
    model, tok = lively
    policy = HFPolicy(model, tok, max_new_tokens=MAX_NEW, temperature=1.0)

    def sample(seed):
        torch.manual_seed(seed)
        return _trajectories(_play(policy, tasks, _slots(4)))

    first = sample(0)
    assert first == sample(0) and first != sample(1)
    assert all(0 <= t < model.config.vocab_size for ids, *_ in first for t in ids)


def test_slots_report_each_ended_episode(lively, tasks):
    """`on_episode_end` (the bench's progress bar) fires once per episode, as each ends."""
    model, tok = lively
    policy = HFPolicy(model, tok, max_new_tokens=MAX_NEW, temperature=0.0)
    ended = []
    envs = [RepliesAsLookups(AgentWorldEnv("finance", tasks=[t], max_turns=2 + i % 3)) for i, t in enumerate(tasks)]
    turns_log: list[dict] = []
    results = run_episodes_batched(envs, policy, options=[{"task": t} for t in tasks], slots=3, turn_log=turns_log,
                                   on_episode_end=lambda: ended.append(len(turns_log)))
    assert len(ended) == len(results) == len(tasks)
    assert ended[0] < ended[-1] == len(turns_log)  # each call came as its episode ended, not all at the end


def test_slots_reject_zero(lively):
    model, tok = lively
    with pytest.raises(ConfigError, match="slots >= 1"):
        SlotRollout(HFPolicy(model, tok), 0)
