"""The causes of ``--ops chat`` mismatches, named by reproduction: the reference's prompt made
another way, one named step or several at once (tokparity.chat.reference.ChatWay), gives the
backend's prompt exactly: its ids where it gave ids, its text where it gave text, or the same
refusal.

The smallest set of ``ChatVariant``s that reproduces the backend's prompt names the cause (up to
three at once: an engine with several bugs gets all of them named); other sets of that size are
its alternatives. None is named where none reproduces it: the class stays the judge's.
The catalogue (docs/catalogue/causes.md, "Chat causes") describes each name with its real cases.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import combinations

from tokparity.chat import RAISED_SHOWN, ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import TRANSFORMERS_WAY, ChatReference, ChatWay
from tokparity.errors import CaseFailure
from tokparity.records import Diagnosis, Judgement

MAX_AT_ONCE = 3
SEARCH_SECONDS = 10.0  # per mismatch: a long prompt or a slow template must not hold the run
SPEC = "tokparity/chat/render.py and tokparity/chat/reference.py (ChatWay)"


@dataclass(frozen=True)
class ChatVariant:
    name: str
    does: str  # what the backend does, as a sentence after "the backend"
    changes: tuple[tuple[str, object], ...]  # ChatWay fields (render switches included) and their values
    fix: str = ""

    def way(self, base: ChatWay = TRANSFORMERS_WAY) -> ChatWay:
        return base.changed(**dict(self.changes))


VARIANTS = (
    ChatVariant("chat.bos-added", "puts the vocabulary's BOS before the prompt's ids, as a tokenizer that adds special "
                "tokens does: a template that writes bos_token gets a second BOS", (("add_bos", True),),
                "encode the rendered prompt with add_special_tokens=False (the template writes the specials)"),
    ChatVariant("chat.bos-token-empty", "renders bos_token as an empty string (and adds none)",
                (("bos_token", ""),), "pass the vocabulary's BOS text as bos_token"),
    ChatVariant("chat.no-trim-blocks", "renders without trim_blocks: the newline after each {% … %} block stays",
                (("trim_blocks", False),), "render with trim_blocks=True, as transformers does"),
    ChatVariant("chat.no-lstrip-blocks", "renders without lstrip_blocks: the spaces before each {% … %} block stay",
                (("lstrip_blocks", False),), "render with lstrip_blocks=True, as transformers does"),
    ChatVariant("chat.trailing-newline-kept", "keeps the template's last newline (keep_trailing_newline), which "
                "jinja2 drops", (("keep_trailing_newline", True),), "drop the template source's one trailing newline"),
    ChatVariant("chat.trailing-newline-dropped", "drops the prompt's last newline",
                (("drop_trailing_newline", True),), "keep the rendered prompt whole"),
    ChatVariant("chat.specials-not-parsed", "tokenizes the prompt with special-token text read as text: "
                "`<|im_start|>` becomes several ordinary tokens", (("parse_special", False),),
                "encode the rendered prompt with special tokens parsed"),
    ChatVariant("chat.tojson-html-safe", "uses jinja2's own tojson: keys sorted, `<`, `>`, `&` and `'` escaped "
                "as \\u003c…", (("tojson", "jinja2"),),
                "override tojson as transformers does: json.dumps(x, ensure_ascii=False), keys in their order"),
    ChatVariant("chat.tojson-ascii", "writes non-ASCII text in tojson as \\uXXXX escapes (ensure_ascii)",
                (("tojson", "ascii"),), "tojson with ensure_ascii=False"),
    ChatVariant("chat.generation-prompt-missing", "leaves out the generation prompt that was asked for",
                (("generation_prompt", False),), "pass add_generation_prompt to the template"),
    ChatVariant("chat.generation-prompt-added", "adds a generation prompt that was not asked for",
                (("generation_prompt", True),), "pass add_generation_prompt as asked"),
    ChatVariant("chat.variables-dropped", "gives the template none of the conversation's other variables "
                "(enable_thinking, date_string…): the template takes its defaults", (("variables", False),),
                "pass every option of the request to the template, as transformers passes its keyword arguments"),
    ChatVariant("chat.tool-use-template-ignored", "renders a conversation with tools with the model's default template, "
                "though the model names a tool_use template for it", (("tool_use_template", False),),
                "take the template named tool_use when tools are given (transformers' get_chat_template)"),
    ChatVariant("chat.content-stripped", "strips the whitespace around each message's text before rendering",
                (("strip_content", True),), "give the template each message as sent; the template strips what it strips"),
    ChatVariant("chat.trim-javascript", "trims with JavaScript's String.prototype.trim where the template says trim: "
                "U+FEFF is stripped, U+0085 and U+001C..U+001F are kept (a Jinja port in JavaScript)",
                (("trim", "javascript"),), "trim as jinja2 does, with Python's str.strip: U+0085 and U+001C..U+001F are "
                "whitespace, U+FEFF is not"),
    ChatVariant("chat.system-dropped", "takes the system messages out of the conversation before rendering",
                (("drop_system", True),), "give the template every message; the template decides what a system message becomes"),
    ChatVariant("chat.content-as-parts", "sends each message's text as a list of parts "
                "([{\"type\": \"text\", \"text\": …}]) where the conversation gives a string: a template takes "
                "another branch for it", (("content_as_parts", True),),
                "pass each content as the request gives it"),
    ChatVariant("chat.llama-cpp-builtin", "formats with llama.cpp's built-in C++ template for the model "
                "(llama_chat_apply_template), not the model's Jinja template", (("builtin", True),),
                "render the model's own template (llama.cpp: --jinja)"),
)
BY_NAME = {v.name: v for v in VARIANTS}


def _combined(variants: tuple[ChatVariant, ...]) -> ChatWay | None:
    """One way with every variant's changes (None where two set the same field differently)."""
    changes: dict[str, object] = {}
    for v in variants:
        for key, value in v.changes:
            if key in changes and changes[key] != value:
                return None
            changes[key] = value
    return TRANSFORMERS_WAY.changed(**changes)


def _backend_answer(j: Judgement) -> ChatAnswer:
    """The backend's prompt as the judge kept it (``tags["gave"]``: text, ids or both)."""
    output = j.backend_output[0] if j.backend_output else None
    if output is not None and output.startswith(RAISED_SHOWN):
        return ChatAnswer(raised=output)
    gave = j.tags.get("gave", "both")
    return ChatAnswer(output if gave != "ids" else None, list(j.backend_ids) if gave != "text" else None)


def _same(answer: ChatAnswer, got: ChatAnswer) -> bool:
    """Whether a way's prompt is the backend's: its ids where it gave ids, its text where it gave text.
    A refusal reproduces nothing: two engines refuse for their own reasons (a missing filter, an
    empty list), and which one is not known from a message."""
    if got.raised or answer.raised:
        return False
    if got.ids is not None and answer.ids != got.ids:
        return False
    return got.text is None or answer.text == got.text


def diagnose_chat(reference: ChatReference, j: Judgement) -> Diagnosis:
    if j.cls == "chat-special-split":  # (the template's own check: the expected prompt against its tokenizer)
        return Diagnosis("", "the expected prompt itself: its tokenizer splits a special token's text the template "
                             "writes, in every engine alike; no way of making the prompt is at fault (see the "
                             "tokenizer's split_special_tokens, and the token's type)", stage="chat")
    conversation = Conversation.from_text(j.text, f"{j.corpus}/{j.case_id}")
    got = _backend_answer(j)
    if got.raised:
        return Diagnosis("", "the backend's template refused the conversation: a refusal reproduces no way of "
                             "making the prompt (its reason is the engine's own)", stage="chat")
    right = reference.answer(conversation)
    if _same(right, got):  # (regress: judged by stored prompts, which the template no longer makes)
        return Diagnosis("", "the backend's prompt is the one the model's template makes today: the stored prompts "
                             "were made from another template, tokenizer or tokparity (`regress --update` remakes "
                             "them once the change is reviewed)", stage="chat")
    until = time.monotonic() + SEARCH_SECONDS
    untried = 0
    for size in range(1, MAX_AT_ONCE + 1):
        found: list[tuple[str, ...]] = []
        for variants in combinations(VARIANTS, size):
            way = _combined(variants)
            if way is None:
                continue
            if time.monotonic() > until:
                return Diagnosis("", f"not found within {SEARCH_SECONDS:g} s: the search stopped after the ways of "
                                     f"{size - 1} cause(s) at once (a long prompt, a slow template)", stage="chat")
            try:
                answer = reference.answer(conversation, way)
            except NotImplementedError:  # a way that cannot be taken here (llama.cpp's built-ins): reproduces nothing
                continue
            except CaseFailure:  # could not be rendered this way (too slow, too big): not tried
                untried += 1
                continue
            if _same(answer, got) and not _same(answer, right):
                found.append(tuple(v.name for v in variants))
        if found:
            first = found[0]
            does = "; and ".join(BY_NAME[n].does for n in first)
            others = f"; so do {', '.join('+'.join(f) for f in found[1:])}" if found[1:] else ""
            return Diagnosis("+".join(first), f"reproduced: the reference's prompt made as an engine that {does} gives "
                                              f"the backend's {'ids' if got.ids is not None else 'text'} exactly{others}",
                             first, tuple(found[1:]), stage="chat")
    unrendered = f" ({untried} ways could not be rendered: not tried)" if untried else ""
    return Diagnosis("", f"no way of making the reference's prompt (up to {MAX_AT_ONCE} of the chat causes at once) "
                         f"gives the backend's prompt{unrendered}", stage="chat")
