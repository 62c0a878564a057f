"""blind19 chat engine: Qwen 3's chat format written by hand in Python (no Jinja), text only.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md):

    cmd:{python} tests/engines/blind/blind19_chat.py {tokenizer_config} [--bug newline-with-content]

Written on 2026-12-03 by a helper blind, from a one-paragraph description of the bug, the protocol
(docs/contracts.md, docs/guides/chat.md) and the Qwen 3 chat template in the zoo's
tokenizer_config.json (read by eye to learn the format), without reading any of tokparity's
diagnosis code, its reference chat renderer or its chat tests. It ran tokparity only to check that
its bug-free twin agrees and to count the bug's mismatches.

The template is not rendered: each turn is built as a header `<|im_start|>ROLE` and a body, joined
by string concatenation branch for branch as the template does:

- the system turn: the first message's content when it is a system message; with tools, that
  content and a blank line, then `# Tools`, one `json.dumps(tool, ensure_ascii=False)` per line
  inside `<tools></tools>` and the instructions for `<tool_call>`;
- user turns, and system turns after the first message, as `ROLE\\nCONTENT`;
- the last user query: scanning backwards, the first user message whose content is not wholly a
  `<tool_response>…</tool_response>`; assistant turns after it are written
  `<think>\\nREASONING\\n</think>\\n\\nCONTENT` when they are the last message or carry reasoning;
  the reasoning is `reasoning_content` (also read from `thinking` or `reasoning`), else split out
  of a content holding `</think>`;
- tool calls as `<tool_call>\\n{"name": "NAME", "arguments": ARGS}\\n</tool_call>`, one newline
  before each but the first, and before the first too when the content is not empty; ARGS is the
  string as given, or `json.dumps(obj, ensure_ascii=False)`;
- consecutive tool messages as one user turn of `\\n<tool_response>\\nCONTENT\\n</tool_response>`;
- messages of any other role write nothing;
- the generation prompt `<|im_start|>assistant\\n`, followed by `<think>\\n\\n</think>\\n\\n` when
  `enable_thinking` is false (the boolean).

Messages are read with their null-valued keys dropped. Where the template itself would fail (a
content of a user, system or assistant turn that is not a string, such as a list of parts, or
missing; no messages at all) the engine answers `{"raised": ...}`. `continue_final_message` is done
as transformers 5 does it: the final message's text (a string content, or the last text part of a
list) is marked at its end with `CONTINUE_FINAL_MESSAGE_TAG `, the conversation rendered, and the
prompt cut at the mark (and right-stripped where the mark's space is gone); it is refused together
with `add_generation_prompt`, on no messages, on a final message without content, and where the
prompt lacks the final text or the mark. A tool message or reasoning that is not a string, a tool
call without a string name or without arguments, and any op but `chat` are answered
`"status": "skipped"`.

Flags:

`--bug newline-with-content`: the newline after a message's header is written together with the
message's body, as `"\\n" + body`, only when the body is not empty (a formatter that writes
`header + ("\\n" + body if body else "")`, the newline taken as the body's separator). The body is
everything between the header and `<|im_end|>`: the content, its think block, its tool calls. So
a user, system or assistant message whose content is the empty string and that has no tool calls
(nor a think block) is written `<|im_start|>ROLE<|im_end|>\\n` instead of
`<|im_start|>ROLE\\n<|im_end|>\\n`; a continued final message whose content is empty ends the prompt
at `<|im_start|>ROLE`, without the newline. A tool-result turn, a system turn holding tools and the
generation prompt are written as the twin writes them.
"""

from __future__ import annotations

import argparse
import json
import sys

REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")

TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


class Refused(Exception):
    """The template would raise on this conversation."""


class NotTaken(Exception):
    """This engine does not take this conversation."""


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def string_content(message: dict, key: str = "content") -> str:
    value = message.get(key)
    if isinstance(value, str):
        return value
    raise Refused(
        f"TypeError: can only concatenate str (not {type(value).__name__!r}) to str "
        f"({message.get('role')!r} message's {key})"
    )


def clean(messages) -> list[dict]:
    if not isinstance(messages, list):
        raise NotTaken("messages that are not a list")
    out = []
    for message in messages:
        if not isinstance(message, dict):
            raise NotTaken("a message that is not an object")
        message = {k: v for k, v in message.items() if v is not None}
        for key in REASONING_KEYS:
            if key in message:
                message["reasoning_content"] = message[key]
                break
        out.append(message)
    return out


class Formatter:
    def __init__(self, newline_with_content: bool) -> None:
        self.newline_with_content = newline_with_content

    def turn(self, role: str, body: str) -> str:
        """One whole turn: header, newline, body, end."""
        if self.newline_with_content:
            # A continued final message's body carries transformers' mark; its own text may be empty.
            return "<|im_start|>" + role + ("\n" + body if body and body != TAG else body) + "<|im_end|>\n"
        return "<|im_start|>" + role + "\n" + body + "<|im_end|>\n"

    @staticmethod
    def tool_call(call) -> str:
        if not isinstance(call, dict):
            raise NotTaken("a tool call that is not an object")
        function = call.get("function") or call
        if not isinstance(function, dict):
            raise NotTaken("a tool call's function that is not an object")
        name = function.get("name")
        if not isinstance(name, str):
            raise NotTaken("a tool call without a string name")
        if "arguments" not in function or function["arguments"] is None:
            raise NotTaken("a tool call without arguments")
        arguments = function["arguments"]
        if not isinstance(arguments, str):
            arguments = dumps(arguments)
        return '<tool_call>\n{"name": "' + name + '", "arguments": ' + arguments + "}\n</tool_call>"

    def assistant_body(self, message: dict, index: int, last: bool, last_query: int) -> str:
        content = string_content(message) if "reasoning_content" in message else None
        if "reasoning_content" in message:
            reasoning = message["reasoning_content"]
            if not isinstance(reasoning, str):
                raise NotTaken("reasoning that is not a string")
        else:
            raw = message.get("content")
            if isinstance(raw, str) and "</think>" in raw:
                content = raw.split("</think>")[-1].lstrip("\n")
                reasoning = raw.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
            else:
                content = string_content(message)
                reasoning = ""
        if index > last_query and (last or reasoning):
            body = "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
        else:
            body = content
        calls = message.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise NotTaken("tool_calls that are not a list")
            for k, call in enumerate(calls):
                if k > 0 or content:
                    body += "\n"
                body += self.tool_call(call)
        return body

    def render(self, messages: list[dict], tools, options: dict) -> str:
        if not messages:
            raise Refused("UndefinedError: 'list object' has no attribute '0' (no messages)")
        n = len(messages)
        parts: list[str] = []
        system_first = messages[0].get("role") == "system"

        if tools:
            body = string_content(messages[0]) + "\n\n" if system_first else ""
            body += TOOLS_HEAD + "".join("\n" + dumps(tool) for tool in tools) + TOOLS_TAIL
            parts.append(self.turn("system", body))
        elif system_first:
            parts.append(self.turn("system", string_content(messages[0])))

        last_query = n - 1
        for index in range(n - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            text = message.get("content")
            if not isinstance(text, str):
                raise Refused("UndefinedError: the user content has no attribute 'startswith'")
            if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")):
                last_query = index
                break

        for index, message in enumerate(messages):
            role = message.get("role")
            last = index == n - 1
            if role == "user" or (role == "system" and index > 0):
                parts.append(self.turn(role, string_content(message)))
            elif role == "assistant":
                parts.append(self.turn("assistant", self.assistant_body(message, index, last, last_query)))
            elif role == "tool":
                content = message.get("content", "")
                if not isinstance(content, str):
                    raise NotTaken("a tool message whose content is not a string")
                if index == 0 or messages[index - 1].get("role") != "tool":
                    parts.append("<|im_start|>user")
                parts.append("\n<tool_response>\n" + content + "\n</tool_response>")
                if last or messages[index + 1].get("role") != "tool":
                    parts.append("<|im_end|>\n")

        if options.get("add_generation_prompt"):
            parts.append("<|im_start|>assistant\n")
            if options.get("enable_thinking") is False:
                parts.append("<think>\n\n</think>\n\n")
        return "".join(parts)


TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def tag_final(messages: list[dict]) -> str:
    """Mark the end of the final message's text with TAG, as transformers does; return that text."""
    if not messages:
        raise Refused("ValueError: continue_final_message is set but the conversation is empty!")
    final = messages[-1]
    content = final.get("content")
    if content is None:
        raise Refused('ValueError: continue_final_message is set but the final message has no "content" to continue!')
    if isinstance(content, str):
        final["content"] = content + TAG
        return content
    if not isinstance(content, list):
        raise NotTaken("a continued final content that is neither a string nor a list")
    content = [dict(part) if isinstance(part, dict) else part for part in content]
    final["content"] = content
    for part in reversed(content):
        if isinstance(part, dict) and "text" in part:
            text = part["text"]
            if not isinstance(text, str):
                raise NotTaken("a continued text part that is not a string")
            part["text"] = text + TAG
            return text
    raise Refused("ValueError: continue_final_message is set but we could not find any text to continue in the final message!")


def continued(text: str, final: str) -> str:
    """Cut the prompt where the final message's text ends, as transformers does."""
    if final.strip() not in text or TAG.strip() not in text:
        raise Refused("ValueError: continue_final_message is set but the final message does not appear in the chat")
    at = text.rindex(TAG.strip())
    if text[at:at + len(TAG)] == TAG:
        return text[:at]
    return text[:at].rstrip()


def chat(request: dict, formatter: Formatter) -> dict:
    options = request.get("options") or {}
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        return {"error": "tools that are not a list", "status": "skipped"}
    try:
        messages = clean(request.get("messages") or [])
        go_on = bool(options.get("continue_final_message"))
        if go_on:
            if options.get("add_generation_prompt"):
                raise Refused("ValueError: continue_final_message and add_generation_prompt are not compatible")
            final = tag_final(messages)
        text = formatter.render(messages, tools, options)
        if go_on:
            text = continued(text, final)
    except Refused as e:
        return {"raised": str(e)}
    except NotTaken as e:
        return {"error": str(e), "status": "skipped"}
    return {"text": text}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_config", nargs="?", help="taken for the command line's sake only")
    parser.add_argument("--bug", choices=["newline-with-content"], action="append", default=[])
    args = parser.parse_args()
    formatter = Formatter(newline_with_content="newline-with-content" in args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "chat":
            try:
                reply = chat(request, formatter)
            except Exception as e:  # a bug of this engine: say so rather than pass
                reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        else:
            reply = {"error": f"op {request.get('op')!r} is not done here", "status": "skipped"}
        sys.stdout.write(json.dumps({"id": request.get("id"), **reply}, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
