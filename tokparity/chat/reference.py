"""The reference's prompt for a conversation, and the same made another way.

``ChatReference.answer(conversation)`` renders the model's template as transformers renders it, in
the sandbox (tokparity.chat.sandbox), and encodes the text as ``apply_chat_template(tokenize=True)``
does: no special tokens added, special-token text parsed. ``ChatWay`` names every step a buggy
engine may take otherwise; the chat causes (tokparity.diagnose.chat) are such ways, and the
reference answers for any of them, so a cause is named by reproducing the backend's prompt.
"""

from __future__ import annotations

import dataclasses
import html
import operator
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tokparity.chat import ChatAnswer
from tokparity.chat.builtin import builtin_text, chatml_text
from tokparity.chat.conversation import OWN_OPTIONS, Conversation
from tokparity.chat.message_edits import (
    arguments_parsed,
    arguments_quoted,
    blank_lines_collapsed,
    characters_rewritten,
    content_normalized,
    each_text,
    formatted,
    keys_sorted,
    one_part,
    parts_as_string,
    parts_joined,
    reasoning_moved,
    result_quoted,
    system_folded,
    tool_dumped,
    tools_into_system,
    tools_into_user,
    turns_merged,
)
from tokparity.chat.render import TRANSFORMERS, RenderSwitches, replaced
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.chat.template import ChatTemplate
from tokparity.errors import BackendTimeout, CaseFailure, TemplateRaised, TokparityError

if TYPE_CHECKING:
    from tokparity.vocab import Vocab


@dataclass(frozen=True)
class ChatWay:
    """How a conversation becomes ids; the defaults are transformers' ``apply_chat_template``."""

    render: RenderSwitches = field(default_factory=RenderSwitches)
    builtin: bool = False  # llama.cpp's built-in C++ template for the model's, not the template itself
    chatml: bool = False  # ChatML whatever the model's template, as a server's fallback (builtin.chatml_text)
    generation_prompt: bool | None = None  # add_generation_prompt forced (None: as the conversation asks)
    # add_generation_prompt given as whether there are tools ("only"), or as asked and where there are tools ("also")
    tools_ask_generation_prompt: str = ""
    # add_generation_prompt asked wherever the request gives it, false too (passed on as a string)
    generation_prompt_stringified: bool = False
    variables: bool = True  # the conversation's other options (enable_thinking, date_string) given to the template
    tool_use_template: bool = True  # a conversation with tools rendered by the model's "tool_use" template, if any
    # The roles whose string content is stripped of surrounding whitespace first ("*": every role;
    # "user": a chat box that trims what the user typed), separated by spaces
    strip_content: str = ""
    drop_roles: str = ""  # the messages of these roles taken out first, separated by spaces ("system", "tool")
    # a last assistant message taken out first, read as the reply's placeholder: "any" such message,
    # "empty" one with no content ("", [], null or missing)
    drop_final_assistant: str = ""
    # each run of line breaks with blank lines between made this ("\n"), in every content and text part
    blank_lines_as: str | None = None
    # a tool message's string content JSON-quoted: "ascii" (json.dumps's default) | "raw" | "wrapped" ({"result": …})
    quote_results: str = ""
    normalized: str | None = None  # each content's text put through this Unicode form first ("NFKC")
    escaped: str = ""  # each content's text escaped first: "html" (``html.escape``), "html-text" (quotes kept)
    tabs_as: str | None = None  # each tab in each content's text written as this first ("    ")
    # characters of each content's text written as others first: a JSON object of one character
    # to its text ('{"&": "&amp;"}'), read off a backend's prompt (message_edits.characters_rewritten)
    content_chars: str = ""
    formatted: bool = False  # each content's text put through Python's str.format() first ({{ as {)
    content_chars_roles: str = ""  # the roles whose contents content_chars rewrites, separated by spaces ("": all)
    # messages left out first: "last-user" keeps the system messages and those from the last user
    # message on (a builder that sends the last turn only)
    history: str = ""
    system_default: str | None = None  # a system message with this content put first where there is none
    # messages with no content taken out first: "plain" those without tool calls, "any" those with too
    drop_empty: str = ""
    drop_null: bool = False  # messages whose content is null taken out first, their tool calls too
    null_as: str | None = None  # a null (or missing) content sent as this string ("", or Python's "None")
    merge_turns: str | None = None  # consecutive messages of one role made one, their texts joined by this
    tools: bool = True  # the conversation's tools given to the template
    # the tools written into the system message as this text, not given to the template: its leading
    # whitespace joins it to a system message's content (message_edits.tools_into_system)
    tools_in_system: str | None = None
    # the tools written after a user message's content as this text, not given to the template
    # (message_edits.tools_into_user); ``tools_user`` says which user message: "first" or "last"
    tools_in_user: str | None = None
    tools_user: str = "first"
    no_tools_as_empty: bool = False  # a conversation without tools given an empty list (``tools or []``)
    # roles renamed before rendering, as pairs "from=to" separated by spaces ("developer=system")
    roles_as: str = ""
    # continue_final_message: "asked" (as the conversation asks) | "never" | "always" (a last assistant message
    # left open where no generation prompt is asked) | "unasked" (the last message so, whatever its role) |
    # "prefill" (a last assistant message taken off, a generation prompt asked, its text appended: llama-server)
    continue_final: str = "asked"
    content_as_parts: bool = False  # each string content sent as a list of one text part
    # a list of text parts made one string, joined by this, for a template that reads no parts
    join_parts: str | None = None
    # a list of parts made the text of one of its text parts ("first", "last"; "" where it has
    # none), whatever the template reads: a server that flattens a content as ``content[0].text``
    one_part: str | None = None
    options_as_strings: bool = False  # each option that is true or false sent as "true" or "false"
    # options given where the conversation leaves them unset, as pairs "name=true" or "name=false"
    # separated by spaces: a server that always writes its own default ("enable_thinking=false")
    options_set: str = ""
    # each tool as a server's model of an OpenAI tool dumps it: its fields the request left unset
    # written as null ("strict" in each function; with "defer", "defer_loading" in each tool too)
    tool_nulls: str | None = None
    # a list of parts made one string as a language writes a list: "javascript" (String(list):
    # "[object Object]" a part), "json" (JSON.stringify), "python" (str(list))
    stringify_parts: str | None = None
    # a first system message put before the next message's content, joined by this, for a template
    # that never reads a system message (alone, it is left out)
    fold_system: str | None = None
    fold_always: bool = False  # fold_system applied whatever the template does with a system message
    drop_trailing_newline: bool = False  # the prompt's last newline taken off
    strip_end: bool = False  # every space, tab and newline taken off the prompt's end
    strip_ends: bool = False  # the BOS text taken off the prompt's start and the EOS text off its end
    # the text written where a generation prompt is asked, after the prompt the template writes without one
    generation_prompt_as: str | None = None
    # a message without text written as a turn left open, its header alone with no end of turn: "empty"
    # a content "", "any" a null one or a list of parts too. A formatter that reads only role and content
    # and writes ``role + content + end`` only ``if content`` does this (FastChat's get_prompt).
    open_empty: str = ""
    # the whitespace the template writes before an empty content (of a message without tool calls)
    # left out: a format that writes the newline after a header together with the content
    unspaced_empty: bool = False
    # a message's reasoning (reasoning_content, thinking): given to the template (True), left out (False),
    # or written into its content in this form and left out ("<think>{reasoning}</think>{content}")
    reasoning: bool | str = True
    # each message rebuilt from its role and content alone (tool calls, tool_call_id, reasoning gone;
    # no content: an empty list), as a server that copies only those two keys does
    role_and_content: bool = False
    empty_tool_calls: bool = False  # each assistant message without tool calls given an empty list of them
    first_tool_call: bool = False  # each message's tool calls cut to the first (a client that reads ``tool_calls[0]``)
    parse_arguments: bool = False  # a tool call's arguments given as a string parsed into an object first
    quote_arguments: str = ""  # string arguments JSON-quoted again ("ascii", "raw"); object ones as str(dict) ("repr")
    sort_keys: bool = False  # every object of the messages and tools with its keys in sorted order
    # the whitespace the template writes just before each message's content written as this instead
    # (a hand-written format with one newline after a header where the template writes two)
    before_content: str | None = None
    # a conversation refused where a message's role is none of these, separated by spaces (a format
    # that knows "system user assistant" only); "" refuses no role
    roles_known: str = ""
    parts_refused: bool = False  # a conversation refused where a content is a list of parts (read as a string)
    add_bos: bool = False  # the vocabulary's BOS put before the prompt's ids by the tokenizer
    parse_special: bool = True  # special-token text in the prompt becomes its id

    def changed(self, **changes) -> ChatWay:
        render = {k: v for k, v in changes.items() if k in RenderSwitches.__dataclass_fields__}
        rest = {k: v for k, v in changes.items() if k not in render}
        return replaced(self, rest | ({"render": replaced(self.render, render)} if render else {}))


TRANSFORMERS_WAY = ChatWay(TRANSFORMERS)
# The fields of a way that do not change how it edits a conversation before rendering: a way's
# other fields key the edited conversation (ChatReference._prepared).
RENDERED_BY = {"render", "builtin", "chatml", "generation_prompt", "tools_ask_generation_prompt",
               "generation_prompt_stringified", "variables",
               "tool_use_template", "options_set", "generation_prompt_as", "drop_trailing_newline", "strip_end",
               "strip_ends", "add_bos", "parse_special"}
PREPARED_BY = operator.attrgetter(*(f.name for f in dataclasses.fields(ChatWay) if f.name not in RENDERED_BY))
EMPTY_CONVERSATION = "Cannot apply chat template to an empty conversation"  # (transformers' words)
BOTH_ASKED = "continue_final_message and add_generation_prompt are not compatible"  # (likewise)
SYSTEM_PROBE = "\ue001system probe\ue001"  # (private-use characters: no template writes them itself)
PARTS_PROBE = "\ue001parts probe\ue001"
LIST_WRITTEN = re.compile(r"""\{\s*['"]type['"]""")  # (a list of parts written as Python or JSON writes it)
OPEN_MARK = "\ue002"  # (where a turn left open stands, until its end of turn is taken off)
CONTENT_MARK = "\ue003"  # (where a message's content begins, until the whitespace before it is rewritten)
EMPTY_MARK = "\ue004"  # (where an empty content stands, until the whitespace before it is taken off)
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
        # (as the request asks, whatever reaches the template; tools written into the system message
        # are not asked of it)
        tool_use = conversation.tools is not None and way.tool_use_template and \
            way.tools_in_system is None and way.tools_in_user is None
        conversation, prefill = self._prepared(conversation, way)
        asks = asks or prefill is not None
        own_prompt = way.generation_prompt_as if asks else None  # (an engine's own generation prompt)
        asks = asks and own_prompt is None
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
            if way.continue_final in ("never", "prefill"):
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
                self._texts[key] = e
            except TokparityError as e:  # no template applies (named ones, none the default): as transformers raises
                self._texts[key] = TemplateRaised(str(e))
        found = self._texts[key]
        if isinstance(found, TemplateRaised):
            raise found
        if way.open_empty and OPEN_MARK in found:  # (a turn left open: its mark and the end of turn after it taken off)
            end = self.turn_end()
            found = re.sub(re.escape(OPEN_MARK) + (f"(?:{re.escape(end)})?" if end else ""), "", found)
        if way.before_content is not None:
            found = _respaced(found, way.before_content)
        if way.unspaced_empty:
            end = re.escape(self.turn_end().strip()) or "$"  # (a body of its own, such as tools, keeps it)
            found = re.sub(_AFTER_HEADER + "[ \t\n]*" + EMPTY_MARK + f"(?=[ \t\n]*(?:{end}|$))", "", found)
            found = found.replace(EMPTY_MARK, "")
        found += (own_prompt or "") + (prefill or "")
        if way.strip_ends:  # (a server that avoids a double BOS by cutting the template's own)
            bos, eos = (self.template.specials.get(name) or "" for name in ("bos_token", "eos_token"))
            found = found[len(bos):] if bos and found.startswith(bos) else found
            found = found[:-len(eos)] if eos and found.endswith(eos) else found
        if way.strip_end:
            found = found.rstrip(" \t\n")
        return found[:-1] if way.drop_trailing_newline and found.endswith("\n") else found

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
                self._prepared_by[key] = e
        found = self._prepared_by[key]
        if isinstance(found, TemplateRaised):
            raise found
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


def _without_text(message: dict, which: str) -> bool:
    """Whether ``message`` has no text as ``ChatWay.open_empty`` reads it: "empty", or "any"."""
    content = message.get("content")
    return content == "" or (which == "any" and not isinstance(content, str))


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


def _contents_edited(messages: list[dict], edit: Callable[[Any], Any], roles: str = "") -> list[dict]:
    """The messages with ``edit`` applied to each content they hold (a message without one stays);
    ``roles``: only those of messages of these roles, separated by spaces ("": of all)."""
    return [m | {"content": edit(m["content"])} if "content" in m and (not roles or m.get("role") in roles.split())
            else m for m in messages]


def edited(conversation: Conversation, way: ChatWay, takes_parts: bool = False, reads_system: bool = True
           ) -> Conversation:
    """The conversation as an engine that edits it before rendering sees it. ``takes_parts`` and
    ``reads_system`` say whether the template writes a list of parts, a system message: an engine
    that joins or folds them leaves such a template's alone."""
    messages = conversation.messages
    if way.history == "last-user":
        users = [k for k, m in enumerate(messages) if m.get("role") == "user"]
        start = users[-1] if users else 0
        messages = [m for k, m in enumerate(messages) if k >= start or m.get("role") == "system"]
    if way.drop_roles:
        messages = [m for m in messages if m.get("role") not in way.drop_roles.split()]
    if way.drop_final_assistant and messages and messages[-1].get("role") == "assistant" and \
            (way.drop_final_assistant == "any" or messages[-1].get("content") in ("", None, [])):
        messages = messages[:-1]
    if way.drop_empty:
        messages = [m for m in messages if m.get("content") not in ("", None, [])
                    or (m.get("tool_calls") and way.drop_empty == "plain")]
    if way.drop_null:
        messages = [m for m in messages if m.get("content") is not None]
    if (text := way.null_as) is not None:
        messages = [m | {"content": text} if m.get("content") is None else m for m in messages]
    if way.merge_turns is not None:
        messages = turns_merged(messages, way.merge_turns)
    if way.system_default is not None and not any(m.get("role") == "system" for m in messages):
        messages = [{"role": "system", "content": way.system_default}, *messages]
    if way.content_as_parts:
        messages = [m | {"content": [{"type": "text", "text": m["content"]}]} if isinstance(m.get("content"), str) else m
                    for m in messages]
    if way.stringify_parts is not None:
        messages = [m | {"content": parts_as_string(m["content"], way.stringify_parts)}
                    if isinstance(m.get("content"), list) else m for m in messages]
    if way.one_part is not None:
        messages = [m | {"content": one_part(m["content"], way.one_part)} if isinstance(m.get("content"), list) else m
                    for m in messages]
    if way.join_parts is not None and not takes_parts:
        messages = [m | {"content": parts_joined(m["content"], way.join_parts)} if isinstance(m.get("content"), list) else m
                    for m in messages]
    # (after the parts are joined, as llama.cpp does; ``reads_system`` is asked only where it matters)
    if way.fold_system is not None and (way.fold_always or not reads_system):
        messages = system_folded(messages, way.fold_system)
    if way.strip_content:
        roles = way.strip_content.split()
        messages = [m | {"content": m["content"].strip()}
                    if isinstance(m.get("content"), str) and ("*" in roles or m.get("role") in roles) else m
                    for m in messages]
    if (joiner := way.blank_lines_as) is not None:
        messages = _contents_edited(messages, lambda content: blank_lines_collapsed(content, joiner))
    if way.quote_results:
        messages = [result_quoted(m, way.quote_results) for m in messages]
    if (form := way.normalized) is not None:
        messages = _contents_edited(messages, lambda content: content_normalized(content, form))
    if way.escaped:
        quote = way.escaped == "html"
        messages = _contents_edited(messages, lambda content: each_text(content, lambda t: html.escape(t, quote=quote)))
    if (tab := way.tabs_as) is not None:
        messages = _contents_edited(messages, lambda content: each_text(content, lambda t: t.replace("\t", tab)))
    if way.formatted:
        messages = _contents_edited(messages, lambda content: each_text(content, formatted))
    if way.content_chars:
        messages = _contents_edited(messages, lambda content: characters_rewritten(content, way.content_chars),
                                    way.content_chars_roles)
    if way.reasoning is not True:
        messages = [reasoning_moved(m, way.reasoning or "") for m in messages]
    if way.role_and_content:
        messages = [{"role": m.get("role"), "content": [] if m.get("content") is None else m["content"]}
                    for m in messages]
    if way.empty_tool_calls:
        messages = [m | {"tool_calls": []} if m.get("role") == "assistant" and "tool_calls" not in m else m
                    for m in messages]
    if way.first_tool_call:
        messages = [m | {"tool_calls": m["tool_calls"][:1]} if isinstance(m.get("tool_calls"), list) else m
                    for m in messages]
    for asked, edit in ((way.parse_arguments, arguments_parsed),
                        (way.quote_arguments, lambda call: arguments_quoted(call, way.quote_arguments))):
        if asked:
            messages = [m | {"tool_calls": [edit(c) for c in m["tool_calls"]]}
                        if isinstance(m.get("tool_calls"), list) else m for m in messages]
    if way.open_empty:  # (the engine reads only role and content: a marked turn is its header alone)
        messages = [{"role": m.get("role"), "content": OPEN_MARK} if _without_text(m, way.open_empty) else m
                    for m in messages]
    if way.unspaced_empty:  # (marked: the whitespace before the mark is taken off once rendered)
        messages = [m | {"content": EMPTY_MARK} if m.get("content") == "" and not m.get("tool_calls") else m
                    for m in messages]
    if way.roles_as:
        renamed = dict(pair.split("=", 1) for pair in way.roles_as.split())
        messages = [m | {"role": renamed[m["role"]]} if m.get("role") in renamed else m for m in messages]
    tools = conversation.tools if way.tools else None
    if way.tools_in_system is not None and conversation.tools:
        messages, tools = tools_into_system(messages, conversation.tools, way.tools_in_system), None
    if way.tools_in_user is not None and conversation.tools:
        messages, tools = tools_into_user(messages, conversation.tools, way.tools_in_user, way.tools_user), None
    if way.no_tools_as_empty and tools is None:
        tools = []
    if way.tool_nulls is not None and tools:
        tools = [tool_dumped(t, way.tool_nulls) for t in tools]
    options = conversation.options
    if way.options_as_strings:
        options = {k: ("true" if v else "false") if isinstance(v, bool) and k not in OWN_OPTIONS else v
                   for k, v in options.items()}
    if way.sort_keys:
        messages, tools = keys_sorted(messages), keys_sorted(tools)
    if messages is conversation.messages and tools is conversation.tools and options is conversation.options:
        return conversation
    return dataclasses.replace(conversation, messages=messages, tools=tools, options=options)
