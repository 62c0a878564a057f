"""Chat templates to ids: the prompt a model really receives (``compare --ops chat``).

    conversation (tokparity.chat.conversation)  a corpus line: messages, tools, options
        │  the model's template (tokparity.chat.template), rendered as transformers renders it,
        │  in a sandboxed child process (tokparity.chat.render, tokparity.chat.sandbox)
        ▼
    prompt text ──► ids: the oracle's encoding with the rules of transformers'
                    apply_chat_template (no special tokens added, special-token text parsed)

Every backend with a ``chat`` op (transformers' ``apply_chat_template``, llama.cpp's built-in
templates, a ``cmd:`` or ``py:`` engine) answers a ``ChatAnswer``; tokparity.run.chat judges it
against the reference's, and tokparity.diagnose.chat names the cause by rendering or tokenizing
the reference otherwise, one named switch at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokparity.chat.conversation import Conversation

RAISED_SHOWN = "(the template raised: "  # how a report shows a refusal in place of a prompt
# The template's own check, judged as a backend is: the conversation with its string contents sent
# as lists of one text part, where the template reads parts (tokparity.chat.template.ChatTemplate.reads_parts)
PARTS_CHECK = "template:parts"
# The template's own check of its tokenizer: each special token's text the prompt writes must be
# exactly that token's id in the prompt's ids (not split: split_special_tokens, a special typed as text)
SPECIALS_CHECK = "template:specials"
# The template as tokparity renders and encodes it today, judged as a backend is against prompts an
# earlier run stored (regress's goldens): a template file, a tokenizer or tokparity that changed since
TEMPLATE_CHECK = "template"
TEMPLATE_CHECKS = (SPECIALS_CHECK, TEMPLATE_CHECK, PARTS_CHECK)  # judged as backends are; not engines


@dataclass(frozen=True)
class ChatAnswer:
    """A backend's prompt for one conversation: its text and its ids (either may be None: an engine
    that only renders, or only gives ids), or ``raised``: the template refused the conversation."""

    text: str | None = None
    ids: list[int] | None = None
    raised: str = ""
    # The text of a BOS that the tokenizer put before the ids (the diagnosis's way of adding one): a
    # backend's text may show it first, as the text of its ids does, or leave it out.
    added_bos: str = ""


@dataclass(frozen=True)
class StoredPrompts:
    """Prompts an earlier run stored (``regress --update``'s goldens): what each conversation must
    give, in place of the reference's prompt. ``answer`` raises ``NotCovered`` for a conversation
    they do not hold; ``encoder`` is the library that encoded them, which encodes the live
    reference's prompts too (the template's own check and the diagnosis)."""

    encoder: str
    answer: Callable[[Conversation], ChatAnswer]
