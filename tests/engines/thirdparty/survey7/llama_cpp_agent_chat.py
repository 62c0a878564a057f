"""llama-cpp-agent 0.2.35 (PyPI) MessagesFormatter as a tokparity cmd: chat engine.

    cmd:{python} tests/engines/thirdparty/survey7/llama_cpp_agent_chat.py FORMATTER {gguf}

FORMATTER is a MessagesFormatterType name (LLAMA_3, CHATML, PHI_3, GEMMA_2, ...). The prompt is what
LlamaCppAgent.get_chat_response builds (llm_agent.py:637): get_predefined_messages_formatter(T)
.format_conversation(messages, Roles.assistant) -- the generation prompt is always written, whatever
add_generation_prompt says, as the agent always asks for the assistant's turn. The ids are what its
llama-cpp-python provider then does with that string (providers/llama_cpp_python.py:163 ->
Llama.create_completion -> Llama.tokenize(prompt.encode(), add_bos=True, special=True)), here on a
vocab-only Llama of the model's GGUF. An exception of the formatter (a list content, an unknown role)
is answered as "raised". Tools and tool_calls are not read by the formatter (it only reads role/content).
"""
import json
import os
import sys

if os.environ.get("SURVEY7_SITE"):  # (the package installed --no-deps in a folder of its own)
    sys.path.append(os.environ["SURVEY7_SITE"])

from llama_cpp import Llama
from llama_cpp_agent.chat_history.messages import Roles
from llama_cpp_agent.messages_formatter import MessagesFormatterType, get_predefined_messages_formatter


def main():
    fmt = get_predefined_messages_formatter(MessagesFormatterType[sys.argv[1]])
    # (a second argument "-": the model has no GGUF; the prompt's text alone is answered)
    llm = Llama(model_path=sys.argv[2], vocab_only=True, verbose=False) if sys.argv[2] != "-" else None
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        if req.get("op") != "chat":
            reply["error"] = f"unsupported op {req.get('op')!r}"
        elif (req.get("options") or {}).get("continue_final_message"):
            reply.update(error="no continue_final_message in llama-cpp-agent", status="skipped")
        else:
            try:
                prompt, _role = fmt.format_conversation(req["messages"], Roles.assistant)
            except Exception as e:  # the formatter refuses (list content, unknown role, None content)
                reply["raised"] = f"{type(e).__name__}: {e}"
            else:
                reply["text"] = prompt
                if llm is not None:
                    reply["ids"] = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
