"""A Llama 3 chat format written by hand, as a client library writes one, text only. ``Twin``
writes what Llama 3's template writes on the zoo's conversations it takes; each other class has one
bug of the kind hand-written formats have (tests/chat/test_handwritten_formats.py):

- ``OneNewline``: one newline after each header, where the template writes two;
- ``Stripped``: the prompt ``.rstrip()``ped, the generation prompt's newlines too;
- ``StringsOnly``: a content that is a list of parts refused (it calls ``.strip()`` on it).

It refuses what it does not write (tools, tool calls, reasoning, continue_final_message): those
cases are not tried. ``py:tests/engines/handwritten_llama3_chat.py:Twin``."""

BOS = "<|begin_of_text|>"


class Twin:
    after_header = "\n\n"
    parts_refused = False

    def __init__(self, files):
        pass

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def chat(self, messages, tools, options):
        if tools or options.get("continue_final_message"):
            raise NotImplementedError("no tools, no continued message")
        if any(m.get("tool_calls") or m.get("reasoning_content") is not None for m in messages):
            raise NotImplementedError("no tool calls, no reasoning")
        if any(isinstance(m.get("content"), list) for m in messages):
            if self.parts_refused:
                return {"raised": "AttributeError: 'list' object has no attribute 'strip'"}
            raise NotImplementedError("the template writes a list as Python writes it: not done here")
        if not all(isinstance(m.get("content"), str) for m in messages):
            raise NotImplementedError("a content that is no string")
        out = [BOS]
        for m in messages:
            out.append(f"<|start_header_id|>{m['role']}<|end_header_id|>{self.after_header}{m['content'].strip()}<|eot_id|>")
        out.append(f"<|start_header_id|>assistant<|end_header_id|>{self.after_header}")  # (as the template: always)
        return {"text": self.finish("".join(out))}

    def finish(self, prompt):
        return prompt


class OneNewline(Twin):
    after_header = "\n"


class Stripped(Twin):
    def finish(self, prompt):
        return prompt.rstrip()


class StringsOnly(Twin):
    parts_refused = True
