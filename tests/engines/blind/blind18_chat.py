"""blind18 chat engine: the Qwen 3 chat format written by hand in Python (no Jinja), text only.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md):

    cmd:{python} tests/engines/blind/blind18_chat.py {tokenizer_config} [--bug dump-call]

Written on 2026-12-03 by a helper blind, from a one-paragraph description of the bug and the Qwen 3
chat template in the zoo's tokenizer_config.json (read by eye to learn the format), without reading
any of tokparity's diagnosis code. The template is not rendered: the prompt is built by string
concatenation, branch for branch as the template does (ChatML turns; a system block with
`# Tools` and one `json.dumps(tool, ensure_ascii=False)` per line inside `<tools></tools>` when
tools are given; the last user query found scanning backwards past `<tool_response>` turns;
assistant turns after it wrapped in `<think>\\n…\\n</think>\\n\\n` when they are last or carry
reasoning (`reasoning_content`, else split out of a content holding `</think>`); tool calls as
`<tool_call>\\n{"name": "NAME", "arguments": ARGS}\\n</tool_call>`, ARGS the arguments string as
given or `json.dumps(obj, ensure_ascii=False)`; consecutive tool messages grouped in one user turn
of `<tool_response>` blocks; the generation prompt, with an empty think block when
`enable_thinking` is false). `{tokenizer_config}` is taken for the command line's sake only.

Messages are prepared as transformers prepares them: keys whose value is null dropped, the
reasoning read from `reasoning_content`, else `thinking`, else `reasoning`.

Where the template itself would fail (a user, system or assistant content that is not a string,
such as a list of parts, or missing; no messages at all) the engine answers `{"raised": ...}`, as
the template concatenating a string with a list raises. `continue_final_message` is done as
transformers does it: the whole conversation rendered, then cut right after the last occurrence of
the final message's content (stripped; its leading/trailing spacing kept where the prompt has it),
raised together with `add_generation_prompt`. A continued final content that is not a string, a
tool message whose content is not a string, and any op but `chat` are answered
`"status": "skipped"`.

Flags:

`--bug dump-call`: each tool call is written as `json.dumps(call["function"], ensure_ascii=False)`
between the same `<tool_call>\\n` and `\\n</tool_call>`: the whole function object dumped, so string
arguments end up JSON-quoted and escaped a second time (object arguments come out the same).
"""

from __future__ import annotations

import argparse
import json
import sys

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


class Raised(Exception):
    """The template would refuse this conversation."""


class Skipped(Exception):
    """This engine does not take this conversation."""


def tojson(x) -> str:
    return json.dumps(x, ensure_ascii=False)


def text_of(message: dict, what: str = "content") -> str:
    value = message.get(what)
    if not isinstance(value, str):
        raise Raised(f"TypeError: can only concatenate str (not {type(value).__name__!r}) to str ({message.get('role')} {what})")
    return value


def prepared(messages: list) -> list[dict]:
    out = []
    for m in messages:
        if not isinstance(m, dict):
            raise Skipped("a message that is not an object")
        m = {k: v for k, v in m.items() if v is not None}
        reasoning = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
        if reasoning is not None:
            m["reasoning_content"] = reasoning
        out.append(m)
    return out


def tool_call_text(call: dict, dump_call: bool) -> str:
    if not isinstance(call, dict):
        raise Skipped("a tool call that is not an object")
    if dump_call:
        return "<tool_call>\n" + tojson(call.get("function", call)) + "\n</tool_call>"
    fn = call.get("function") or call
    name = fn.get("name")
    if not isinstance(name, str):
        raise Skipped("a tool call without a string name")
    args = fn.get("arguments")
    if args is None:
        raise Skipped("a tool call without arguments")
    args = args if isinstance(args, str) else tojson(args)
    return '<tool_call>\n{"name": "' + name + '", "arguments": ' + args + "}\n</tool_call>"


def render(messages: list, tools, options: dict, dump_call: bool) -> str:
    messages = prepared(messages)
    if not messages:
        raise Raised("UndefinedError: messages[0] is undefined")
    out: list[str] = []
    first_is_system = messages[0].get("role") == "system"

    # The system block.
    if tools:
        out.append("<|im_start|>system\n")
        if first_is_system:
            out.append(text_of(messages[0]) + "\n\n")
        out.append("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                   "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
        for tool in tools:
            out.append("\n" + tojson(tool))
        out.append("\n</tools>\n\nFor each function call, return a json object with function name and "
                   "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                   '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n')
    elif first_is_system:
        out.append("<|im_start|>system\n" + text_of(messages[0]) + "<|im_end|>\n")

    # The last user query: scanning backwards, the first user message that is not a tool response.
    last_query = len(messages) - 1
    for index in range(len(messages) - 1, -1, -1):
        m = messages[index]
        if m.get("role") == "user":
            c = text_of(m)
            if not (c.startswith("<tool_response>") and c.endswith("</tool_response>")):
                last_query = index
                break

    n = len(messages)
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "user" or (role == "system" and i > 0):
            out.append("<|im_start|>" + role + "\n" + text_of(m) + "<|im_end|>\n")
        elif role == "assistant":
            content = text_of(m)
            reasoning = ""
            if "reasoning_content" in m:
                reasoning = m["reasoning_content"]
                if not isinstance(reasoning, str):
                    raise Skipped("reasoning that is not a string")
            elif "</think>" in content:
                reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
                content = content.split("</think>")[-1].lstrip("\n")
            if i > last_query and (i == n - 1 or reasoning):
                out.append("<|im_start|>assistant\n<think>\n" + reasoning.strip("\n") + "\n</think>\n\n"
                           + content.lstrip("\n"))
            else:
                out.append("<|im_start|>assistant\n" + content)
            calls = m.get("tool_calls")
            if calls:
                if not isinstance(calls, list):
                    raise Skipped("tool_calls that is not a list")
                for k, call in enumerate(calls):
                    if k > 0 or content:
                        out.append("\n")
                    out.append(tool_call_text(call, dump_call))
            out.append("<|im_end|>\n")
        elif role == "tool":
            content = m.get("content", "")
            if not isinstance(content, str):
                raise Skipped("a tool message whose content is not a string")
            if i == 0 or messages[i - 1].get("role") != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + content + "\n</tool_response>")
            if i == n - 1 or messages[i + 1].get("role") != "tool":
                out.append("<|im_end|>\n")
        # any other role (and the first system message, written above) writes nothing here

    if options.get("add_generation_prompt"):
        out.append("<|im_start|>assistant\n")
        if options.get("enable_thinking") is False:
            out.append("<think>\n\n</think>\n\n")
    return "".join(out)


def chat(request: dict, dump_call: bool) -> dict:
    options = request.get("options") or {}
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        return {"error": "tools that are not a list", "status": "skipped"}
    messages = request.get("messages") or []
    continued = bool(options.get("continue_final_message"))
    if continued:
        if options.get("add_generation_prompt"):
            return {"raised": "ValueError: continue_final_message and add_generation_prompt are not compatible"}
        if not messages or not isinstance(messages[-1], dict) or not isinstance(messages[-1].get("content"), str):
            return {"error": "continue_final_message on a final content that is not a string", "status": "skipped"}
    try:
        text = render(messages, tools, options, dump_call)
    except Raised as e:
        return {"raised": str(e)}
    except Skipped as e:
        return {"error": str(e), "status": "skipped"}
    if continued:  # as transformers: cut the prompt right after the final message's content
        final = messages[-1]["content"]
        if final.strip() not in text:
            return {"raised": "ValueError: continue_final_message is set but the final message does not appear in the prompt"}
        at = text.rindex(final.strip())
        if text[at:at + len(final.lstrip())] == final:
            text = text[:at + len(final.lstrip())]
        else:
            text = text[:at + len(final.strip())]
    return {"text": text}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_config", nargs="?")
    parser.add_argument("--bug", choices=["dump-call"], action="append", default=[])
    args = parser.parse_args()
    dump_call = "dump-call" in args.bug
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "chat":
            reply = chat(request, dump_call)
        else:
            reply = {"error": f"op {request.get('op')!r} is not done here", "status": "skipped"}
        sys.stdout.write(json.dumps({"id": request.get("id"), **reply}, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
