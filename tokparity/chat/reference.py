"""The reference's prompt for a conversation, and the same made another way.

``ChatReference.answer(conversation)`` renders the model's template as transformers renders it, in
the sandbox (tokparity.chat.sandbox), and encodes the text as ``apply_chat_template(tokenize=True)``
does: no special tokens added, special-token text parsed. ``ChatWay`` (tokparity.chat.way) names every step a buggy
engine may take otherwise; the chat causes (tokparity.diagnose.chat) are such ways, and the
reference answers for any of them, so a cause is named by reproducing the backend's prompt.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from tokparity.chat import ChatAnswer
from tokparity.chat.builtin import builtin_text, chatml_text
from tokparity.chat.conversation import OWN_OPTIONS, Conversation
from tokparity.chat.message_edits import parts_joined
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.chat.template import ChatTemplate
from tokparity.chat.way import EMPTY_MARK, OPEN_MARK, PREPARED_BY, TRANSFORMERS_WAY, ChatWay, edited
from tokparity.errors import BackendTimeout, CaseFailure, TemplateRaised, TokparityError

if TYPE_CHECKING:
    from tokparity.vocab import Vocab


EMPTY_CONVERSATION = "Cannot apply chat template to an empty conversation"  # (transformers' words)
BOTH_ASKED = "continue_final_message and add_generation_prompt are not compatible"  # (likewise)
SYSTEM_PROBE = "\ue001system probe\ue001"  # (private-use characters: no template writes them itself)
PARTS_PROBE = "\ue001parts probe\ue001"
LIST_WRITTEN = re.compile(r"""\{\s*['"]type['"]""")  # (a list of parts written as Python or JSON writes it)
CONTENT_MARK = "\ue003"  # (where a message's content begins, until the whitespace before it is rewritten)
# The whitespace a header ends with follows a role's name or a special token, not a tag such as
# </think>. Only a body with nothing but the empty content loses it: reasoning or tools keep it.
_AFTER_HEADER = r"(?:(?<=\w)|(?<=\|>))"
# An engine's own check refused the conversation. The backend's words for it are its language's,
# so they are not compared (tokparity.diagnose.chat._same_refusal says which match).
OWN_CHECK = "(the engine's own check) "
MAX_KEPT_CHARS = 64_000_000  # of prompts kept for the diagnosis's second asking


def prompt_encoder(encode: Callable[[str, bool, bool], list[int]], vocab: Vocab) -> Callable[[str, bool], list[int]]:
    """How the reference encodes a prompt with a library's ``encode(text, add_special,
    parse_special)``: no special tokens added, as apply_chat_template does. A tekken vocabulary's
    reserved specials (``<s>``, ``[INST]``, …) are never read from text by tiktoken, nor by
    mistral-common; the model's tokenizer.json, which apply_chat_template encodes with, has each as
    a special added token: with specials parsed, each is its id and the text between is encoded
    alone (a byte-level BPE: no prefix to add to a piece)."""
    about = vocab.extra.get("tiktoken") or {}
    reserved = {vocab.tokens[i]: i for i in range(int(about.get("offset", 0)))} if about.get("kind") == "tekken" else {}
    if not reserved:
        return lambda text, parse: encode(text, False, parse)
    pattern = re.compile("|".join(re.escape(t) for t in sorted(reserved, key=len, reverse=True)))

    def with_reserved(text: str, parse: bool) -> list[int]:
        if not parse:
            return encode(text, False, False)
        ids: list[int] = []
        at = 0
        for found in pattern.finditer(text):
            if found.start() > at:
                ids += encode(text[at:found.start()], False, False)
            ids.append(reserved[found.group()])
            at = found.end()
        return ids + (encode(text[at:], False, False) if at < len(text) else [])
    return with_reserved


class ChatReference:
    """``template``: the model's (tokparity.chat.template); ``encode(text, parse_special)``: the
    oracle's encoder, no special tokens added; ``bos``: the vocabulary's BOS id; ``gguf_template``:
    the GGUF's own where it is another (llama.cpp recognizes its built-in by the template it reads,
    the GGUF's). Renders are kept per (conversation, way): the diagnosis asks the same ones again."""

    def __init__(self, template: ChatTemplate, encode: Callable[[str, bool], list[int]], bos: int | None,
                 sandbox: TemplateSandbox | None = None, gguf_template: ChatTemplate | None = None):
        self.template, self.encode, self.bos = template, encode, bos
        self.gguf_template = gguf_template
        self.sandbox = sandbox or TemplateSandbox()
        self._texts: dict[tuple, str | TemplateRaised] = {}
        self._prepared_by: dict[tuple, tuple[Conversation, str | None] | TemplateRaised] = {}
        self._chars = 0  # (conversation, the way's render choices) -> text
        self._reads_system: bool | None = None  # (asked once, where a way needs it)
        self._takes_parts: bool | None = None  # (likewise)
        self._turn_end: str | None = None  # (the same)

    def text(self, conversation: Conversation, way: ChatWay = TRANSFORMERS_WAY) -> str:
        """The prompt's text made ``way``; raises TemplateRaised (the template refused it) or
        CaseFailure (it could not be rendered)."""
        asks = conversation.add_generation_prompt if way.generation_prompt is None else way.generation_prompt
        if way.tools_ask_generation_prompt:
            asks = bool(conversation.tools) or (way.tools_ask_generation_prompt == "also" and asks)
        if way.generation_prompt_stringified and "add_generation_prompt" in conversation.options:
            asks = True
        if asks and conversation.continue_final_message and \
                (way.generation_prompt_stringified or way.tools_ask_generation_prompt):
            raise TemplateRaised(BOTH_ASKED)  # (transformers refuses the two together)
        asks = asks or way.continue_final == "reply" and conversation.continue_final_message
        # (as the request asks, whatever reaches the template; tools written into the system message
        # are not asked of it)
        tool_use = conversation.tools is not None and way.tool_use_template and \
            way.tools_in_system is None and way.tools_in_user is None
        conversation, prefill = self._prepared(conversation, way)
        if way.generation_prompt_after and conversation.messages and \
                conversation.messages[-1].get("role") not in way.generation_prompt_after.split():
            asks = False  # (the last message the engine renders, after its own edits)
        asks = asks or prefill is not None
        own_prompt = way.generation_prompt_as if asks else None  # (an engine's own generation prompt)
        asks = asks and own_prompt is None
        found = self._rendered(conversation, way, asks, tool_use)
        if way.generation_prompt_twice and asks:  # (the same render without it: no last turn left open either)
            plain = dataclasses.replace(way, continue_final="asked") if way.continue_final in ("always", "unasked") else way
            without = self._rendered(conversation, plain, False, tool_use)
            found += found[len(without):] if found.startswith(without) else ""
        found += (own_prompt or "") + (prefill or "")
        if way.strip_ends:  # (a server that avoids a double BOS by cutting the template's own)
            bos, eos = (self.template.specials.get(name) or "" for name in ("bos_token", "eos_token"))
            found = found[len(bos):] if bos and found.startswith(bos) else found
            found = found[:-len(eos)] if eos and found.endswith(eos) else found
        if way.strip_end:
            found = found.rstrip(" \t\n")
        return found[:-1] if way.drop_trailing_newline and found.endswith("\n") else found

    def _rendered(self, conversation: Conversation, way: ChatWay, asks: bool, tool_use: bool) -> str:
        """The template's text of the conversation as ``way`` edited it, the marks of its edits
        resolved; ``asks``: with the generation prompt. Kept per conversation and render choices."""
        key = (conversation.to_text(), way.render, way.builtin, way.chatml, asks, way.variables, tool_use,
               way.continue_final, way.options_set)
        if key not in self._texts:
            if len(self._texts) > 4096 or self._chars > MAX_KEPT_CHARS:  # (the diagnosis asks again within a case)
                self._texts.clear()
                self._chars = 0
            options = (dict(conversation.options) if way.variables else
                       {k: v for k, v in conversation.options.items() if k in OWN_OPTIONS})
            options["add_generation_prompt"] = asks
            for name, value in (pair.split("=", 1) for pair in way.options_set.split()):
                options.setdefault(name, value == "true")
            if way.continue_final in ("never", "prefill", "reply"):
                options.pop("continue_final_message", None)
            elif way.continue_final in ("always", "unasked") and not asks and conversation.messages and \
                    (way.continue_final == "unasked" or conversation.messages[-1].get("role") == "assistant"):
                options["continue_final_message"] = True
            try:
                if way.chatml:  # (no template read: a server falls back to ChatML where it cannot run one)
                    made = chatml_text(conversation, asks)
                else:
                    template = (self.gguf_template if way.builtin and self.gguf_template else self.template) \
                        .for_conversation(tool_use)
                    made = builtin_text(template, conversation, asks) if way.builtin else \
                        self.sandbox.render(template, conversation.messages, conversation.tools, options,
                                            self.template.specials, way.render.to_json())
                self._texts[key] = made
                self._chars += len(made)
            except TemplateRaised as e:
                self._texts[key] = e.with_traceback(None)  # (its frames hold it: a cycle, kept until collected)
            except TokparityError as e:  # no template applies (named ones, none the default): as transformers raises
                self._texts[key] = TemplateRaised(str(e))
        found = self._texts[key]
        if isinstance(found, TemplateRaised):
            raise TemplateRaised(*found.args)  # (a new one: a kept one raised again would hold this frame)
        if way.open_empty and OPEN_MARK in found:  # (a turn left open: its mark and the end of turn after it taken off)
            end = self.turn_end()
            found = re.sub(re.escape(OPEN_MARK) + (f"(?:{re.escape(end)})?" if end else ""), "", found)
        if way.before_content is not None:
            found = _respaced(found, way.before_content)
        if way.after_end is not None and (end := self.turn_end().rstrip(" \t\n")):
            found = re.sub(re.escape(end) + "[ \t\n]*", lambda _: end + str(way.after_end), found)
        if way.unspaced_empty:
            end = re.escape(self.turn_end().strip()) or "$"  # (a body of its own, such as tools, keeps it)
            found = re.sub(_AFTER_HEADER + "[ \t\n]*" + EMPTY_MARK + f"(?=[ \t\n]*(?:{end}|$))", "", found)
            found = found.replace(EMPTY_MARK, "")
        return found

    def _prepared(self, conversation: Conversation, way: ChatWay) -> tuple[Conversation, str | None]:
        """The conversation as ``way`` edits it before rendering, and the text of a last message it
        prefills (None where it prefills none); raises TemplateRaised where it refuses it. Kept per
        conversation and edit: the diagnosis asks thousands of ways, most of which edit alike."""
        key = (conversation.to_text(), PREPARED_BY(way))
        if key not in self._prepared_by:
            if len(self._prepared_by) > 1 << 16:  # (a row's search edits its conversation about 16,000 ways)
                self._prepared_by.clear()
            try:
                self._prepared_by[key] = self._prepare(conversation, way)
            except TemplateRaised as e:
                self._prepared_by[key] = e.with_traceback(None)  # (as in _rendered)
        found = self._prepared_by[key]
        if isinstance(found, TemplateRaised):
            raise TemplateRaised(*found.args)  # (as in _rendered)
        return found

    def _prepare(self, conversation: Conversation, way: ChatWay) -> tuple[Conversation, str | None]:
        refused = own_refusal(conversation, way)  # (on the request as it came: its roles, its parts)
        if refused:
            raise TemplateRaised(OWN_CHECK + refused)
        conversation = edited(conversation, way, way.join_parts is None or self.takes_parts(),
                              way.fold_system is None or way.fold_always or self.reads_system())
        if not conversation.messages:  # (every message taken out: transformers refuses to render none)
            raise TemplateRaised(EMPTY_CONVERSATION)
        prefill = None
        if way.continue_final == "prefill" and conversation.messages[-1].get("role") == "assistant":
            conversation, prefill = prefilled(conversation)
        if way.before_content is not None:  # (after the prefill is taken off: it is written as it is)
            conversation = _content_marked(conversation, not self.template.trims)
        return conversation, prefill

    def given_up(self) -> str:
        """Why the sandbox gave up on the template as transformers renders a conversation without
        tools, or "": then no conversation of that kind gives a prompt any more."""
        return self.sandbox.given_up(self.template.for_conversation(False), TRANSFORMERS_WAY.render.to_json())

    def reads_system(self) -> bool:
        """Whether the template writes a system message's content: a probe with one is rendered. A
        template that refuses the probe is taken to read it (nothing is folded)."""
        if self._reads_system is None:
            text = self._probe([{"role": "system", "content": SYSTEM_PROBE}, {"role": "user", "content": "Hello"}])
            self._reads_system = text is None or SYSTEM_PROBE in text
        return self._reads_system

    def takes_parts(self) -> bool:
        """Whether the template writes the text of a content given as a list of parts: a probe
        with one text part is rendered. A template that refuses it, or writes the list itself, does
        not. llama.cpp decides so too, by running the template (common/jinja/caps.cpp): a template
        that never reads a content as a list gets every list joined. A search of the template's
        source for a part's ``type`` says yes to Command R's, which refuses a list."""
        if self._takes_parts is None:
            text = self._probe([{"role": "user", "content": [{"type": "text", "text": PARTS_PROBE}]}])
            self._takes_parts = text is not None and PARTS_PROBE in text and not LIST_WRITTEN.search(text)
        return self._takes_parts

    def turn_end(self) -> str:
        """The text the template writes after a message's content to end its turn (``<|eot_id|>``):
        between a user's content and an assistant's, less the assistant's header. That header is
        the generation prompt where the template writes one on request. Else the user's header is
        what precedes the first content and the assistant's content alike. "" where it refuses."""
        if self._turn_end is None:
            a, b, c = (f"\ue001{x}\ue001" for x in "abc")
            three = self._probe([{"role": "user", "content": a}, {"role": "assistant", "content": b},
                                 {"role": "user", "content": c}]) or ""
            one, asked = (self._probe([{"role": "user", "content": a}], asks) or "" for asks in (False, True))
            if not all(m in three for m in (a, b, c)) or a not in one:
                self._turn_end = ""
            elif len(asked) > len(one) and asked.startswith(one):
                header, turn = asked[len(one):], three.split(a, 1)[1].split(b, 1)[0]
                self._turn_end = turn[:-len(header)] if turn.endswith(header) else ""
            else:
                turn = three.split(b, 1)[1].split(c, 1)[0]
                at = len(turn) - len(os.path.commonprefix([one.split(a, 1)[0][::-1], turn[::-1]]))
                tag = turn.rfind("<", 0, at)  # (a tag the two share the end of, <|begin_of_text|> and <|eot_id|>: the end's)
                self._turn_end = turn[:turn.find(">", tag) + 1] if 0 <= tag and turn.find(">", tag) >= at else turn[:at]
        return self._turn_end

    def _probe(self, messages: list[dict], asks: bool = False) -> str | None:
        """The template's text of a probe; None where it refuses it."""
        try:
            return self.sandbox.render(self.template.for_conversation(False), messages, None,
                                       {"add_generation_prompt": asks}, self.template.specials,
                                       TRANSFORMERS_WAY.render.to_json())
        except BackendTimeout:
            raise  # (not answered: asked again next time, never taken for an answer)
        except (TemplateRaised, TokparityError, CaseFailure):
            return None

    def ignores_generation_prompt(self) -> bool:
        """Whether the template writes the same prompt with and without ``add_generation_prompt``
        (an older Llama 3 template always ends with the assistant's header; a Llama 2 one never
        writes any). A template that refuses the probe, or does not render it in time, is taken to
        read it. A probe past its time counts as one of the sandbox's failures in a row: a template
        that cannot render one short message in time is given up on after one more."""
        probe = Conversation([{"role": "user", "content": "Hello"}])
        try:
            asked, not_asked = (self.text(dataclasses.replace(probe, options={"add_generation_prompt": flag}))
                                for flag in (True, False))
        except (TemplateRaised, TokparityError, CaseFailure):  # (BackendTimeout is a CaseFailure)
            return False
        return asked == not_asked

    def answer(self, conversation: Conversation, way: ChatWay = TRANSFORMERS_WAY) -> ChatAnswer:
        """The prompt's text and ids made ``way`` (``raised``: the template refused the conversation)."""
        try:
            text = self.text(conversation, way)
        except TemplateRaised as e:
            return ChatAnswer(raised=str(e))
        ids = list(self.encode(text, way.parse_special and self.template.parse_special))
        if way.add_bos and self.bos is not None:  # (as a tokenizer whose vocabulary adds a BOS: llama.cpp's add_bos)
            ids.insert(0, self.bos)
            return ChatAnswer(text, ids, added_bos=self.template.specials.get("bos_token", ""))
        return ChatAnswer(text, ids)

    def close(self) -> None:
        self.sandbox.close()


def own_refusal(conversation: Conversation, way: ChatWay) -> str:
    """Why an engine's own check refuses the conversation ("" where it does not)."""
    known = way.roles_known.split()
    for m in conversation.messages:
        if known and m.get("role") not in known:
            return f"the role {m.get('role')!r} is none of {', '.join(known)}"
        if way.parts_refused and isinstance(m.get("content"), list):
            return "a content given as a list of parts, not a string"
    if way.alternation_refused:
        roles = [m.get("role") for m in conversation.messages]
        turns = roles[1:] if roles[:1] == ["system"] else roles  # (one system message first: llama-index's Llama 3 format)
        if any(r != ("user", "assistant")[k % 2] for k, r in enumerate(turns)):
            return "the messages after a first system message are not user and assistant in turn"
    return ""


def _respaced(text: str, before_content: str) -> str:
    """``text`` with the whitespace before each ``CONTENT_MARK`` written as ``before_content``.
    Where the prompt ends with a header (what stands before a content, then the template's one
    whitespace before contents), that whitespace is written so too: the generation prompt's.

    >>> _respaced("<|user|>\\n\\n\ue003Hi<|end|>\\n<|assistant|>\\n\\n\ue003Yo<|end|><|assistant|>\\n\\n", "\\n")
    '<|user|>\\nHi<|end|>\\n<|assistant|>\\nYo<|end|><|assistant|>\\n'
    >>> _respaced("<|user|>\\n\ue003Hi<|end|>\\n", "")
    '<|user|>Hi<|end|>\\n'
    """
    marks = list(re.finditer("([ \t\n]*)" + CONTENT_MARK, text))
    runs = {m.group(1) for m in marks}
    heads = {text[max(0, m.start() - 8):m.start()] for m in marks}  # (each header's end)
    respaced = re.sub("[ \t\n]*" + CONTENT_MARK, lambda _: before_content, text)
    (run,) = runs if len(runs) == 1 else ("",)
    if run and respaced.endswith(run) and respaced[:-len(run)].endswith(tuple(h for h in heads if h)):
        return respaced[:-len(run)] + before_content
    return respaced


def _content_marked(conversation: Conversation, blank_start: bool) -> Conversation:
    """Each message's string content with ``CONTENT_MARK`` first. An empty content stays as it is:
    a template may test it. So does one that begins with whitespace, unless ``blank_start`` (the
    template trims no text)."""
    messages = [m | {"content": CONTENT_MARK + m["content"]}
                if isinstance(m.get("content"), str) and (m["content"][:1].strip() or blank_start and m["content"])
                else m for m in conversation.messages]
    return dataclasses.replace(conversation, messages=messages)


def prefilled(conversation: Conversation) -> tuple[Conversation, str]:
    """The conversation less its last message, an assistant's, and that message's text (a list's
    text parts joined), as llama-server prefills a reply; TemplateRaised where it refuses to."""
    *rest, last = conversation.messages
    if rest and rest[-1].get("role") == "assistant":
        raise TemplateRaised("Cannot have 2 or more assistant messages at the end of the list.")
    if last.get("tool_calls"):
        raise TemplateRaised("Cannot continue an assistant message that contains tool calls.")
    content = last.get("content")
    text = content if isinstance(content, str) else parts_joined(content, "") if isinstance(content, list) else ""
    return dataclasses.replace(conversation, messages=rest), text
