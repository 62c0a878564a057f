"""A hand-written Qwen3 chat format a newcomer wrote on 2026-11-30 from the README and docs only
(docs/guides/chat.md), with one bug of their choice: the generation prompt's assistant header
written without its newline (``Engine``; ``Twin`` writes it). It refuses tools, parts, tool messages,
reasoning and ``continue_final_message`` (not tried). tests/chat/test_newcomer_chat.py."""


class Engine:
    header = "<|im_start|>assistant"  # the bug: no newline after the generation prompt's header

    def __init__(self, files):
        pass

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def chat(self, messages, tools, options):
        if options.get("continue_final_message"):
            raise NotImplementedError("cannot continue a message")
        if tools:
            raise NotImplementedError("no tools")
        for m in messages:
            if not isinstance(m.get("content"), str) or m.get("tool_calls") or m["role"] == "tool" \
               or m.get("reasoning_content") is not None or "<think>" in m["content"] or "</think>" in m["content"]:
                raise NotImplementedError("only plain string messages")
        out = []
        last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=len(messages) - 1)
        for i, m in enumerate(messages):
            if m["role"] in ("user", "system"):
                out.append(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n")
            elif m["role"] == "assistant":
                if i > last_user and i == len(messages) - 1:
                    out.append(f"<|im_start|>assistant\n<think>\n\n</think>\n\n{m['content'].lstrip(chr(10))}<|im_end|>\n")
                else:
                    out.append(f"<|im_start|>assistant\n{m['content']}<|im_end|>\n")
            else:
                raise NotImplementedError(f"role {m['role']}")
        if options.get("add_generation_prompt"):
            out.append(self.header)
            if options.get("enable_thinking") is False:
                out.append("<think>\n\n</think>\n\n")
        return {"text": "".join(out)}


class Twin(Engine):
    header = "<|im_start|>assistant\n"
