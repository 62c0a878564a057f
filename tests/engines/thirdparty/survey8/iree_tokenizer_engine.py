"""iree-tokenizer 0.3.0 (PyPI, IREE's C tokenizer) as a tokparity cmd: engine: encode, decode, stream.

    -b 'iree=cmd:{python} tests/engines/thirdparty/survey8/iree_tokenizer_engine.py {tokenizer_json}'

(run with SURVEY8_SITE=FOLDER (the packages installed --no-deps there) in the environment, or the package installed.)

As its README calls it:
- encode: Tokenizer.from_file(path).encode(text, add_special_tokens=add_special). The package has no switch
  for special-token parsing (it always matches added tokens' text), so every reply says
  "unsupported": ["parse_special=false"].
- decode: tok.decode(ids, skip_special_tokens=skip_special).
- stream: tok.decode_stream(skip_special_tokens=...) as a context manager (the README's
  decode_stream_iter pattern). The prompt's ids are fed first in one feed() and what it returns is
  discarded (it is the prompt's text); then each generated id is fed alone, and each feed()'s
  return is that id's delta. finalize()'s text, if any, is added to the last delta.
  With "step": K, K ids per feed().
No fixes: whatever the package returns is sent back.
"""
import json
import os
import sys

if os.environ.get("SURVEY8_SITE"):
    sys.path.insert(0, os.environ["SURVEY8_SITE"])
from iree.tokenizer import Tokenizer  # noqa: E402


def stream(tok, ids, prompt, skip, step):
    deltas = []
    with tok.decode_stream(skip_special_tokens=skip) as s:
        if prompt:
            s.feed(list(ids[:prompt]))  # the prompt's text: not sent
        gen = list(ids[prompt:])
        for i in range(0, len(gen), step):
            deltas.append(s.feed(gen[i:i + step]))
        tail = s.finalize()
        if tail:
            if deltas:
                deltas[-1] += tail
            else:
                deltas.append(tail)
    return deltas


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        reply = {"id": req.get("id")}
        try:
            if op == "encode":
                reply["ids"] = tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")))
                reply["unsupported"] = ["parse_special=false"]
            elif op == "decode":
                if req.get("clean_up_spaces") is not None or req.get("spaces_between_specials") or req.get("remove_special"):
                    reply["error"] = "setting not supported"
                else:
                    reply["text"] = tok.decode(req["ids"], skip_special_tokens=bool(req.get("skip_special")))
            elif op == "stream":
                reply["deltas"] = stream(tok, req["ids"], int(req.get("prompt", 0)), bool(req.get("skip_special")),
                                         int(req.get("step", 1) or 1))
            else:
                reply["error"] = f"op {op!r} not supported"
        except Exception as e:  # the package's own failure on this case
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
