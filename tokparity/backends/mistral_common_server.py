"""mistral-common's server over HTTP (``mistral_common serve TEKKEN.json``): the prompts it makes.

    -b 'srv=http:mistral-common@8000'        a server you run, on 127.0.0.1:8000
    -b 'srv=http:mistral-common@HOST:PORT'   one elsewhere: only where you name the host

Chat asks ``POST /v1/tokenize/`` with the conversation as an OpenAI request (messages, tools,
``continue_final_message``). The server answers the prompt's ids, not its text. A request its
schema refuses gets a 400 or 422: that is the conversation refused. The library's own validation
runs later, inside ``encode_chat_completion``. A refusal there is an HTTP 500 with no words
(mistral-common 1.13.1, experimental/app/routers.py). That is the case's failure.

Decode asks ``POST /v1/detokenize/string``. Special tokens are kept as their text
(``special_token_policy: keep``), or left out with ``--skip-special`` (``ignore``). The server
refuses an empty list of ids (400): that case is not covered.

No endpoint takes a text, so an encode case is not covered: counted, not judged. Pieces are read
from the tekken file itself.
The server must run the model compared: tokparity reads its file for the pieces only.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from tokparity.backends.base import Backend
from tokparity.backends.server_http import CASE_SECONDS, ServerClient, parse_address, said
from tokparity.errors import CaseFailure, NotCovered, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
    from tokparity.zoo import ModelFiles


class MistralCommonServerBackend(Backend):
    """mistral-common's server at ``url`` (``PORT`` or ``HOST:PORT``)."""

    name = "mistral-common-server"
    decode_switches = frozenset({"skip_special"})

    def __init__(self, model: ModelFiles, url: str, timeout: float = CASE_SECONDS, **opts):
        if opts:
            raise TokparityError(f"mistral-common server backend: unknown option(s) {', '.join(sorted(opts))}")
        from tokparity.backends.mistral_common import MistralCommonBackend
        try:
            self._file = MistralCommonBackend(model)  # (the pieces; and the tekken file the server must load)
        except ImportError:
            raise TokparityError("http:mistral-common reads the tekken file's pieces with mistral-common, which is not "
                                 "installed here: pip install 'tokparity[mistral]'") from None
        host, port = parse_address(url, "mistral-common")
        self.client = ServerClient(host, port, timeout, yours=True)
        status, reply = self.client.first_answer("/openapi.json", "mistral-common server",
                                                 f"mistral_common serve {self._file.path} --port {port}")
        paths = reply.get("paths") if isinstance(reply, dict) else None
        if status != 200 or not isinstance(paths, dict) or "/v1/tokenize/" not in paths:
            self.client.close()
            raise TokparityError(f"{self.client.url}/openapi.json: HTTP {status}, no /v1/tokenize/ endpoint; is it "
                                 "mistral-common's server?")
        self._version = f"mistral-common server (client mistral-common {self._file.version})"

    @property
    def version(self) -> str:
        return self._version

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        raise NotCovered("no endpoint of mistral-common's server takes a text: ask it --ops chat or --ops decode")

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        if not ids:
            raise NotCovered("/v1/detokenize/string refuses an empty list of ids")
        policy = "ignore" if settings.skip_special else "keep"
        status, reply = self.client.post("/v1/detokenize/string", {"tokens": [int(i) for i in ids],
                                                                    "special_token_policy": policy})
        if status != 200 or not isinstance(reply, str):
            raise CaseFailure(f"{self.client.url}/v1/detokenize/string: HTTP {status}: {_detail(reply)}")
        return reply

    def pieces(self, ids: list[int]) -> list[str]:
        return self._file.pieces(ids)

    def chat(self, conversation: Conversation) -> ChatAnswer:
        from tokparity.chat import ChatAnswer
        body: dict = {"messages": copy.deepcopy(conversation.messages)}
        if conversation.tools is not None:
            body["tools"] = copy.deepcopy(conversation.tools)
        if conversation.continue_final_message:
            body["continue_final_message"] = True
        status, reply = self.client.post("/v1/tokenize/", body)
        if status in (400, 422):  # (its schema's refusal of the request)
            return ChatAnswer(raised=f"HTTP {status}: {_detail(reply)}")
        if status != 200 or not isinstance(reply, list) or not all(type(i) is int for i in reply):
            raise CaseFailure(f"{self.client.url}/v1/tokenize/: HTTP {status}: {_detail(reply)}")
        return ChatAnswer(None, list(reply))

    def close(self) -> None:
        self.client.close()


def _detail(reply: object) -> str:
    """FastAPI's error body (``{"detail": …}``) on one line."""
    return said(reply.get("detail", reply) if isinstance(reply, dict) else reply)
