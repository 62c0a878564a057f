"""MiniJinja (PyPI ``minijinja``, the Python binding of the Rust engine) as a ``cmd:`` chat engine.

    cmd:python chat_minijinja.py {tokenizer_config}

Renders the chat template of tokenizer_config.json (``chat_template``: a string, or a list of
``{name, template}`` of which ``default`` is used, ``tool_use`` for a conversation with tools) with
``minijinja.Environment`` set up as close to transformers' ``apply_chat_template`` as MiniJinja
allows: ``trim_blocks`` and ``lstrip_blocks`` on, undefined lenient (jinja2's ``Undefined``),
Python's string and dict methods (``pycompat``, on by default), and transformers' globals and
filter given as Python callables: ``raise_exception``, ``strftime_now`` and ``tojson`` (json.dumps
with ensure_ascii=False and the same keyword arguments). ``namespace``, ``dict`` and ``break``/
``continue`` are MiniJinja's own built-ins. Messages are prepared as transformers prepares them
(a key whose value is None dropped, reasoning aliased to ``thinking`` and ``reasoning_content``),
the special tokens' texts and every option but add_generation_prompt/continue_final_message are
variables. MiniJinja has no ``{% generation %}`` tag (transformers' extension): a template using
it does not compile here.

Gives text only (no tokenizer): ``{"text": ...}``, ``{"raised": ...}`` where the template raised or
did not compile, and an error with "status": "skipped" for ``continue_final_message`` (not answered) and
for any op but ``chat``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime

import minijinja

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
OWN_OPTIONS = ("add_generation_prompt", "continue_final_message")


def load_config(path: str) -> tuple[dict[str, str], dict[str, str]]:
    """(templates by name, special tokens' texts) of a tokenizer_config.json."""
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    found = config.get("chat_template")
    templates = {"default": found} if isinstance(found, str) else {t["name"]: t["template"] for t in found or []}
    specials = {}
    for role in ("bos", "eos", "unk", "pad"):
        value = config.get(f"{role}_token")
        value = value.get("content") if isinstance(value, dict) else value
        if isinstance(value, str):
            specials[f"{role}_token"] = value
    return templates, specials


def prepared(messages: list[dict]) -> list[dict]:
    """transformers' own preparation (utils/chat_template_utils.py): None values dropped, reasoning aliased."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        reasoning = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
        if reasoning is not None:
            m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


def raise_exception(message):
    raise minijinja.TemplateError(str(message))


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment() -> minijinja.Environment:
    return minijinja.Environment(
        trim_blocks=True, lstrip_blocks=True, undefined_behavior="lenient", pycompat=True,
        filters={"tojson": tojson},
        globals={"raise_exception": raise_exception, "strftime_now": lambda fmt: datetime.now().strftime(fmt)})


def chat(env: minijinja.Environment, templates: dict[str, str], specials: dict[str, str], request: dict) -> dict:
    options = request.get("options") or {}
    if options.get("continue_final_message"):
        return {"error": "continue_final_message is not implemented by this wrapper", "status": "skipped"}
    tools = request.get("tools")
    name = "tool_use" if tools is not None and "tool_use" in templates else "default"
    if name not in templates:
        return {"error": "the model has no chat template"}
    variables = {**specials, **{k: v for k, v in options.items() if k not in OWN_OPTIONS}}
    try:
        text = env.render_str(templates[name], "chat_template", messages=prepared(request["messages"]), tools=tools,
                              documents=None, add_generation_prompt=bool(options.get("add_generation_prompt")),
                              **variables)
    except minijinja.TemplateError as e:
        return {"raised": f"TemplateError: {e.message}"}
    except Exception as e:  # a Python method called on a Python value raises its own error (list.startswith)
        return {"raised": f"{type(e).__name__}: {e}"}
    return {"text": text}


def main() -> None:
    templates, specials = load_config(sys.argv[1])
    env = environment()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "chat":
            reply = chat(env, templates, specials, request)
        else:
            reply = {"error": f"unsupported op {request.get('op')!r}"}
        sys.stdout.write(json.dumps({"id": request.get("id"), **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
