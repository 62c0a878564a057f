#!/usr/bin/env python3
"""A hand-written chat prompt builder, FastChat / llama-cpp-python style, as a tokparity `cmd:` engine.

    fastchat_style.py FORMAT TOKENIZER_JSON [--bug empty-open]

FORMAT is one of FORMATS below. No Jinja and no chat template is read: each format is a dict of
role headers and a separator, and the prompt is built by string concatenation, as FastChat's
`Conversation.get_prompt` and llama-cpp-python's `llama_chat_format.py` do. The prompt's text is
tokenized with Hugging Face `tokenizers` (no special tokens added, special-token text parsed).

--bug empty-open: the FastChat pattern

    if message: ret += role + message + sep
    else:       ret += role

i.e. a message whose content is empty (or missing/None) is written as its header alone, with no
separator, exactly as the open generation turn is written. Nothing else differs.

Protocol: one JSON request per line on stdin, one reply per line on stdout, in order.
"""
import argparse
import json
import sys

# ---------------------------------------------------------------------------------------------
# Formats: a dict per format, as FastChat's conv templates / llama-cpp-python's formatters.
#   bos          text written once at the start of the prompt
#   header       the role header, "{role}" replaced by the message's role
#   sep          written after every message's content
#   strip        the content is stripped of surrounding whitespace (Llama 3's `| trim`)
#   gen_always   the assistant header ends every prompt, whatever add_generation_prompt says
#                (the Llama 3 template of the zoo, an early revision, does this)
#   default_system  a system message written first when the conversation has none (Qwen2)
#   think        Qwen3's reasoning block rules (see qwen3_assistant below)
# ---------------------------------------------------------------------------------------------
FORMATS = {
    "llama-3": {
        "bos": "<|begin_of_text|>",
        "header": "<|start_header_id|>{role}<|end_header_id|>\n\n",
        "sep": "<|eot_id|>",
        "strip": True,
        "gen_always": True,
    },
    "chatml": {
        "bos": "",
        "header": "<|im_start|>{role}\n",
        "sep": "<|im_end|>\n",
    },
    # two ChatML dialects, for the models whose own templates add to plain ChatML
    "qwen2": {
        "bos": "",
        "header": "<|im_start|>{role}\n",
        "sep": "<|im_end|>\n",
        "default_system": "You are a helpful assistant",
    },
    "qwen3": {
        "bos": "",
        "header": "<|im_start|>{role}\n",
        "sep": "<|im_end|>\n",
        "think": True,
    },
}

BUGS = ("empty-open",)


class Skip(Exception):
    """This engine does not take this conversation (answered with "status": "skipped")."""


class Refuse(Exception):
    """The conversation is refused, as the model's template (or transformers) refuses it."""


def _reasoning(msg):
    # transformers aliases these three names for one field
    for key in ("reasoning_content", "thinking", "reasoning"):
        if msg.get(key) is not None:
            return msg[key]
    return None


def qwen3_assistant(msg, content, after_last_query, is_last):
    """Qwen3's assistant body: the reasoning block after the last user query."""
    reasoning = _reasoning(msg)
    if reasoning is None:
        reasoning = ""
        if "</think>" in content:
            reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
            content = content.split("</think>")[-1].lstrip("\n")
    if after_last_query and (is_last or reasoning):
        return "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
    return content


def build_prompt(fmt, messages, tools, options, bug=None):
    if tools:
        raise Skip("tools are not supported by this formatter")
    add_gen = bool(options.get("add_generation_prompt"))
    cont = bool(options.get("continue_final_message"))
    if cont and add_gen:
        raise Refuse("continue_final_message and add_generation_prompt are not compatible")
    if cont and not messages:
        raise Refuse("continue_final_message is set but the conversation is empty!")

    msgs = []
    for m in messages:
        if m.get("tool_calls") or m.get("role") == "tool":
            raise Skip("tool calls and tool results are not supported by this formatter")
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            raise Skip("content as a list of parts is not supported by this formatter")
        msgs.append(m)
    if cont and msgs[-1].get("content") is None:
        raise Refuse('continue_final_message is set but the final message has no "content" to continue!')

    header = fmt["header"]
    sep = fmt["sep"]
    ret = fmt.get("bos", "")
    if fmt.get("default_system") and (not msgs or msgs[0].get("role") != "system"):
        ret += header.format(role="system") + fmt["default_system"] + sep

    last_query = len(msgs) - 1
    if fmt.get("think"):
        for i in range(len(msgs) - 1, -1, -1):
            c = msgs[i].get("content") or ""
            if msgs[i].get("role") == "user" and not (c.startswith("<tool_response>") and c.endswith("</tool_response>")):
                last_query = i
                break

    for i, m in enumerate(msgs):
        role = m.get("role", "")
        raw = m.get("content")
        message = raw if raw is not None else ""
        if fmt.get("strip"):
            message = message.strip()
        if fmt.get("think") and role == "assistant":
            message = qwen3_assistant(m, message, i > last_query, i == len(msgs) - 1)
        is_final_continued = cont and i == len(msgs) - 1
        if is_final_continued:
            # as transformers cuts the rendered prompt after the final message's text
            ret += header.format(role=role) + message
            if fmt.get("strip"):
                ret = ret.rstrip()
            return ret
        if bug == "empty-open":
            # FastChat: `if message: ret += role + message + sep else: ret += role`
            if raw:
                ret += header.format(role=role) + message + sep
            else:
                ret += header.format(role=role)
        else:
            ret += header.format(role=role) + message + sep

    if add_gen or fmt.get("gen_always"):
        ret += header.format(role="assistant")
        if fmt.get("think") and options.get("enable_thinking") is False:
            ret += "<think>\n\n</think>\n\n"
    return ret


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("format", choices=sorted(FORMATS))
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS, default=None)
    args = ap.parse_args(argv)

    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(args.tokenizer_json)
    fmt = FORMATS[args.format]

    for line in sys.stdin:
        if not line.strip():
            continue
        req_id = None
        try:
            req = json.loads(line)
            req_id = req.get("id")
            op = req.get("op")
            if op == "chat":
                try:
                    text = build_prompt(fmt, req.get("messages") or [], req.get("tools"),
                                        req.get("options") or {}, bug=args.bug)
                except Skip as e:
                    reply = {"id": req_id, "error": str(e), "status": "skipped"}
                except Refuse as e:
                    reply = {"id": req_id, "raised": str(e)}
                else:
                    tok.encode_special_tokens = False  # special-token text in the prompt is the token
                    ids = tok.encode(text, add_special_tokens=False).ids
                    reply = {"id": req_id, "text": text, "ids": ids}
            elif op == "encode":
                tok.encode_special_tokens = not req.get("parse_special", False)
                ids = tok.encode(req["text"], add_special_tokens=bool(req.get("add_special", False))).ids
                reply = {"id": req_id, "ids": ids}
            else:  # decode, stream, pieces, anything else: not done here (no status: unsupported)
                reply = {"id": req_id, "error": f"op {op!r} not supported"}
        except Exception as e:  # one bad request is that request's failure, not the end of the run
            reply = {"id": req_id, "error": repr(e), "status": "error"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
