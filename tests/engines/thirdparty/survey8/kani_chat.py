"""kani 1.10.0 (PyPI) hand-written prompt pipelines as a tokparity cmd: chat engine (text only).

    -b 'kani=cmd:{python} tests/engines/thirdparty/survey8/kani_chat.py meta-llama/Llama-3-8B-Instruct'        (llama-bpe)
    -b 'kani=cmd:{python} tests/engines/thirdparty/survey8/kani_chat.py mistralai/Mistral-Nemo-Instruct-2407'  (tekken)

(run with SURVEY8_SITE=FOLDER (the packages installed --no-deps there) in the environment, or kani installed.)

As kani's engines call it: the pipeline is what kani.model_specific.prompt_pipeline_for_hf_model(MODEL_ID)
returns for that id (kani/model_specific/__init__.py PROMPT_PIPELINE_REGISTRY: "meta-llama/Llama-3-*" ->
llama3.LLAMA3_PIPELINE, "mistralai/*-2407" -> mistral.MISTRAL_V3_PIPELINE), and the prompt is
pipeline(messages, functions) (kani/engines/huggingface/base.py:250, engines/llamacpp/base.py:127).
A pipeline takes no options: add_generation_prompt, continue_final_message and template variables are not
read (kani decides itself: conversation_fmt adds the generation suffix unless the last message is the
assistant's). The prompt is returned as text; kani tokenizes it without adding specials
(add_special_tokens=False / add_bos=False), so the text is the whole prompt.

The OpenAI-style messages of the request become kani ChatMessage objects the way a kani user builds them:
system/user/assistant -> ChatMessage.system/user/assistant; a content list of parts -> a list of the
parts' texts (kani joins parts with ""); assistant tool_calls -> ToolCall.from_function_call(
FunctionCall(name, arguments JSON), id); a "tool" message -> ChatMessage.function(name, content,
tool_call_id). Tools -> AIFunction(no-op, name, desc, json_schema=parameters). An exception kani raises
is answered "raised".
"""
import json
import os
import sys

if os.environ.get("SURVEY8_SITE"):
    sys.path.insert(0, os.environ["SURVEY8_SITE"])
from kani import AIFunction, ChatMessage  # noqa: E402
from kani.model_specific import prompt_pipeline_for_hf_model  # noqa: E402
from kani.models import FunctionCall, ToolCall  # noqa: E402


def content_of(c):
    if c is None or isinstance(c, str):
        return c
    out = []
    for p in c:
        if isinstance(p, dict) and p.get("type") == "text":
            out.append(p.get("text", ""))
        else:
            raise ValueError(f"part {p!r} has no text")
    return out


def to_kani(messages):
    msgs = []
    names = {}
    for m in messages:
        role = m.get("role")
        content = content_of(m.get("content"))
        if role == "system":
            msgs.append(ChatMessage.system(content if content is not None else ""))
        elif role == "user":
            msgs.append(ChatMessage.user(content if content is not None else ""))
        elif role == "assistant":
            tcs = None
            if m.get("tool_calls"):
                tcs = []
                for tc in m["tool_calls"]:
                    fn = tc.get("function", tc)
                    args = fn.get("arguments", {})
                    if not isinstance(args, str):
                        args = json.dumps(args)
                    tcs.append(ToolCall.from_function_call(FunctionCall(name=fn["name"], arguments=args), tc.get("id")))
                    names[tc.get("id")] = fn["name"]
            msgs.append(ChatMessage.assistant(content, tool_calls=tcs))
        elif role in ("tool", "function"):
            tcid = m.get("tool_call_id")
            msgs.append(ChatMessage.function(m.get("name") or names.get(tcid), content if content is not None else "", tcid))
        else:
            raise ValueError(f"role {role!r}")
    return msgs


def to_functions(tools):
    fns = []
    for t in tools or []:
        fn = t.get("function", t)
        fns.append(AIFunction(lambda **kw: None, name=fn["name"], desc=fn.get("description") or "",
                              json_schema=fn.get("parameters") or {"type": "object", "properties": {}}))
    return fns


def main():
    pipeline = prompt_pipeline_for_hf_model(sys.argv[1], fallback_to_chat_template=False, search_parents=False)
    if pipeline is None:
        sys.exit(f"kani has no hand-written pipeline for {sys.argv[1]}")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        if req.get("op") != "chat":
            reply["error"] = f"op {req.get('op')!r} not supported"
        else:
            try:
                reply["text"] = pipeline(to_kani(req["messages"]), to_functions(req.get("tools")))
            except Exception as e:
                reply["raised"] = f"{type(e).__name__}: {e}"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
