"""chatunify 0.1.0 (PyPI) as a tokparity cmd: chat engine.

    cmd:{python} tests/engines/thirdparty/survey7/chatunify_chat.py MODEL_NAME

As its README calls it: chatunify.apply_template(messages, model=MODEL_NAME) -> the prompt string
(MODEL_NAME e.g. "qwen3-8b" or "qwen2-7b-instruct": chatunify/_router.py picks its Qwen ChatML format,
_qwen.py). It takes no tools and no options: add_generation_prompt, enable_thinking... are not read
(chatunify decides itself: an open assistant turn unless the last message is the assistant's).
Text only (chatunify has no tokenizer). A ValueError it raises (a role it refuses) is answered "raised".
"""
import json
import os
import sys

if os.environ.get("SURVEY7_SITE"):  # (the package installed --no-deps in a folder of its own)
    sys.path.append(os.environ["SURVEY7_SITE"])
from chatunify import apply_template  # noqa: E402


def main():
    model = sys.argv[1]
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        if req.get("op") != "chat":
            reply["error"] = f"unsupported op {req.get('op')!r}"
        else:
            try:
                reply["text"] = apply_template(req["messages"], model=model)
            except Exception as e:
                reply["raised"] = f"{type(e).__name__}: {e}"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
