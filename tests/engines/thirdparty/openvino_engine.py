"""openvino-tokenizers and openvino-genai (PyPI 2026.4.1) as a tokparity ``cmd:`` engine.

    tokparity compare gemma-3 -c edge --ops decode \\
        -b 'mine=cmd:/tmp/ovenv/bin/python tests/engines/thirdparty/openvino_engine.py {tokenizer_json}'

The model's folder (tokenizer.json, tokenizer_config.json) is loaded with transformers'
``AutoTokenizer.from_pretrained`` and converted with
``openvino_tokenizers.convert_tokenizer(hf_tok, with_detokenizer=True)``, as the package's readme
shows; the two IRs are saved (cached under ``$OV_ENGINE_CACHE``, /tmp/ovmodels) and read back by
``openvino_genai.Tokenizer(folder)``.

- encode: ``Tokenizer.encode(text, add_special_tokens=…)``. It has no switch for special-token
  parsing (always parses): ``"unsupported": ["parse_special=false"]``.
- decode: ``Tokenizer.decode(ids, skip_special_tokens=…)`` (the converted detokenizer).
- stream: ``openvino_genai.TextStreamer`` fed the ids after the prompt one at a time with
  ``write``; each id's delta is what its callback received during that ``write`` (``""`` when
  nothing), and what ``end()`` sends is added to the last delta. The prompt's ids are not fed (a
  genai pipeline's streamer sees only generated ids).

A helper wrote it on 2026-11-28 to run the packages of docs/findings.md's fifth survey again
(O2, O4, O7, O8). tests/run/test_openvino.py runs it on Qwen3 (O1).
"""
import contextlib
import hashlib
import json
import os
import sys

import openvino as ov
import openvino_genai as ov_genai


def converted(tokenizer_json):
    folder = os.path.dirname(os.path.abspath(tokenizer_json))
    key = hashlib.sha256(folder.encode()).hexdigest()[:16]
    out = os.path.join(os.environ.get("OV_ENGINE_CACHE", "/tmp/ovmodels"), key)
    if not os.path.exists(os.path.join(out, "openvino_detokenizer.xml")):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from openvino_tokenizers import convert_tokenizer
        from transformers import AutoTokenizer

        with contextlib.redirect_stdout(sys.stderr):
            hf_tok = AutoTokenizer.from_pretrained(folder)
            tok, detok = convert_tokenizer(hf_tok, with_detokenizer=True)
            os.makedirs(out, exist_ok=True)
            ov.save_model(tok, os.path.join(out, "openvino_tokenizer.xml"))
            ov.save_model(detok, os.path.join(out, "openvino_detokenizer.xml"))
    return out


tok = ov_genai.Tokenizer(converted(sys.argv[1]))


def stream(ids, prompt, skip_special):
    got = []

    def callback(text):
        got.append(text)
        return ov_genai.StreamingStatus.RUNNING

    streamer = ov_genai.TextStreamer(tok, callback, {"skip_special_tokens": skip_special})
    deltas = []
    for i in ids[prompt:]:
        got.clear()
        streamer.write(i)
        deltas.append("".join(got))
    got.clear()
    streamer.end()
    if deltas:
        deltas[-1] += "".join(got)
    return deltas


for line in sys.stdin:
    r = json.loads(line)
    try:
        if r["op"] == "encode":
            res = tok.encode(r["text"], add_special_tokens=r["add_special"])
            out = {"id": r["id"], "ids": [int(x) for x in res.input_ids.data[0]]}
            if not r["parse_special"]:
                out["unsupported"] = ["parse_special=false"]
        elif r["op"] == "decode":
            if any(r.get(k) for k in ("clean_up_spaces", "spaces_between_specials", "remove_special")):
                out = {"id": r["id"], "error": "setting not supported"}
            else:
                out = {"id": r["id"], "text": tok.decode(r["ids"], skip_special_tokens=r.get("skip_special", False))}
        elif r["op"] == "stream":
            if r.get("step", 1) != 1:
                out = {"id": r["id"], "error": "step not supported"}
            else:
                out = {"id": r["id"], "deltas": stream(r["ids"], r["prompt"], r.get("skip_special", False))}
        else:
            out = {"id": r["id"], "error": "unsupported op"}
    except Exception as e:  # (one case's failure, said as the engine's)
        out = {"id": r["id"], "error": repr(e), "status": "error"}
    print(json.dumps(out), flush=True)
