"""How a conversation becomes a prompt's ids, and the edits a way makes before rendering.

``ChatWay`` names every step a buggy engine may take otherwise than transformers'
``apply_chat_template``; its defaults are transformers'. ``edited`` makes a way's edits to a
conversation (tokparity.chat.message_edits holds each edit). tokparity.chat.reference renders
and encodes a conversation made any way.
"""

from __future__ import annotations

import dataclasses
import html
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tokparity.chat.conversation import OWN_OPTIONS, Conversation
from tokparity.chat.message_edits import (
    alternation_filled,
    arguments_parsed,
    arguments_quoted,
    blank_lines_collapsed,
    characters_rewritten,
    content_cut,
    content_normalized,
    each_text,
    formatted,
    history_flattened,
    keys_sorted,
    messages_dropped,
    one_part,
    parts_as_messages,
    parts_as_string,
    parts_joined,
    reasoning_moved,
    result_quoted,
    system_folded,
    systems_folded,
    systems_hoisted,
    text_added,
    tool_dumped,
    tools_into_system,
    tools_into_user,
    turns_merged,
)
from tokparity.chat.render import TRANSFORMERS, RenderSwitches, replaced
from tokparity.chat.tool_edits import edited as tools_edited


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
    # add_generation_prompt kept only where the last message's role is one of these ("user developer")
    generation_prompt_after: str = ""
    # the template's generation prompt written a second time after it (a builder that asks the
    # template for it, then appends the assistant's header itself)
    generation_prompt_twice: bool = False
    variables: bool = True  # the conversation's other options (enable_thinking, date_string) given to the template
    tool_use_template: bool = True  # a conversation with tools rendered by the model's "tool_use" template, if any
    # The roles whose string content is stripped of surrounding whitespace first ("*": every role;
    # "user": a chat box that trims what the user typed), separated by spaces
    strip_content: str = ""
    # the messages of these roles taken out first, separated by spaces ("system", "tool"); "assistant:plain"
    # takes out only those with no tool calls, "assistant:calls" only those with
    drop_roles: str = ""
    # the messages that these rules pick left out (message_edits.DROP_RULES' names, joined by "+")
    drop_where: str = ""
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
    # a text put before or after some contents first, as a JSON object (message_edits.text_added), read
    # off a backend's prompt: `` /no_think`` after the last user message in place of enable_thinking
    content_added: str = ""
    # a long content of one role cut short first, its start and end kept around a note, as a JSON object
    # (message_edits.content_cut), read off a backend's prompt: a tool's output cut to its last 2000 characters
    content_cut: str = ""
    # messages left out first: "last-user" keeps the system messages and those from the last user
    # message on (a builder that sends the last turn only)
    history: str = ""
    # some messages written as the text of one first, as a JSON object (message_edits.history_flattened),
    # read off a backend's prompt: the conversation sent as one user message of ``Human: …\nAI: …`` lines
    flatten_history: str = ""
    repeat_last_user: bool = False  # a last user message sent once more after itself (the question asked twice)
    # the messages after the leading system messages sent newest first: "all" of them, or "but-last" (the
    # last one, the current turn, kept last), as a chat memory read back newest first gives them
    reverse_history: str = ""
    system_default: str | None = None  # a system message with this content put first where there is none
    # a message of this role and content put after the last one (JSON [role, content]): an instruction
    # sent after the history, as SillyTavern's continue nudge and post-history instructions are
    append_as: str | None = None
    append_on_continue: bool = False  # that message put only where the request asks to continue the last one
    # messages with no content taken out first: "plain" those without tool calls, "any" those with too,
    # "system" the system messages
    drop_empty: str = ""
    drop_null: bool = False  # messages whose content is null taken out first, their tool calls too
    null_as: str | None = None  # a null (or missing) content sent as this string ("", or Python's "None")
    # a blank content (empty or only whitespace) sent as this text: a proxy that fills what a provider
    # would refuse as empty, read off a backend's prompt; of the roles ``blank_scope`` names ("": every
    # role), in a message with tool calls too where it names "calls"
    blank_as: str | None = None
    blank_scope: str = ""
    merge_turns: str | None = None  # consecutive messages of one role made one, their texts joined by this
    merge_roles: str = ""  # the roles merged so ("": every role; "system": SillyTavern's squash)
    merge_texts_only: bool = False  # an empty content adds nothing to a merge, and tool results stay apart
    # every system message made one, put first, their texts joined by this (where one is late, or several)
    hoist_systems: str | None = None
    # a user message with this content put where the roles would not alternate (message_edits.alternation_filled)
    fill_alternation: str | None = None
    fill_scope: str = ""  # where: "" as LiteLLM does, "runs" between two messages of one role, "users" two users
    tools: bool = True  # the conversation's tools given to the template
    # each tool's JSON edited first by these rules, a JSON list (tokparity.chat.tool_edits), read off a
    # backend's prompt: OpenAI's strict mode sets additionalProperties to false in every object schema
    tools_edited: str = ""
    # each tool given as its function alone ({"name", "description", "parameters"}), not as the
    # request's {"type": "function", "function": {...}}
    tools_unwrapped: bool = False
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
    # "prefill" (a last assistant message taken off, a generation prompt asked, its text appended: llama-server) |
    # "reply" (a request to continue the last message answered as a new reply: it is closed, a generation prompt asked)
    continue_final: str = "asked"
    content_as_parts: bool = False  # each string content sent as a list of one text part
    parts_as_messages: bool = False  # each text part of a list content made a message of its own, of the same role
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
    # each system message put before the next message's content, joined by this; one followed by a
    # system message, or last, made a user's (whatever the template does with a system message)
    fold_each_system: str | None = None
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
    # the whitespace the template writes after each end of turn (``<|eot_id|>``) written as this
    # instead (a hand-written format that writes "<|eot_id|>\n" where the template writes no newline)
    after_end: str | None = None
    # a conversation refused where a message's role is none of these, separated by spaces (a format
    # that knows "system user assistant" only); "" refuses no role
    roles_known: str = ""
    parts_refused: bool = False  # a conversation refused where a content is a list of parts (read as a string)
    # a conversation refused where its messages after a first system message are not user,
    # assistant, user, … in turn (a hand-written format's ``assert``, as Llama 2's template raises)
    alternation_refused: bool = False
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
               "generation_prompt_stringified", "generation_prompt_after", "generation_prompt_twice", "variables",
               "tool_use_template", "options_set", "generation_prompt_as", "drop_trailing_newline", "strip_end",
               "strip_ends", "add_bos", "parse_special", "after_end"}
PREPARED_BY = operator.attrgetter(*(f.name for f in dataclasses.fields(ChatWay) if f.name not in RENDERED_BY))

OPEN_MARK = "\ue002"  # (where a turn left open stands, until its end of turn is taken off)
EMPTY_MARK = "\ue004"  # (where an empty content stands, until the whitespace before it is taken off)


def is_blank(message: dict, scope: str = "") -> bool:
    """Whether a message's content is a string of whitespace alone (or empty), in a message of a
    role ``scope`` names (none named: every role), with no tool calls unless it names "calls"."""
    content, names = message.get("content"), scope.split()
    roles = [n for n in names if n != "calls"]
    return isinstance(content, str) and not content.strip() and (not message.get("tool_calls") or "calls" in names) \
        and (not roles or message.get("role") in roles)


def _dropped(message: dict, kinds: list[str]) -> bool:
    """Whether a message is of a kind taken out: its role, or its role and whether it has tool calls."""
    role = message.get("role")
    return role in kinds or f"{role}:{'calls' if message.get('tool_calls') else 'plain'}" in kinds


def _without_text(message: dict, which: str) -> bool:
    """Whether ``message`` has no text as ``ChatWay.open_empty`` reads it: "empty", or "any"."""
    content = message.get("content")
    return content == "" or (which == "any" and not isinstance(content, str))


def _contents_edited(messages: list[dict], edit: Callable[[Any], Any], roles: str = "") -> list[dict]:
    """The messages with ``edit`` applied to each content they hold (a message without one stays);
    ``roles``: only those of messages of these roles, separated by spaces ("": of all)."""
    return [m | {"content": edit(m["content"])} if "content" in m and (not roles or m.get("role") in roles.split())
            else m for m in messages]


def _same_items(edited: list | None, given: list | None) -> bool:
    """Whether a list an edit made holds the very items of the one it was given (none made anew)."""
    return edited is given or (edited is not None and given is not None and len(edited) == len(given)
                               and all(a is b for a, b in zip(edited, given)))


def edited(conversation: Conversation, way: ChatWay, takes_parts: bool = False, reads_system: bool = True
           ) -> Conversation:
    """The conversation as an engine that edits it before rendering sees it. ``takes_parts`` and
    ``reads_system`` say whether the template writes a list of parts, a system message: an engine
    that joins or folds them leaves such a template's alone."""
    messages, options = conversation.messages, conversation.options
    if way.flatten_history:
        messages = history_flattened(messages, way.flatten_history)
    if way.history == "last-user":
        users = [k for k, m in enumerate(messages) if m.get("role") == "user"]
        start = users[-1] if users else 0
        messages = [m for k, m in enumerate(messages) if k >= start or m.get("role") == "system"]
    if way.reverse_history:
        lead = next((k for k, m in enumerate(messages) if m.get("role") != "system"), len(messages))
        kept = 1 if way.reverse_history == "but-last" and len(messages) > lead else 0
        messages = [*messages[:lead], *messages[lead:len(messages) - kept][::-1], *messages[len(messages) - kept:]]
    if way.repeat_last_user and messages and messages[-1].get("role") == "user":
        messages = [*messages, messages[-1]]
    if way.drop_roles:
        messages = [m for m in messages if not _dropped(m, way.drop_roles.split())]
    if way.drop_where:
        messages = messages_dropped(messages, way.drop_where)
    if way.drop_final_assistant and messages and messages[-1].get("role") == "assistant" and \
            (way.drop_final_assistant == "any" or messages[-1].get("content") in ("", None, [])):
        messages = messages[:-1]
    if way.drop_empty:
        messages = [m for m in messages if m.get("content") not in ("", None, [])
                    or (m.get("tool_calls") and way.drop_empty == "plain")
                    or (way.drop_empty == "system" and m.get("role") != "system")]
    if way.drop_null:
        messages = [m for m in messages if m.get("content") is not None]
    if (text := way.null_as) is not None:
        messages = [m | {"content": text} if m.get("content") is None else m for m in messages]
    if (text := way.blank_as) is not None:
        messages = [m | {"content": text} if is_blank(m, way.blank_scope) else m for m in messages]
    if way.merge_turns is not None:
        messages = turns_merged(messages, way.merge_turns, way.merge_roles, way.merge_texts_only)
    if way.hoist_systems is not None:
        messages = systems_hoisted(messages, way.hoist_systems)
    if way.fill_alternation is not None:
        messages = alternation_filled(messages, way.fill_alternation, way.fill_scope)
    if way.system_default is not None and not any(m.get("role") == "system" for m in messages):
        messages = [{"role": "system", "content": way.system_default}, *messages]
    if way.append_as is not None and messages and (not way.append_on_continue or conversation.continue_final_message):
        role, text = json.loads(way.append_as)
        messages = [*messages, {"role": role, "content": text}]
    if way.content_as_parts:
        messages = [m | {"content": [{"type": "text", "text": m["content"]}]} if isinstance(m.get("content"), str) else m
                    for m in messages]
    if way.parts_as_messages:
        messages = parts_as_messages(messages)
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
    if way.fold_each_system is not None:
        messages = systems_folded(messages, way.fold_each_system)
    if way.strip_content:
        roles = way.strip_content.split()
        messages = [m | {"content": m["content"].strip()}
                    if isinstance(m.get("content"), str) and ("*" in roles or m.get("role") in roles) else m
                    for m in messages]
    if way.content_cut:
        messages = content_cut(messages, way.content_cut)
    if way.content_added:
        messages, options = text_added(messages, options, way.content_added)
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
    if way.tools_edited and tools:
        tools = tools_edited(tools, way.tools_edited)
    if way.no_tools_as_empty and tools is None:
        tools = []
    if way.tool_nulls is not None and tools:
        tools = [tool_dumped(t, way.tool_nulls) for t in tools]
    if way.tools_unwrapped and tools:  # (after a dump: a server dumps its models, then unwraps them)
        tools = [t["function"] if isinstance(t, dict) and isinstance(t.get("function"), dict) else t for t in tools]
    if way.options_as_strings:
        options = {k: ("true" if v else "false") if isinstance(v, bool) and k not in OWN_OPTIONS else v
                   for k, v in options.items()}
    if way.sort_keys:
        messages, tools = keys_sorted(messages), keys_sorted(tools)
    # (edits that changed nothing give the conversation itself back: its text is made once, not per way)
    if _same_items(messages, conversation.messages) and _same_items(tools, conversation.tools) and \
            options is conversation.options:
        return conversation
    return dataclasses.replace(conversation, messages=messages, tools=tools, options=options)
