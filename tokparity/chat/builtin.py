"""llama.cpp's built-in chat templates, through llama-cpp-python: what llama-cli and llama-server
format a conversation with when they are not given ``--jinja`` (``llama_chat_apply_template``
recognizes the model's template by what its text holds and formats with its own C++ code).
The llama.cpp backend answers ``chat`` with it, and the reference reproduces it as the cause
``chat.llama-cpp-builtin``. ChatML, the format servers fall back to, is written here in Python
(``chatml_text``), so that contents of parts and tool turns have a prompt too.
"""

from __future__ import annotations

from tokparity.chat.conversation import Conversation


def builtin_text(template: str, conversation: Conversation, add_generation_prompt: bool) -> str:
    """llama.cpp's built-in template for ``template`` (``llama_chat_apply_template``, through
    llama-cpp-python). NotImplementedError where it cannot be tried: llama-cpp-python missing, no
    built-in matches the template, or the conversation is not one built-ins take (a role and a
    string per message): not a refusal of the conversation, so it reproduces no engine's."""
    import ctypes

    try:
        import llama_cpp
    except ImportError:
        raise NotImplementedError("llama-cpp-python is not installed: llama.cpp's built-in templates cannot be "
                                  "tried (pip install 'tokparity[llama]')") from None
    if not conversation.only_text_content():
        raise NotImplementedError("llama.cpp's built-in templates take a role and a string content per message")
    contents = [(m["role"].encode("utf-8", "surrogatepass"), m["content"].encode("utf-8", "surrogatepass"))
                for m in conversation.messages]
    messages = (llama_cpp.llama_chat_message * len(contents))(
        *(llama_cpp.llama_chat_message(role, content) for role, content in contents))
    size = 2 * sum(len(r) + len(c) for r, c in contents) + 4096
    for _ in range(2):
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_chat_apply_template(template.encode("utf-8", "surrogatepass"), messages, len(contents),
                                                add_generation_prompt, buf, size)
        if n < 0:
            raise NotImplementedError("llama.cpp has no built-in template that matches this one")
        if n <= size:
            return buf.raw[:n].decode("utf-8", "replace")
        size = n + 1
    raise NotImplementedError("llama_chat_apply_template kept asking for a larger buffer")


def chatml_text(conversation: Conversation, add_generation_prompt: bool) -> str:
    """The prompt in ChatML whatever the model, as llama.cpp's server writes it without a template
    it can run. Each message is ``<|im_start|>ROLE``, a newline, the content, ``<|im_end|>`` and a
    newline. ``<|im_start|>assistant`` and a newline follow where a generation prompt is asked. A
    content of parts is its text parts joined by newlines (``common_chat_templates_apply_legacy``);
    no content is empty. Tools and options are not written."""
    out = []
    for m in conversation.messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
        out.append(f"<|im_start|>{m.get('role') or ''}\n{'' if content is None else content}<|im_end|>\n")
    return "".join(out) + ("<|im_start|>assistant\n" if add_generation_prompt else "")

