"""Token tables of the exported vocabulary: the MiniCPM-o special tokens, and which tokens are CONTROL.

The 12 protocol tokens are the runtime's (edge/protocol/tokens.py, docs/protocol.md).
Every entry of CONTROL_TOKENS must be a single vocabulary id typed CONTROL in
the GGUF, so that text coming from a tool or a user can never open or close a span.
"""
from edge.protocol.tokens import PROTOCOL_TOKENS

# Special tokens of the Qwen3 base vocabulary and of MiniCPM-o (chat roles, TTS, audio, slices).
MINICPMO_SPECIALS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|tts_bos|>",
    "<|tts_eos|>",
    "<|tts_pad|>",
    "<|chunk_tts_eos|>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<|audio|>",
    "<|spk_bos|>",
    "<|spk|>",
    "<|spk_eos|>",
    "<slice>",
    "</slice>",
    "<image_id>",
    "</image_id>",
    "<ref>",
    "</ref>",
    "<box>",
    "</box>",
    "<unk>",
)

# Tokens that are always typed CONTROL, whatever the checkpoint's tokenizer files say.
CONTROL_TOKENS: tuple[str, ...] = MINICPMO_SPECIALS + tuple(
    t for t in PROTOCOL_TOKENS if t not in MINICPMO_SPECIALS
)

# Role tokens the chat template needs; eos is the end of a chat message.
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|endoftext|>"

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
