"""A tiny causal LM made from scratch, for tests, examples and benchmarks (nothing downloaded).

`make_toy_model(folder, words)` writes a Hugging Face model folder: a randomly initialized
`LlamaForCausalLM` (2 layers, hidden 64 by default) and a word-level tokenizer over ``words``
plus the chat-template markers, with a Jinja chat template that renders tools. A small
vocabulary makes a random policy's chance of saying the right word large enough for RL to learn
from on a CPU in minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL = ["<|end|>", "<|user|>", "<|assistant|>", "<|system|>", "<|tool|>", "<|pad|>", "[UNK]"]
DEFAULT_WORDS = ["say", "the", "word", "answer", "is", "yes", "no", "ok", "red", "green", "blue", "black",
                 "white", "cat", "dog", "sun", "moon", "tree", "call", "tool", ":", ",", ".", "?", "{", "}"]
# The chat template: every turn is "<|role|> content <|end|>"; tools are listed in a system turn
# (names and parameter names), and assistant tool calls come back as <tool_call>JSON</tool_call>.
CHAT_TEMPLATE = (
    "{% if tools %}<|system|> tools :{% for t in tools %} {{ t['function']['name'] }}{% endfor %} <|end|>{% endif %}"
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] if m['content'] is string else '' }}"
    "{% if m.get('tool_calls') %}{% for c in m['tool_calls'] %} <tool_call>{{ c['function']['name'] }}</tool_call>"
    "{% endfor %}{% endif %} <|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def make_tokenizer(folder: str | Path, words: list[str] | None = None) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {}
    for token in SPECIAL + list(dict.fromkeys(words or DEFAULT_WORDS)):
        vocab.setdefault(token, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>",
                                   unk_token="[UNK]", additional_special_tokens=SPECIAL[1:5])
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    # Name the generic class, so AutoTokenizer loads this word-level tokenizer as it is. (For
    # some model types, Qwen2 among them, transformers 5 ignores the name and rebuilds a BPE
    # tokenizer around the vocabulary, which is why the toy model is a Llama.)
    config_path = Path(folder) / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_class"] = "PreTrainedTokenizerFast"
    config_path.write_text(json.dumps(config, indent=2))
    return Path(folder)


def make_toy_model(folder: str | Path, words: list[str] | None = None, *, hidden_size: int = 64, layers: int = 2,
                   heads: int = 4, seed: int = 0) -> Path:
    """Write a tokenizer and a randomly initialized Qwen2 causal LM to ``folder``; returns it."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    make_tokenizer(folder, words)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=hidden_size * 2,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=512, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder, safe_serialization=True)
    return folder
