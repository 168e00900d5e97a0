"""A tiny random causal LM + tokenizer built from a config in the test (no download, < 1 s)."""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    '{"name": "get_account", "arguments": {"account_id": "AC-1001"}}',
    '{"name": "submit", "arguments": {"answer": "42"}}',
    "Find the customer whose email is someone@example.org. What is the tier? standard gold platinum",
    "You are an assistant that solves the user's task with tools. Tools: customer_id: string, number, integer",
    "system user assistant tool 0123456789 CU-1001 AC-1001 TX-1001 CD-1001",
]


def build_tiny_model(path: Path) -> Path:
    """Byte-level BPE tokenizer (ChatML specials) + a 2-layer Llama with hidden size 32, saved to `path`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from agentworld_gym.policies.llm import CHATML

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    raw.train_from_iterator(CORPUS * 4, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  bos_token="<|im_start|>", unk_token="<|endoftext|>")
    tok.chat_template = CHATML
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                         tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
