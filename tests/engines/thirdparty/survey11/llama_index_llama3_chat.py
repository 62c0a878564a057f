"""llama-index-llms-llama-cpp 0.7.0 (PyPI, LlamaIndex's llama.cpp integration; with
llama-index-core 0.14.25 and llama-cpp-python 0.3.36): its hand-written Llama 3 prompt,
``llama_index.llms.llama_cpp.llama_utils.messages_to_prompt_v3_instruct``, as a tokparity cmd:
chat engine (text and ids). No fixes.

    -b 'llamaindex-v3=cmd:VENV/bin/python tests/engines/thirdparty/survey11/llama_index_llama3_chat.py {gguf}'   (llama-bpe)

Its users pass the function to ``LlamaCPP(messages_to_prompt=messages_to_prompt_v3_instruct, …)``;
``LlamaCPP.chat(messages)`` then calls ``prompt = self.messages_to_prompt(messages)`` and
``self.complete(prompt, formatted=True)``, which hands the string to llama-cpp-python's
``Llama.__call__`` (llama_index/llms/llama_cpp/base.py:261-283). The ids are what
llama-cpp-python's ``_create_completion`` makes of that string (llama_cpp/llama.py:1243-1304):
the vocabulary's BOS where it adds one, then ``tokenize(prompt, add_bos=False, special=True)``.
Here that ``Llama`` is the model's GGUF opened with ``vocab_only=True``.

Each OpenAI message becomes a ``ChatMessage``: its role, its string content (``None`` stays
``None``), a list of parts as one ``TextBlock`` per text part (what ``ChatMessage(blocks=…)``
takes; its ``.content`` joins them with ``\\n``), tool calls in ``additional_kwargs`` as
llama-index's OpenAI integration keeps them. The function's ``system_prompt`` argument is left at
its default, as ``LlamaCPP`` calls it. It takes no option and no template variable:
``add_generation_prompt`` is not read (it always ends with the assistant's header). Not answered
(status "skipped"): a request with ``tools`` (``LlamaCPP`` is no function-calling LLM: its
``chat`` takes none) and one with ``continue_final_message`` (no such option). An exception of
the function (its ``assert`` that roles alternate user/assistant) is its refusal (``raised``).
"""
import json
import sys

from llama_cpp import Llama
from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.llms.llama_cpp.llama_utils import messages_to_prompt_v3_instruct

LLM = Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)


def to_message(m):
    extra = {k: m[k] for k in ("tool_calls", "tool_call_id", "name") if m.get(k) is not None}
    content = m.get("content")
    if isinstance(content, list):
        blocks = [TextBlock(text=p["text"]) for p in content if p.get("type") == "text"]
        return ChatMessage(role=m["role"], blocks=blocks, additional_kwargs=extra)
    return ChatMessage(role=m["role"], content=content, additional_kwargs=extra)


def ids_of(prompt):
    bos = [LLM.token_bos()] if LLM._model.add_bos_token() and LLM.token_bos() != -1 else []
    return bos + LLM.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)


for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] != "chat":
            reply["error"] = f"op {req['op']} not supported"
        elif req.get("tools"):
            reply.update(error="LlamaCPP.chat takes no tools", status="skipped")
        elif (req.get("options") or {}).get("continue_final_message"):
            reply.update(error="messages_to_prompt has no continue_final_message", status="skipped")
        else:
            try:
                prompt = messages_to_prompt_v3_instruct([to_message(m) for m in req["messages"]])
            except (AssertionError, ValueError, IndexError) as e:
                reply["raised"] = f"{type(e).__name__}: {e}"
            else:
                reply.update(text=prompt, ids=ids_of(prompt))
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
