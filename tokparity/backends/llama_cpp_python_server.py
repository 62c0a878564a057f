"""llama-cpp-python's server over HTTP (``python -m llama_cpp.server``): what it tokenizes and decodes.

    -b 'srv=http:llama-cpp-python@8000'        a server you run, on 127.0.0.1:8000
    -b 'srv=http:llama-cpp-python@HOST:PORT'   one elsewhere: only where you name the host

Encode asks ``POST /extras/tokenize``. The endpoint always adds the special tokens the vocabulary
asks for, and always parses special-token text (llama_cpp/server/app.py: ``tokenize(…,
special=True)``, ``add_bos`` left on). The backend declares both: a run that asks otherwise finds
its cases not applicable.

Decode asks ``POST /extras/detokenize``. The endpoint leaves special tokens out (``Llama.detokenize``,
``special=False``) and reads the bytes as strict UTF-8. Where a run asks for special tokens as text,
ids that hold one are not covered.

Neither stream nor chat is asked. The server's stream sends chunks that do not say which ids they
carry (without ``logprobs``), and no endpoint shows the prompt a chat is turned into.

The server must run the model compared: the special tokens are read from the model's own GGUF.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tokparity.backends.base import NO_ADD_SPECIAL_SWITCH, NO_PARSE_SPECIAL_SWITCH, Backend
from tokparity.backends.server_http import CASE_SECONDS, ServerClient, parse_address, said
from tokparity.errors import CaseFailure, NotCovered, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings

if TYPE_CHECKING:
    from tokparity.zoo import ModelFiles


class LlamaCppPythonServerBackend(Backend):
    """llama-cpp-python's server at ``url`` (``PORT`` or ``HOST:PORT``)."""

    name = "llama-cpp-python"
    unsupported = frozenset({NO_ADD_SPECIAL_SWITCH, NO_PARSE_SPECIAL_SWITCH})
    decode_switches = frozenset({"skip_special"})

    def __init__(self, model: ModelFiles, url: str, timeout: float = CASE_SECONDS, **opts):
        if opts:
            raise TokparityError(f"llama-cpp-python backend: unknown option(s) {', '.join(sorted(opts))}")
        gguf = model.path("gguf")
        if gguf is None:
            raise TokparityError(f"model {model.name}: http:{self.name} needs the model's .gguf, and it has none "
                                 f"(it has: {', '.join(model.files) or 'nothing'})")
        from tokparity.backends.llamacpp import LlamaCppBackend
        from tokparity.vocab import load_vocab
        self.vocab = load_vocab(gguf)  # (the file's pieces, for reports: the server has no endpoint for them)
        with LlamaCppBackend(model) as llama:
            _, self._hidden = llama.generation_marks()
        host, port = parse_address(url, self.name)
        self.client = ServerClient(host, port, timeout, yours=True)
        status, reply = self.client.first_answer("/v1/models", "llama-cpp-python server",
                                                 f"python -m llama_cpp.server --model {gguf} --port {port}")
        models = reply.get("data") if isinstance(reply, dict) else None
        if status != 200 or not isinstance(models, list):
            self.client.close()
            raise TokparityError(f"{self.client.url}/v1/models: HTTP {status}: {said(reply)}; is it "
                                 "llama-cpp-python's server?")
        import llama_cpp
        ids = ", ".join(str(m.get("id")) for m in models if isinstance(m, dict))
        self._version = f"llama-cpp-python server ({ids or 'no model'}; client llama-cpp-python {llama_cpp.__version__})"

    @property
    def version(self) -> str:
        return self._version

    def _ask(self, path: str, body: dict, key: str) -> object:
        status, reply = self.client.post(path, body)
        if status != 200 or not isinstance(reply, dict) or key not in reply:
            raise CaseFailure(f"{self.client.url}{path}: HTTP {status}: {said(reply)}")
        return reply[key]

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        ids = self._ask("/extras/tokenize", {"input": text}, "tokens")
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise CaseFailure(f"/extras/tokenize answered {str(ids)[:100]}, not a list of ids")
        return ids

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        if not settings.skip_special and any(i in self._hidden for i in ids):
            raise NotCovered("/extras/detokenize leaves special tokens out: it is asked with --skip-special")
        text = self._ask("/extras/detokenize", {"tokens": [int(i) for i in ids]}, "text")
        if not isinstance(text, str):
            raise CaseFailure(f"/extras/detokenize answered {type(text).__name__}, not text")
        return text

    def pieces(self, ids: list[int]) -> list[str]:
        return [self.vocab.tokens[i] if 0 <= i < self.vocab.size else "" for i in ids]

    def close(self) -> None:
        self.client.close()
