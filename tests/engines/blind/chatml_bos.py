"""A chat engine that writes every prompt in plain ChatML, whatever the model, and encodes it with
the real ``tokenizers`` (special-token text parsed). With ``bos`` it puts the tokenizer config's
BOS first, in the ids and in the text, as guidance 0.3.1's ``ensure_bos_token`` does after its
ChatML fallback. Written by a helper during the fifth survey of real packages (2026-11-28) as a
control for that package, without reading tokparity's diagnosis.

    python3 chatml_bos.py TOKENIZER_JSON bos|no

Conversations with tools, parts, tool calls or ``continue_final_message`` are skipped.
"""
import json
import sys

from tokenizers import Tokenizer

tok = Tokenizer.from_file(sys.argv[1])
bos = sys.argv[2] == "bos"
cfg = json.load(open(sys.argv[1].replace("tokenizer.json", "tokenizer_config.json"), encoding="utf-8"))
b = cfg.get("bos_token")
b = b["content"] if isinstance(b, dict) else b
for line in sys.stdin:
    r = json.loads(line)
    if r["op"] != "chat":
        print(json.dumps({"id": r["id"], "error": "no"}), flush=True)
        continue
    if r.get("tools") or r["options"].get("continue_final_message") or any(
            not isinstance(m.get("content"), (str, type(None))) or m.get("tool_calls") for m in r["messages"]):
        print(json.dumps({"id": r["id"], "error": "skip", "status": "skipped"}), flush=True)
        continue
    t = "".join(f"<|im_start|>{m['role']}\n{m.get('content') or ''}<|im_end|>\n" for m in r["messages"])
    if r["options"].get("add_generation_prompt"):
        t += "<|im_start|>assistant\n"
    ids = tok.encode(t, add_special_tokens=False).ids
    if bos:
        ids = [tok.token_to_id(b)] + ids
        t = b + t
    print(json.dumps({"id": r["id"], "ids": ids, "text": t}), flush=True)
