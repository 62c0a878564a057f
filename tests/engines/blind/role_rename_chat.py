"""A hand-written Llama 3 chat prompt builder (no Jinja), for the zoo's llama-bpe: a py: engine.

A helper trying the README as a newcomer wrote it, with a bug of its own choosing, before the
cause that names it could read the role (2026-12-04). Format: <|begin_of_text|>, then per message
  <|start_header_id|>ROLE<|end_header_id|>\n\n CONTENT.strip() <|eot_id|>
then the assistant's header (the zoo's template always writes it).
Its bug: written from the Llama 3.1 model card, it renames the role "tool" to "ipython"; the
model's own (Llama 3) template writes the role as given. ``FixedEngine`` writes roles as given.

    -b 'mine=py:tests/engines/blind/role_rename_chat.py:Engine'
"""
from tokenizers import Tokenizer

ROLE_NAMES = {"tool": "ipython"}   # BUG: Llama 3.1's convention, not this model's template


def build_prompt(messages, roles):
    out = ["<|begin_of_text|>"]
    for m in messages:
        content = m.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise NotImplementedError("content as a list of parts is not supported")
        role = roles.get(m["role"], m["role"])
        out.append(f"<|start_header_id|>{role}<|end_header_id|>\n\n{content.strip()}<|eot_id|>")
    out.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
    return "".join(out)


class Engine:
    ROLES = ROLE_NAMES

    def __init__(self, files):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def chat(self, messages, tools, options):
        if options.get("continue_final_message"):
            raise NotImplementedError("my builder cannot continue a message")
        text = build_prompt(messages, self.ROLES)
        ids = self.tok.encode(text, add_special_tokens=False).ids   # the text writes BOS itself
        return {"text": text, "ids": ids}


class FixedEngine(Engine):
    ROLES: dict = {}
