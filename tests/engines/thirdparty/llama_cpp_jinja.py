"""llama-cpp-python's Jinja chat formatter as a ``py:`` chat engine (tests/chat/test_llama_cpp_jinja.py).

What ``Llama.create_chat_completion`` does with a GGUF that carries ``tokenizer.chat_template``
and no ``chat_format`` given (llama_cpp/llama.py ``Llama.__init__``, llama_chat_format.py
``Jinja2ChatFormatter`` and ``chat_formatter_to_chat_completion_handler``), up to the prompt's
ids, without generating: the formatter is made as ``Llama.__init__`` makes it (the template of the
metadata, the BOS and EOS texts of the vocabulary, ``add_generation_prompt`` left at its default),
called as the completion handler calls it (messages and tools, no other variable: the API takes
none), and its prompt tokenized as the handler tokenizes it.
"""

from __future__ import annotations


class LlamaCppJinja:
    def __init__(self, files: dict):
        import llama_cpp
        from llama_cpp import llama_chat_format

        self.llama = llama_cpp.Llama(model_path=files["gguf"], vocab_only=True, verbose=False)
        template = self.llama.metadata.get("tokenizer.chat_template")
        eos, bos = self.llama.token_eos(), self.llama.token_bos()
        eos_text = self.llama._model.token_get_text(eos) if eos != -1 else ""
        bos_text = self.llama._model.token_get_text(bos) if bos != -1 else ""
        self.formatter = llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos_text,
                                                               bos_token=bos_text, stop_token_ids=[eos]) \
            if template else None

    def encode(self, text, add_special=False, parse_special=False):
        raise NotImplementedError("a chat engine")

    def chat(self, messages, tools, options):
        if self.formatter is None:
            raise NotImplementedError("the GGUF has no tokenizer.chat_template")
        if options.get("continue_final_message"):
            raise NotImplementedError("create_chat_completion cannot continue a message")
        try:
            result = self.formatter(messages=messages, tools=tools)
        except Exception as e:  # the template's raise_exception is a ValueError here
            return {"raised": f"{type(e).__name__}: {e}"}
        ids = self.llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
        return {"text": result.prompt, "ids": list(ids)}
