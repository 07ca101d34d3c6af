"""Chat backends for the general capability: any OpenAI-compatible endpoint, or a local GGUF model."""
from __future__ import annotations

import functools
import json
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from typing import Protocol

from edge.harness.capability import CapabilityError, TransientError
from edge.harness.specs import EndpointChat, GgufChat, chat_spec

Messages = list[dict[str, str]]
THINKING = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


class ChatBackend(Protocol):
    name: str
    live: bool  # whether it can look up what changes by the hour (weather, news); a model file alone cannot

    def complete(self, messages: Messages, timeout_s: float, max_tokens: int = 200) -> str: ...


class OpenAIChat:
    """POST {base_url}/chat/completions (llama.cpp server, Ollama, vLLM, a hosted API)."""

    live = True  # a server may be an agent with search: what it can look up is its own business

    def __init__(self, base_url: str, model: str = "default", api_key_env: str | None = None,
                 temperature: float = 0.3) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"the chat endpoint {base_url!r} must start with http:// or https://")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.temperature = temperature
        self.name = f"openai:{self.base_url}"

    def complete(self, messages: Messages, timeout_s: float, max_tokens: int = 200) -> str:
        body = json.dumps({"model": self.model, "messages": messages, "max_tokens": max_tokens,
                           "temperature": self.temperature, "stream": False}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(f"{self.base_url}/chat/completions", body, headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                data = json.loads(resp.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            if exc.code == 429 or exc.code >= 500:
                raise TransientError(f"the model server is busy (HTTP {exc.code})") from None
            raise CapabilityError(f"the model server refused the request (HTTP {exc.code})") from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, TimeoutError) as exc:
            raise TransientError(f"the model server could not be reached ({getattr(exc, 'reason', exc)})") from None
        except json.JSONDecodeError:
            raise CapabilityError("the model server sent a reply that is not JSON") from None
        try:
            return str(data["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError):
            raise CapabilityError("the model server's reply has no message in it") from None


PLAIN_SPEECH = r"root ::= [^\n*#`|<>]{1,1500}"  # a local model's answer is read aloud: one paragraph, no markup


@functools.cache
def _plain_speech():
    """Plain speech only: asked for no lists, the 0.5B model still wrote "Ingredients:" and a list, which
    polishing left as "... restaurant:. Ingredients:." (lines, list marks and markup cannot be said). Parsed
    once: llama.cpp builds its sampler from the grammar's text at every completion."""
    from llama_cpp import LlamaGrammar
    return LlamaGrammar.from_string(PLAIN_SPEECH, verbose=False)


class LocalChat:
    """A GGUF chat model in llama.cpp, loaded on first use; one request at a time."""

    live = False

    def __init__(self, model_path: str, n_ctx: int = 2048, n_threads: int = 1) -> None:
        if not os.path.isfile(model_path):
            raise ValueError(f"the local chat model {model_path} does not exist; give the path of a GGUF file")
        self.model_path, self.n_ctx, self.n_threads = model_path, n_ctx, n_threads
        self.name = f"local:{os.path.basename(model_path)}"
        self._llm = None
        self._lock = threading.Lock()

    def llm(self):
        if self._llm is None:
            from llama_cpp import Llama
            self._llm = Llama(self.model_path, n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False)
        return self._llm

    def complete(self, messages: Messages, timeout_s: float, max_tokens: int = 200) -> str:
        with self._lock:
            out = self.llm().create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=0.3,
                                                    grammar=_plain_speech())
        text = str(out["choices"][0]["message"]["content"] or "")
        return THINKING.sub("", text).strip()  # a reasoning model's private thoughts are not the answer


class EmbeddedChat(LocalChat):
    """The embedded default's local model (Qwen2.5-Coder-0.5B shipped in packages), assembled on first use."""

    def __init__(self, n_ctx: int = 2048, n_threads: int = 1) -> None:
        self.n_ctx, self.n_threads = n_ctx, n_threads
        self.name = "local:embedded"
        self._llm = None
        self._lock = threading.Lock()

    def llm(self):
        if self._llm is None:
            from edge.backends.locate import QWEN_GGUF, ModelMissing, assemble
            try:
                self.model_path = str(assemble(QWEN_GGUF))
            except ModelMissing as exc:
                raise CapabilityError(f"the local model is not installed ({exc})") from None
            return super().llm()
        return self._llm


def build_chat(spec: dict | str | None, threads: int = 1) -> ChatBackend | None:
    """`{"url": ..., "model": ..., "api_key_env": ...}`, `{"gguf": PATH}` or "embedded" (edge/harness/specs.py);
    None when not set."""
    chat = chat_spec(spec)
    if chat == "embedded":
        return EmbeddedChat(n_threads=threads)
    if isinstance(chat, EndpointChat):
        return OpenAIChat(chat.url, chat.model, chat.api_key_env)
    if isinstance(chat, GgufChat):
        return LocalChat(chat.gguf, chat.n_ctx, chat.threads)
    return None
