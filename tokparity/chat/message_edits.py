"""The edits a way makes to a conversation's messages before rendering.

tokparity.chat.way's ``edited`` applies them. Each takes the messages, or one of their
values, and gives new ones. They merge turns, join parts or write a list as a language does, fold
a system message into the next, parse or quote tool calls' arguments, quote tool results,
normalize or collapse text, write tools into the system or a user message, and sort keys.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

from tokparity.chat.render import REASONING_FIELDS

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
CONTENT = "\ue010"  # (in a text added to a content: the content itself, ``text_added``)
BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")  # line breaks with only spaces or tabs between them


def turns_merged(messages: list[dict], joiner: str, roles: str = "", texts_only: bool = False) -> list[dict]:
    """Consecutive messages of one role made one, their text contents joined by ``joiner``, of the
    ``roles`` named ("": every role). A message with tool calls or a content that is not a string
    stays as it is. ``texts_only``: an empty content adds nothing, and a tool result stays apart
    too (LangChain's ``merge_message_runs``)."""
    out: list[dict] = []
    for m in messages:
        last = out[-1] if out else None
        if last is not None and last.get("role") == m.get("role") and isinstance(last.get("content"), str) \
                and isinstance(m.get("content"), str) and not last.get("tool_calls") and not m.get("tool_calls") \
                and (not roles or m.get("role") in roles.split()) and not (texts_only and m.get("role") == "tool"):
            texts = (last["content"], m["content"])
            out[-1] = last | {"content": joiner.join(t for t in texts if t or not texts_only)}
        else:
            out.append(m)
    return out if len(out) < len(messages) else messages


def systems_hoisted(messages: list[dict], joiner: str) -> list[dict]:
    """Every system message taken out, their texts joined by ``joiner`` into one system message put
    first (the first one's other keys kept). A list content gives its text parts, joined alike; an
    empty text adds nothing. One system message already first stays where it is."""
    systems = [m for m in messages if m.get("role") == "system"]
    if not systems or (len(systems) == 1 and messages[0] is systems[0]):
        return messages
    texts = [joiner.join(part_texts(c)) if isinstance(c := m.get("content"), list) else "" if c is None else str(c)
             for m in systems]
    return [systems[0] | {"content": joiner.join(t for t in texts if t)},
            *(m for m in messages if m.get("role") != "system")]


def alternation_filled(messages: list[dict], text: str, scope: str = "") -> list[dict]:
    """A user message with ``text`` put before an assistant message that opens the conversation,
    between two assistant turns, and after an assistant message that ends it, so that the roles
    alternate (LiteLLM's ``ensure_alternating_roles``). A tool result and an assistant message that
    calls tools are no turns: the search for the turn before steps over them. Scope "runs": before
    each message whose role is the one before's, a message of the other role with ``text`` (an
    assistant's after a user's, else a user's: aider's ``ensure_alternating_roles``). Scope
    "users": between two user messages in a row only, an assistant's (LiteLLM's
    ``_insert_assistant_continue_message``)."""
    if scope in ("runs", "users"):
        runs: list[dict] = []
        for k, m in enumerate(messages):
            if k and m.get("role") == messages[k - 1].get("role") and (scope == "runs" or m.get("role") == "user"):
                runs.append({"role": "assistant" if m.get("role") == "user" else "user", "content": text})
            runs.append(m)
        return runs
    def turn(m: dict) -> bool:
        return m.get("role") != "tool" and not (m.get("role") == "assistant" and m.get("tool_calls"))

    out: list[dict] = []
    for m in messages:
        before = next((p.get("role") for p in reversed(out) if turn(p)), None)
        if m.get("role") == "assistant" and (not out or turn(m) and "assistant" in (out[-1].get("role"), before)):
            out.append({"role": "user", "content": text})
        out.append(m)
    return out + [{"role": "user", "content": text}] if out and out[-1].get("role") == "assistant" else out


def parts_as_messages(messages: list[dict]) -> list[dict]:
    """Each text part of a content given as a list made a message of its own, of the same role. The
    message's other keys (tool calls, reasoning) go with the last. A message whose list has no text
    part is left out."""
    if not any(isinstance(m.get("content"), list) for m in messages):
        return messages
    out: list[dict] = []
    for m in messages:
        if not isinstance(m.get("content"), list):
            out.append(m)
            continue
        texts = part_texts(m["content"])
        out += [{"role": m.get("role"), "content": text} for text in texts[:-1]]
        out += [m | {"content": texts[-1]}] if texts else []
    return out


def part_texts(content: list) -> list[str]:
    """The texts of a list's text parts, in order; other parts left out."""
    return [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]


def parts_joined(content: list, joiner: str) -> str:
    """A list of parts as one string: the text parts' texts, joined."""
    return joiner.join(part_texts(content))


def one_part(content: list, which: str) -> str:
    """The text of a list's first or last text part ("" where it has none)."""
    texts = part_texts(content)
    return (texts[0] if which == "first" else texts[-1]) if texts else ""


def tool_dumped(tool: dict, nulls: str) -> dict:
    """A tool as a server's model of an OpenAI tool dumps it: the fields it left unset as null."""
    if not isinstance(tool, dict) or not isinstance(tool.get("function"), dict):
        return tool
    function = tool["function"]
    dumped = {"name": function.get("name"), "description": function.get("description"),
              "parameters": function.get("parameters"), "strict": function.get("strict")} | function
    return tool | {"function": dumped} | ({"defer_loading": tool.get("defer_loading")} if nulls == "defer" else {})


def parts_as_string(content: list, language: str) -> str:
    """A list of parts as a language writes a list it is given where it wants a string."""
    if language == "javascript":
        return js_string(content)
    if language == "json":  # (JSON.stringify: no spaces, a lone surrogate escaped)
        return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}",
                                  json.dumps(content, ensure_ascii=False, separators=(",", ":")))
    return str(content)


def js_string(value: object) -> str:
    """JavaScript's ``String(value)`` of a JSON value: an array's items joined by commas (nested
    arrays too, null as nothing), an object ``[object Object]``, ``true``, ``1`` for 1.0."""
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def system_folded(messages: list[dict], joiner: str) -> list[dict]:
    """A first system message put before the next message's string content; alone, left out."""
    if not messages or messages[0].get("role") != "system":
        return messages
    if len(messages) == 1:
        return []
    system, after = messages[0].get("content"), messages[1].get("content")
    if not isinstance(system, str) or not isinstance(after, str):
        return messages
    return [messages[1] | {"content": system + joiner + after}, *messages[2:]]


def systems_folded(messages: list[dict], joiner: str) -> list[dict]:
    """Each system message put before the string content of a user or assistant message that
    follows it, joined by ``joiner``. One followed by a system message, or last, becomes a user's.
    A system message followed by anything else stays as it is (a content that is not a string too)."""
    if not any(m.get("role") == "system" for m in messages):
        return messages
    out: list[dict] = []
    carried: str | None = None  # (the system text the message after it takes)
    for k, m in enumerate(messages):
        if carried is not None:
            m = m | {"content": carried + joiner + m["content"]}
            carried = None
        after = messages[k + 1] if k + 1 < len(messages) else None
        if m.get("role") != "system" or not isinstance(m.get("content"), str):
            out.append(m)
        elif after is None or after.get("role") == "system":
            out.append(m | {"role": "user"})
        elif after.get("role") in ("user", "assistant") and isinstance(after.get("content"), str):
            carried = m["content"]
        else:
            out.append(m)
    return out


def arguments_parsed(call: Any) -> Any:
    """A tool call whose ``function.arguments`` is a string of a JSON object, with the object."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return call
    try:
        parsed = json.loads(function["arguments"])
    except ValueError:
        return call
    return call | {"function": function | {"arguments": parsed}} if isinstance(parsed, dict) else call


def arguments_quoted(call: Any, how: str) -> Any:
    """A tool call whose ``function.arguments`` is a string, with that string as JSON writes it,
    quoted and escaped, as an engine that dumps the whole call writes it. ``how`` "ascii" writes
    non-ASCII as ``\\u`` escapes (``json.dumps``'s default), "raw" as it is. With "repr", a call whose
    arguments are an object gets them as the string Python's ``str`` makes of a dict."""
    function = call.get("function") if isinstance(call, dict) else None
    if how == "repr":
        if not isinstance(function, dict) or not isinstance(function.get("arguments"), dict):
            return call
        return call | {"function": function | {"arguments": str(function["arguments"])}}
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return call
    return call | {"function": function | {"arguments": json.dumps(function["arguments"], ensure_ascii=how == "ascii")}}


def keys_sorted(value: Any) -> Any:
    """``value`` with the keys of each of its objects in sorted order, as a sorted map keeps them."""
    if isinstance(value, dict):
        return {k: keys_sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [keys_sorted(v) for v in value]
    return value


def result_quoted(message: dict, how: str) -> dict:
    """A tool message whose content is a string, with that string quoted as JSON. ``how`` is
    "ascii" or "raw" (as ``arguments_quoted`` takes it), or "wrapped": the string as the value of
    ``{"result": ...}``. An engine that serialises every tool result does this."""
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, str):
        return message
    if how == "wrapped":
        return message | {"content": json.dumps({"result": content})}
    return message | {"content": json.dumps(content, ensure_ascii=how == "ascii")}


def reasoning_moved(message: dict, form: str) -> dict:
    """A message without its reasoning (``reasoning_content``, ``thinking``). With a ``form``
    (``"<think>{reasoning}</think>{content}"``), an assistant's reasoning is first written into its
    string content in that form. A client that keeps a model's thoughts in the history does this."""
    reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k)), None)
    out = {k: v for k, v in message.items() if k not in REASONING_FIELDS}
    content = message.get("content")
    if not form or message.get("role") != "assistant" or not isinstance(reasoning, str) or \
            not isinstance(content, str | None):
        return out
    head, _, tail = form.partition("{reasoning}")
    between, _, end = tail.partition("{content}")
    return out | {"content": head + reasoning + between + (content or "") + end}


def each_text(content: Any, edit: Callable[[str], str]) -> Any:
    """A content with ``edit`` applied to it if it is a string, else to each text part's text."""
    if isinstance(content, str):
        return edit(content)
    if isinstance(content, list):
        return [part | {"text": edit(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str) else part for part in content]
    return content


def content_normalized(content: Any, form: str) -> Any:
    """A content put through the Unicode normalization ``form`` ("NFC", "NFKC"...)."""
    return each_text(content, lambda text: unicodedata.normalize(form, text))  # type: ignore[arg-type]


def characters_rewritten(content: Any, table: str) -> Any:
    """A content with each character or word the JSON object ``table`` holds written as its text
    (``{"&": "&amp;"}``, ``{"{{user}}": "You"}``), all at once: a text written for one is not
    rewritten again. A longer word is taken before a shorter one it starts with."""
    pairs = json.loads(table)
    if all(len(a) == 1 for a in pairs):
        mapping = {ord(a): b for a, b in pairs.items()}
        return each_text(content, lambda text: text.translate(mapping))
    # (a word that starts or ends with a letter or digit is taken only where it is not part of a longer word)
    words = re.compile("|".join(("(?<!\\w)" if a[0].isalnum() else "") + re.escape(a) + ("(?!\\w)" if a[-1].isalnum() else "")
                                for a in sorted(pairs, key=len, reverse=True)))
    return each_text(content, lambda text: words.sub(lambda m: pairs[m.group()], text))


def formatted(text: str) -> str:
    """A text as Python's ``str.format()`` with no arguments leaves it: ``{{`` and ``}}`` each one
    brace. A text with a field (``{name}``) makes it fail: such an engine gives no prompt."""
    try:
        return text.format()
    except (KeyError, IndexError, ValueError) as e:
        raise NotImplementedError(f"str.format() fails on this content: {e!r}") from None


def blank_lines_collapsed(content: Any, joiner: str) -> Any:
    r"""A content whose runs of line breaks with blank lines between are each ``joiner``. A joiner
    of "\n" leaves no blank line; "\n\n" leaves one at most."""
    return each_text(content, lambda text: BLANK_LINES.sub(joiner, text))


TOOLS_MARK = "\ue005"  # (around a form's name, where the tools' JSON goes in a text: ``tools_into_system``)
# The ways an engine writes its tools as JSON in a text, by name
TOOLS_JSON = {"ascii": lambda tools: json.dumps(tools), "raw": lambda tools: json.dumps(tools, ensure_ascii=False),
              "compact": lambda tools: json.dumps(tools, ensure_ascii=False, separators=(",", ":")),
              "indented": lambda tools: json.dumps(tools, ensure_ascii=False, indent=2),
              "indented_ascii": lambda tools: json.dumps(tools, indent=2),
              "lines": lambda tools: "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)}
# (the forms' names only: a content may hold the mark around any other word)
TOOLS_WRITTEN = re.compile(f"{TOOLS_MARK}({'|'.join(TOOLS_JSON)}){TOOLS_MARK}")


def tools_written(tools: list, text: str) -> str:
    """``text`` with each mark of a form replaced by the tools' JSON written in that form."""
    return TOOLS_WRITTEN.sub(lambda m: TOOLS_JSON[m[1]](tools), text)


def tools_into_system(messages: list[dict], tools: list, text: str) -> list[dict]:
    """The messages with ``text`` (the tools' JSON where it marks it) after the first system
    message's content; or, with no system message first, a new one of that text less its leading
    whitespace. A builder for a template without tools does this."""
    written = tools_written(tools, text)
    first = messages[0] if messages else {}
    if first.get("role") == "system" and isinstance(first.get("content"), str):
        return [first | {"content": first["content"] + written}, *messages[1:]]
    return [{"role": "system", "content": written.lstrip()}, *messages]


def tools_into_user(messages: list[dict], tools: list, text: str, which: str) -> list[dict]:
    """The messages with ``text`` (the tools' JSON where it marks it) after the content of the
    ``which`` ("first" or "last") user message. A list of parts gets it after its last text part,
    or as a new text part. A null or missing content becomes the text alone. With no user message,
    the messages stay as they are. An agent framework that writes the tools into the prompt does this."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return messages
    at = users[0] if which == "first" else users[-1]
    message, written = messages[at], tools_written(tools, text)
    content = message.get("content")
    if isinstance(content, str):
        content += written
    elif isinstance(content, list):
        texts = [k for k, p in enumerate(content) if isinstance(p, dict) and isinstance(p.get("text"), str)]
        content = [*content, {"type": "text", "text": written}] if not texts else \
            [p | {"text": p["text"] + written} if k == texts[-1] else p for k, p in enumerate(content)]
    else:
        content = written
    return [*messages[:at], message | {"content": content}, *messages[at + 1:]]


def text_added(messages: list[dict], options: dict, value: str) -> tuple[list[dict], dict]:
    """The messages with a text put before or after the contents that ``value`` picks, and the
    options the template gets (``ChatWay.content_added``). ``value`` is a JSON object: ``role``
    ("" for any), ``which`` ("each", "first" or "last" of that role), ``before`` and ``after``.
    With ``when`` (an option's name and value), the option is never passed on, and the text is
    added only where the option has that value. Qwen 3's soft switch is so: `` /no_think`` after
    the last user message where ``enable_thinking`` is false. With ``parts``, a list of parts gets
    the text in its first or last text part; else it stays as it is, as does a content that is not
    text. ``CONTENT`` in a text stands for the content (or the text part) itself."""
    spec = json.loads(value)
    if (when := spec.get("when")) is not None:
        name, wanted = when
        adds = name in options and options[name] == wanted and type(options[name]) is type(wanted)
        options = {k: v for k, v in options.items() if k != name}
        if not adds:
            return messages, options
    of_role = [k for k, m in enumerate(messages) if not spec["role"] or m.get("role") == spec["role"]]
    picked = set(of_role[:1] if spec["which"] == "first" else of_role[-1:] if spec["which"] == "last" else of_role)
    before, after = spec["before"], spec["after"]

    def around(text: str, first: bool = True, last: bool = True) -> str:
        return (before.replace(CONTENT, text) if first else "") + text + (after.replace(CONTENT, text) if last else "")

    def added(content: Any) -> Any:
        if isinstance(content, str):
            return around(content)
        texts = [k for k, p in enumerate(content) if isinstance(p, dict) and isinstance(p.get("text"), str)] \
            if isinstance(content, list) else []
        if not texts or not spec.get("parts"):
            return content
        return [p | {"text": around(p["text"], k == texts[0], k == texts[-1])}
                if k in (texts[0], texts[-1]) else p for k, p in enumerate(content)]

    return [m | {"content": added(m.get("content"))} if k in picked and "content" in m else m
            for k, m in enumerate(messages)], options


def content_cut(messages: list[dict], value: str) -> list[dict]:
    """The messages with each string content of the role ``value`` names cut short, where it is
    longer than the characters it keeps (``ChatWay.content_cut``). ``value`` is a JSON object:
    ``role``, ``head`` and ``tail`` (the characters kept at the start and the end), ``note`` (the
    text put between them). An agent framework cuts a tool's long output so."""
    spec = json.loads(value)
    head, tail, note = spec["head"], spec["tail"], spec["note"]

    def cut(text: str) -> str:
        return text[:head] + note + (text[-tail:] if tail else "") if len(text) > head + tail else text

    return [m | {"content": cut(m["content"])} if m.get("role") == spec["role"] and isinstance(m.get("content"), str)
            else m for m in messages]


HISTORY_GROUPS = ("all", "history", "pairs")  # (the messages a builder writes as the text of one)


def history_groups(messages: list[dict], mode: str) -> list[tuple[bool, list[int]]]:
    """The messages, in order, as groups, each with whether it is written as one message's text.
    ``all``: every message, in one group; ``history``: the messages after the leading system ones
    and before a last user message; ``pairs``: each user message of that history, with the
    assistant message right after it. The other messages are kept as they are."""
    if mode == "all":
        return [(True, list(range(len(messages))))]
    lead = next((k for k, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    last = len(messages) - 1 if len(messages) > lead and messages[-1].get("role") == "user" else len(messages)
    groups = [(False, [k]) for k in range(lead)]
    if mode == "history":
        groups += [(True, list(range(lead, last)))] if last > lead else []
    else:
        k = lead
        while k < last:
            paired = messages[k].get("role") == "user" and k + 1 < last and messages[k + 1].get("role") == "assistant"
            groups.append((messages[k].get("role") == "user", [k, k + 1] if paired else [k]))
            k += 2 if paired else 1
    return groups + [(False, [k]) for k in range(last, len(messages))]


def history_flattened(messages: list[dict], value: str) -> list[dict]:
    """The messages with some written as the text of one (``ChatWay.flatten_history``): a chat
    model driven through a text prompt (``Human: …\nAI: …``). ``value`` is a JSON object: ``mode``
    (``HISTORY_GROUPS``), ``role`` (the role of the message a group becomes), ``head`` (its text's
    start), ``labels`` (each role's text before its content), ``sep`` (between two messages) and
    ``end`` (after the last); a separator or an end no row showed is null. Where a content is not a
    string, or a role has no label, this way makes no prompt. A message's tool calls are lost."""
    spec = json.loads(value)
    labels = spec["labels"]
    out = []
    for written, group in history_groups(messages, spec["mode"]):
        if not written:
            out += [messages[k] for k in group]
            continue
        texts = []
        for k in group:
            m = messages[k]
            if not isinstance(m.get("content"), str) or m.get("role") not in labels:
                raise NotImplementedError("a message this builder cannot write as text")
            texts.append(labels[m["role"]] + m["content"])  # (a message's tool calls are lost: text holds none)
        if len(texts) > 1 and spec["sep"] is None:
            raise NotImplementedError("messages joined by a separator no row showed")
        out.append({"role": spec["role"], "content": spec["head"] + (spec["sep"] or "").join(texts) + (spec["end"] or "")})
    return out


# The rules by which a builder leaves messages out (ChatWay.drop_where), each read on the conversation
# as it came, and said in words
DROP_RULES = {"repeat": "each message whose role is the one before's",
              "later-system": "each system message after the first",
              "before-first-user": "the messages before the first user message, except a first system message",
              "after-last-user": "the messages after the last user message or tool result"}


def messages_dropped(messages: list[dict], rules: str) -> list[dict]:
    """The messages with those that any of ``rules`` (DROP_RULES' names, joined by "+") picks left
    out: a builder that keeps the first of a run of one role (nodetool's ``ensure_alternating_roles``),
    the first system message alone, or the turns between a first user message and a last one
    (LangChain's ``trim_messages(start_on="human", end_on=("human", "tool"))``)."""
    roles = [m.get("role") for m in messages]
    users = [k for k, r in enumerate(roles) if r == "user"]
    ends = [k for k, r in enumerate(roles) if r in ("user", "tool")]
    picks = {"repeat": lambda k: k > 0 and roles[k] == roles[k - 1],
             "later-system": lambda k: roles[k] == "system" and "system" in roles[:k],
             "before-first-user": lambda k: (k > 0 or roles[0] != "system") and (not users or k < users[0]),
             "after-last-user": lambda k: bool(ends) and k > ends[-1]}
    chosen = [picks[rule] for rule in rules.split("+") if rule]
    return [m for k, m in enumerate(messages) if not any(pick(k) for pick in chosen)]
