"""The ``mistral-common`` backend: Mistral's own library on its tekken file (``tekken_*.json``).

Mistral's models are served by mistral-common: a conversation is not rendered by a Jinja template
and then tokenized; ``encode_chat_completion`` builds the ids from the messages, each control token
(``<s>``, ``[INST]``, ``[AVAILABLE_TOOLS]``, …) put in by id, each message's text encoded as text.
So its ``chat`` is what Mistral's own stack gives the model, and the model's Jinja template (the
reference) is judged against it. As mistral-common has it:

* ``chat``: ``ChatCompletionRequest.from_openai(messages, tools, continue_final_message)`` then
  ``encode_chat_completion``: its text (its ids decoded with control tokens kept) and ids. What its
  validation refuses (``MistralCommonException``, pydantic's ``ValidationError``: the last message
  the assistant's, an empty assistant message, tool-call ids not 9 letters and digits) is ``raised``;
  any other error is a failure of the case. ``from_file`` validates in its ``test`` mode, whose
  rule for the last message is serving's; there is no ``add_generation_prompt`` (a prompt always
  ends after the last ``[/INST]``), and other options (``enable_thinking``) are not its.
* ``encode``: the Tekkenizer's ``encode(text, bos=add_special, eos=False)``; control-token text in
  the input is never read as a control token, whatever ``parse_special`` asks. ``pieces`` are its
  ``id_to_piece``; ``decode`` is not run (its control-token policy is its own).
"""

from __future__ import annotations

import copy

from tokparity.backends.base import Backend
from tokparity.chat import ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.errors import TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.zoo import ModelFiles


def is_tekken(path) -> bool:
    """Whether a tiktoken-role file is mistral-common's tekken JSON (its first bytes name a ``config``)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"config"' in head


class MistralCommonBackend(Backend):
    name = "mistral-common"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"mistral-common backend: unknown option(s) {', '.join(sorted(opts))} (known: none)")
        path = model.path("tiktoken")
        if path is None or not is_tekken(path):
            raise TokparityError(f"model {model.name}: the mistral-common backend needs Mistral's tekken JSON "
                                 "(tekken_*.json), and this model has none")
        from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

        try:
            self.tokenizer = MistralTokenizer.from_file(str(path))
        except Exception as e:  # its own validation of the file
            raise TokparityError(f"{path}: mistral-common could not load it ({type(e).__name__}: {e})") from None
        self.path = path

    @property
    def version(self) -> str:
        import mistral_common

        return mistral_common.__version__

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        return list(self.tokenizer.instruct_tokenizer.tokenizer.encode(text, bos=add_special, eos=False))

    def pieces(self, ids: list[int]) -> list[str]:
        tekken = self.tokenizer.instruct_tokenizer.tokenizer
        return [tekken.id_to_piece(int(i)) for i in ids]

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        # (not judged: its decode drops or keeps control tokens by a policy of its own, which no
        # decode setting of tokparity's names; chat and encode are what it is run for)
        raise NotImplementedError("mistral-common is judged on chat and encode; decode with the tiktoken backend")

    def chat(self, conversation: Conversation) -> ChatAnswer:
        import pydantic
        from mistral_common.exceptions import MistralCommonException
        from mistral_common.protocol.instruct.request import ChatCompletionRequest

        try:
            request = ChatCompletionRequest.from_openai(copy.deepcopy(conversation.messages),
                                                        copy.deepcopy(conversation.tools),
                                                        continue_final_message=conversation.continue_final_message)
            made = self.tokenizer.encode_chat_completion(request)
        except (MistralCommonException, pydantic.ValidationError) as e:  # its validation: its refusal of the request
            return ChatAnswer(raised=f"{type(e).__name__}: {e}")
        # (anything else it raises, a KeyError of from_openai, is its failure on the case, not a refusal)
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        ids = [int(i) for i in made.tokens]
        # (the prompt's text as mistral-common writes it: control tokens as their text, KEEP)
        return ChatAnswer(self.tokenizer.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP), ids)
