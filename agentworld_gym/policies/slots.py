"""Continuous batching for multi-turn rollouts: a fixed number of slots, each running one episode, that
advance together in one forward pass per step. A slot whose turn ends steps its env and, in the next
step, feeds what its dialogue gained (tool results, next prompt); a slot whose episode ends takes the
next queued episode and feeds its first prompt the same way.

Group-at-a-time batching (one `generate` call per turn for a group of episodes) leaves most of the batch
idle: within a call, rows that finished their reply wait for the longest one, and across turns a group
waits for its longest episode. Here no slot waits for another, so the batch stays full while episodes
remain. A step packs every slot's new tokens into one row: one token for each decoding slot, then the
new dialogue tokens of each slot that begins a turn. On a CPU a step reads all the weights whatever it
carries, so 8 decoding rows cost far less than 8 steps of one (on the 2-core CPU of our benchmarks, 1.7x
one row in float32, 1.4x in bfloat16), and a turn's tool results ride along with the other slots'
decoding instead of paying a forward pass of their own.

Each slot's keys and values live at columns 0..length-1 of one preallocated buffer per layer
(`SlotCache`): no padding and no holes, so a token attends exactly to its own dialogue (`slot_attention`
splits the packed row by slot). Prompts all episodes share (the system prompt with the tools) are
encoded once and copied into each slot, and episodes that start from the same prompt (a GRPO group)
encode it once. Attention is over the whole dialogue (decoder-only models with full attention: Llama,
SmolLM2, Qwen2, ...).
"""

from __future__ import annotations

import functools
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from ..errors import ConfigError
from .llm import MIN_SHARED_PREFIX, Episode, HFPolicy, model_messages, shared_prefix_len

SLOT_ATTENTION = "agentworld_slots"  # the name `slot_attention` is registered under with transformers


@dataclass
class Segment:
    """A slot's tokens in one step, fed after the slot's first `start` columns."""

    slot: int
    start: int
    tokens: list[int]


class PackedStep:
    """Where a step's packed row goes: single-token segments first (decoding slots, attended to as one
    batch), then the longer ones (a slot beginning a turn, attended to on its own with a causal mask)."""

    def __init__(self, segments: list[Segment], device):
        import torch

        rows = [g for g in segments if len(g.tokens) == 1]
        chunks = [g for g in segments if len(g.tokens) > 1]
        order = rows + chunks
        self.ids = torch.tensor([[t for g in order for t in g.tokens]], device=device)
        columns = [g.start + i for g in order for i in range(len(g.tokens))]
        self.positions = torch.tensor([columns], device=device)
        self.slot_of = torch.tensor([g.slot for g in order for _ in g.tokens], device=device)
        self.column_of = self.positions[0]
        self.width = max(columns) + 1
        last, n = {}, 0  # slot -> where its last token sits in the row (a slot has one segment a step)
        for g in order:
            n += len(g.tokens)
            last[g.slot] = n - 1
        self.keep = torch.tensor([last[g.slot] for g in segments], device=device)  # logits kept, in `segments` order
        self.rows = len(rows)
        if rows:
            slots = [g.slot for g in rows]
            self.row_slots = slice(0, len(rows)) if slots == list(range(len(rows))) else torch.tensor(slots, device=device)
            row_columns = self.column_of[:len(rows)]
            self.row_width = int(row_columns.max()) + 1
            self.row_mask = (torch.arange(self.row_width, device=device)[None, :] <= row_columns[:, None])[:, None, None, :]
        self.chunks = []  # (slot, first token in the row, tokens, key width, causal mask)
        offset = len(rows)
        for g in chunks:
            k, width = len(g.tokens), g.start + len(g.tokens)
            mask = torch.arange(width, device=device)[None, :] <= torch.arange(g.start, width, device=device)[:, None]
            self.chunks.append((g.slot, offset, k, width, mask[None, None]))
            offset += k


def slot_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, slot_step=None, **kwargs):
    """Attention for a `PackedStep` (transformers' attention-function signature): `query` [1, heads, tokens,
    dim] is the packed row, `key`/`value` the layer's whole slot buffers [slots, kv heads, columns, dim]."""
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    step = slot_step
    heads, dim = query.shape[1], query.shape[3]
    kv_heads = key.shape[1]
    parts = []
    if step.rows:  # each query head attends with the key/value head it shares (query head h: kv head h // group)
        q = query[0, :, :step.rows].transpose(0, 1).reshape(step.rows, kv_heads, heads // kv_heads, dim)
        k = key[step.row_slots, :, :step.row_width]
        v = value[step.row_slots, :, :step.row_width]
        parts.append(sdpa(q, k, v, attn_mask=step.row_mask, scale=scaling).reshape(step.rows, heads, dim))
    for slot, offset, n, width, mask in step.chunks:
        q = query[:, :, offset:offset + n]
        out = sdpa(q, key[slot:slot + 1, :, :width], value[slot:slot + 1, :, :width], attn_mask=mask, scale=scaling,
                   enable_gqa=True)
        parts.append(out[0].transpose(0, 1))
    return torch.cat(parts)[None], None


@functools.cache
def slot_cache_class():
    """`SlotCache`, defined on first use (transformers is an optional extra); registers `slot_attention`."""
    import torch
    from transformers import AttentionInterface
    from transformers.cache_utils import Cache, CacheLayerMixin

    AttentionInterface.register(SLOT_ATTENTION, slot_attention)

    class SlotLayer(CacheLayerMixin):
        is_sliding = False
        is_compileable = False

        def __init__(self, owner):
            super().__init__()
            self.owner = owner

        def lazy_initialization(self, key_states, value_states):
            shape = (self.owner.slots, key_states.shape[1], self.owner.capacity, key_states.shape[3])
            self.keys, self.values = key_states.new_zeros(shape), value_states.new_zeros(shape)
            self.is_initialized = True

        def update(self, key_states, value_states, *args, **kwargs):
            """Write the step's new keys/values at their slots' columns; the whole buffers for `slot_attention`."""
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            if self.keys.shape[2] < self.owner.capacity:
                pad = (0, 0, 0, self.owner.capacity - self.keys.shape[2])
                self.keys, self.values = torch.nn.functional.pad(self.keys, pad), torch.nn.functional.pad(self.values, pad)
            step = self.owner.step
            self.keys[step.slot_of, :, step.column_of] = key_states[0].transpose(0, 1)
            self.values[step.slot_of, :, step.column_of] = value_states[0].transpose(0, 1)
            return self.keys, self.values

        def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
            return self.owner.step.width, 0

        def get_seq_length(self) -> int:
            return self.owner.step.width if self.owner.step else 0

        def get_max_length(self) -> int:
            return -1

    class SlotCache(Cache):
        """A transformers `Cache` whose rows are slots of their own lengths, each held at columns
        0..length-1 of one buffer per layer. Before a forward call, `write` says where the new keys go."""

        def __init__(self, layers: int, slots: int, capacity: int):
            super().__init__(layers=[SlotLayer(self) for _ in range(layers)])
            self.slots, self.capacity, self.step = slots, capacity, None

        def write(self, step: PackedStep) -> None:
            self.step = step
            if step.width > self.capacity:
                self.capacity = max(step.width, 2 * self.capacity)  # layers grow on their next update

        def copy_in(self, slot: int, kv: list) -> None:
            for layer, (k, v) in zip(self.layers, kv, strict=True):
                layer.keys[slot, :, :k.shape[1]] = k
                layer.values[slot, :, :v.shape[1]] = v

        def copy_out(self, slot: int, n: int) -> list:
            return [(layer.keys[slot, :, :n].clone(), layer.values[slot, :, :n].clone()) for layer in self.layers]

        def move(self, src: int, dst: int, n: int) -> None:
            """Slot `src`'s first n columns to slot `dst`."""
            for layer in self.layers:
                layer.keys[dst, :, :n] = layer.keys[src, :, :n]
                layer.values[dst, :, :n] = layer.values[src, :, :n]

    return SlotCache


@dataclass
class SlotEpisode(Episode):
    fed: int = 0  # dialogue tokens whose keys/values the slot holds
    reply: list[int] = field(default_factory=list)  # this turn's tokens so far (the last one not fed yet); [] between turns
    first_prompt: tuple | None = None  # set while the episode waits for another slot to encode the prompt they share
    turn_context: int = 0  # dialogue tokens when this turn began
    turn_seconds: float = 0.0  # this turn's share of the model's time


class SlotRollout:
    """Plays episodes through `slots` slots (see the module docstring) with an `HFPolicy`'s model,
    encoder, reply budget and temperature. `turn_log`, if given, gets one row per episode turn: its
    context and generated tokens and its share of the model's time (a step's time is split evenly among
    the tokens it fed). `on_episode_end`, if given, is called as each episode ends (progress bars)."""

    def __init__(self, policy, slots: int = 8, turn_log: list[dict] | None = None, on_episode_end=None):
        import torch

        if slots < 1:
            raise ConfigError(f"Expected slots >= 1, got {slots}. Use 1 to play episodes one at a time.")
        self.policy, self.model, self.encoder = policy, policy.model, policy.encoder
        self.slots = slots
        self.turn_log = turn_log
        self.on_episode_end = on_episode_end
        self.device = next(self.model.parameters()).device
        self.torch = torch
        self.no_mask = torch.ones(1, 1, 1, 1, dtype=torch.bool, device=self.device)  # 4D: transformers builds no mask

    # -- model calls ----------------------------------------------------------------------------

    def _forward(self, segments: list[Segment]):
        """One forward pass over the segments' tokens; each segment's last-token logits [segments, vocab]."""
        step = PackedStep(segments, self.device)
        self.cache.write(step)
        config = self.model.config
        attention = config._attn_implementation
        config._attn_implementation = SLOT_ATTENTION
        try:
            out = self.model(input_ids=step.ids, position_ids=step.positions, attention_mask=self.no_mask, cache=self.cache,
                             use_cache=True, logits_to_keep=step.keep, slot_step=step)
        finally:
            config._attn_implementation = attention
        return out.logits[0]

    def _pick(self, logits) -> list[int]:
        """Greedy at temperature 0, else a sample from softmax(logits / temperature)."""
        torch = self.torch
        if self.policy.temperature <= 0:
            return logits.argmax(-1).tolist()
        probs = torch.softmax(logits.float() / self.policy.temperature, dim=-1)
        return torch.multinomial(probs, 1)[:, 0].tolist()

    # -- episodes -------------------------------------------------------------------------------

    def run(self, envs: list, seeds: list[int | None] | None = None, options: list[dict | None] | None = None) -> list[dict]:
        """Play one episode in each env; results in the envs' order (see `run_episodes_batched`)."""
        seeds = seeds or [None] * len(envs)
        options = options or [None] * len(envs)
        episodes = []
        for env, seed, opt in zip(envs, seeds, options, strict=True):
            _, info = env.reset(seed=seed, options=opt)
            episodes.append(SlotEpisode(env, self.encoder.start(model_messages(info["messages"], info["tools"])), len(info["messages"])))
        if not episodes:
            return []
        prompts = [e.dialogue.ids for e in episodes]
        room = max(len(p) for p in prompts) + 4 * self.policy.max_new_tokens  # grows when a dialogue outgrows it
        self.cache = slot_cache_class()(self.model.config.num_hidden_layers, min(self.slots, len(episodes)), 64 * (1 + room // 64))
        self.users = Counter(tuple(p) for p in prompts)  # episodes yet to start from each first prompt
        self.first: dict[tuple, tuple] = {}  # first prompt -> (keys/values, logits) while other episodes need it
        self.encoding: set[tuple] = set()  # first prompts a slot encodes in the coming step
        queue = deque(episodes)
        slots: list[SlotEpisode | None] = [None] * self.cache.slots
        with self.torch.no_grad():
            self._share_prefix(prompts)
            for s in range(len(slots)):
                slots[s] = self._start(queue.popleft(), s)
            while slots:
                self._step(slots)
                for s in range(len(slots)):
                    slots[s] = self._settle(slots[s], s, queue)
                self._compact(slots)
        return [e.trajectory() for e in episodes]

    def _step(self, slots: list[SlotEpisode]) -> None:
        """One forward pass: the last token of each decoding slot and the new dialogue tokens of each slot
        beginning a turn; then each slot's next token."""
        served = [(s, e) for s, e in enumerate(slots) if e.first_prompt is None]
        segments = [Segment(s, e.fed, [e.reply[-1]] if e.reply else e.dialogue.ids[e.fed:]) for s, e in served]
        t0 = time.perf_counter()
        logits = self._forward(segments)
        picks = self._pick(logits)
        share = (time.perf_counter() - t0) / sum(len(g.tokens) for g in segments)
        for (s, e), g, token, row in zip(served, segments, picks, logits, strict=True):
            e.fed += len(g.tokens)
            if e.reply:
                e.reply.append(token)
                e.turn_seconds += share
                continue
            e.turn_context, e.reply, e.turn_seconds = e.fed, [token], share * len(g.tokens)
            if self.encoding and (key := tuple(e.dialogue.ids)) in self.encoding:  # a first prompt others start from
                self.encoding.discard(key)
                self.first[key] = (self.cache.copy_out(s, len(key)), row)
        for s, e in enumerate(slots):
            if e.first_prompt is not None:
                kv, row = self.first[e.first_prompt]
                self._copy_first(e, s, kv, row)
        self.first = {k: v for k, v in self.first.items() if self.users[k]}

    def _settle(self, e: SlotEpisode, s: int, queue: deque) -> SlotEpisode | None:
        """While slot `s`'s reply is complete: play it, then go on with the episode (its tool results are
        fed in the next step) or start the next queued one."""
        while e is not None and e.reply and (e.reply[-1] == self.encoder.end_id or len(e.reply) >= self.policy.max_new_tokens):
            if self._finish_turn(e):
                e = self._start(queue.popleft(), s) if queue else None
        return e

    def _compact(self, slots: list) -> None:
        """Once the queue is empty, ended episodes leave holes: move the last running episodes into them
        and drop the empty tail, so a step runs only the slots in use."""
        for s in range(len(slots)):
            while slots and slots[-1] is None:
                slots.pop()
            if s < len(slots) and slots[s] is None:
                last = len(slots) - 1
                self.cache.move(last, s, slots[last].fed)
                slots[s] = slots.pop()

    def _share_prefix(self, prompts: list[list[int]]) -> None:
        """Encode the prefix all first prompts share once (in slot 0, which every start overwrites)."""
        n = shared_prefix_len(prompts) if len(prompts) > 1 else 0
        self.prefix = prompts[0][:n] if n >= MIN_SHARED_PREFIX else []
        if self.prefix:
            self._forward([Segment(0, 0, self.prefix)])
            self.prefix_kv = self.cache.copy_out(0, n)

    def _start(self, e: SlotEpisode, s: int) -> SlotEpisode:
        """Put a new episode in slot `s`: its first prompt's keys/values and first token when an episode
        with the same prompt was encoded already; else the shared prefix, the rest fed in the next step."""
        key = tuple(e.dialogue.ids)
        self.users[key] -= 1
        if key in self.first:
            kv, row = self.first[key]
            self._copy_first(e, s, kv, row)
        elif key in self.encoding:  # another slot encodes it in the coming step
            e.first_prompt = key
        else:
            if self.prefix:
                self.cache.copy_in(s, self.prefix_kv)
            e.fed = len(self.prefix)
            if self.users[key]:
                self.encoding.add(key)
        return e

    def _copy_first(self, e: SlotEpisode, s: int, kv: list, row) -> None:
        self.cache.copy_in(s, kv)
        e.first_prompt = None
        e.fed = e.turn_context = len(e.dialogue.ids)
        e.reply = self._pick(row[None])
        e.turn_seconds = 0.0

    def _finish_turn(self, e: SlotEpisode) -> bool:
        """Play the reply in the env; True when the episode is over."""
        if self.turn_log is not None:
            self.turn_log.append({"turn": e.turns + 1, "episodes": 1, "context_tokens": e.turn_context,
                                  "gen_tokens": len(e.reply), "seconds": e.turn_seconds})
        reply, e.reply = e.reply, []
        over = e.play(reply, self.policy)
        if over and self.on_episode_end is not None:
            self.on_episode_end()
        return over


def run_episodes_batched(envs: list, policy: HFPolicy, seeds: list[int | None] | None = None,
                         options: list[dict | None] | None = None, slots: int | None = None,
                         turn_log: list[dict] | None = None, on_episode_end=None) -> list[dict]:
    """Play one episode in each env, `slots` at a time (default: all at once) with continuous batching
    (`SlotRollout`): the running episodes decode together token by token, a reply that ends is
    played at once, and a slot whose episode ends takes the next waiting one.

    Returns, in the envs' order, run_episode-like dicts (reward, turns, success, ...) plus the token
    trajectory (`ids`, `mask`: 1 on the model's own tokens) and `gen_tokens`. `turn_log`, if given, gets
    one row per episode turn (context and generated tokens, its share of the model's time);
    `on_episode_end`, if given, is called as each episode ends.
    """
    return SlotRollout(policy, slots or max(len(envs), 1), turn_log, on_episode_end).run(envs, seeds, options)
