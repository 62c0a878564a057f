"""llama-cpp-python's built-in Python chat formats (``llama_cpp/llama_chat_format.py``, the
``@register_chat_format`` functions: ``format_llama3``, ``format_gemma``, ``format_qwen``,
``format_chatml``, ...) as a tokparity ``cmd:`` chat engine.

    tokparity compare llama-bpe --ops chat -b 'fmt=cmd:{python} .../llama_cpp_formats.py llama-3 {gguf}'

This is what ``Llama(model_path, chat_format="llama-3").create_chat_completion(messages)`` does
before it generates (``chat_formatter_to_chat_completion_handler``): the formatter makes the
prompt text, and ``llama.tokenize(prompt.encode(), add_bos=not result.added_special,
special=True)`` its ids. The Llama is loaded with ``vocab_only=True`` on the model's GGUF.
``options`` other than the messages are passed as keyword arguments (the handler passes
``**kwargs`` through); tools are passed as ``tools=``.
"""
import json
import sys


def main() -> int:
    fmt, gguf = sys.argv[1], sys.argv[2]
    import llama_cpp
    from llama_cpp import llama_chat_format as lcf

    llama = llama_cpp.Llama(model_path=gguf, vocab_only=True, verbose=False)
    formatter = lcf.LlamaChatCompletionHandlerRegistry()  # (only to check the name is registered)
    formatter.get_chat_completion_handler_by_name(fmt)
    fn = {
        "llama-2": lcf.format_llama2, "llama-3": lcf.format_llama3, "qwen": lcf.format_qwen,
        "chatml": lcf.format_chatml, "gemma": lcf.format_gemma,
        "mistral-instruct": lcf.format_mistral_instruct, "zephyr": lcf.format_zephyr,
        "openchat": lcf.format_openchat, "saiga": lcf.format_saiga,
    }[fmt]
    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            if req["op"] != "chat":
                reply["error"] = f"op {req['op']} not supported"
            else:
                opts = dict(req.get("options") or {})
                result = fn(messages=req["messages"], tools=req.get("tools"), **opts)
                reply["text"] = result.prompt
                reply["ids"] = llama.tokenize(result.prompt.encode("utf-8"),
                                              add_bos=not result.added_special, special=True)
        except Exception as e:
            reply = {"id": req.get("id"), "raised": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
