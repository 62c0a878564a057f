"""codecai 0.4.1 (PyPI, the Python client of the Codec token-stream protocol) as a tokparity cmd: engine.

    cmd:{python} tests/engines/thirdparty/codecai_detok.py MAP_JSON

MAP_JSON is one of the published tokenizer maps users load with codecai.load_map from the codec-maps CDN
(github.com/wdunn001/codec-maps, maps/*.json at commit 095546d; not kept in this repository):
llama-2.json (metaspace, byte fallback), r50k_base.json and cl100k_base.json (byte_level).
TokenizerMap.from_json(file) as load_map does after fetching. tests/run/test_codecai.py makes a map
the same way from a zoo model's tokenizer.json (its vocabulary, merges and special tokens).

- decode: what codecai.detokenize(map, ids, render_special=not skip_special) does (detokenize.py:151:
  Detokenizer(map).render(ids, partial=False, ...)), on one Detokenizer reset() before each request
  (its docstring: "call between conversations / requests"): building the table of a 100k vocabulary
  per request is too slow for a run.
- stream: as its README's client loop: per generation (reset()), each generated id rendered
  as a frame, Detokenizer.render([id], partial=not done, render_special=...) (the prompt is the server's:
  a Codec stream carries the generated ids only).
"""
import json
import os
import sys

if os.environ.get("SURVEY7_SITE"):  # (the package installed --no-deps in a folder of its own)
    sys.path.append(os.environ["SURVEY7_SITE"])
from codecai import Detokenizer, TokenizerMap  # noqa: E402


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        m = TokenizerMap.from_json(f.read())
    d = Detokenizer(m)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            render_special = not req.get("skip_special", False)
            if req["op"] == "decode":
                if any(req.get(k) for k in ("clean_up_spaces", "spaces_between_specials", "remove_special")):
                    reply["error"] = "setting not available"
                else:
                    d.reset()
                    reply["text"] = d.render(req["ids"], partial=False, render_special=render_special)
            elif req["op"] == "stream":
                if req.get("step", 1) != 1:
                    reply["error"] = "one id per frame only"
                else:
                    d.reset()
                    gen = req["ids"][req["prompt"]:]
                    reply["deltas"] = [d.render([i], partial=(k < len(gen) - 1), render_special=render_special)
                                       for k, i in enumerate(gen)]
            else:
                reply["error"] = f"unsupported op {req['op']!r}"
        except Exception as e:
            reply.update(error=f"{type(e).__name__}: {e}", status="error")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
