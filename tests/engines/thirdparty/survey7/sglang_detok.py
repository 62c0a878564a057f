"""sglang 0.5.23's incremental detokenizer (sglang/srt/managers/detokenizer_manager.py) as a tokparity
cmd: stream/decode engine.

    cmd:{python} tests/engines/thirdparty/survey7/sglang_detok.py {tokenizer_json}

sglang's DetokenizerManager cannot be imported here (it imports torch, zmq and its GPU platform code at
module level; this machine has no torch). So the decoding code is taken verbatim from the installed
package's files with `ast`: the dataclass DecodeStatus and DetokenizerManager's methods
trim_matched_stop, _clamp_decode_ids, _grouped_batch_decode and _decode_batch_token_id_output
(detokenizer_manager.py), find_printable_text and _is_chinese_char (sglang/utils.py),
decode_without_hf_kwargs (srt/utils/patch_tokenizer.py). They run unchanged, on a transformers
tokenizer loaded as sglang's get_tokenizer loads it (AutoTokenizer, clean_up_tokenization_spaces=False;
its post-load patches for transformers v5 are not applied).

What the scheduler sends is reproduced from schedule_batch.py:1788 (Req.init_incremental_detokenize) and
scheduler_components/output_streamer.py:513: on the first step decode_ids = the prompt's last
INIT_INCREMENTAL_DETOKENIZATION_OFFSET (5) ids + the generated ids so far, read_offset = the prompt's
length within them; afterwards only the new ids. One step per generated id (stream_interval 1). The last
id's step carries finished_reason {"type": "length"} (max_new_tokens reached: nothing trimmed). Sampling
params as sglang's defaults: spaces_between_special_tokens=True, skip_special_tokens as tokparity asks.
The deltas are the DetokenizerManager's output_strs, which the tokenizer manager appends to the text.
"""
import ast
import dataclasses
import json
import os
import sys
import tempfile
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Optional, Union

SITE = Path(os.environ.get("SGLANG_SRC", "sglang"))  # the installed sglang package folder
METHODS = {"trim_matched_stop", "_clamp_decode_ids", "_grouped_batch_decode", "_decode_batch_token_id_output"}


def _take(path: Path, names: set[str], class_methods: dict[str, set[str]]) -> str:
    tree = ast.parse(path.read_text())
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            out.append(node)
        elif isinstance(node, ast.ClassDef) and node.name in class_methods:
            keep = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in class_methods[node.name]]
            out.append(ast.ClassDef(name=node.name, bases=[], keywords=[], body=keep, decorator_list=[], type_params=[]))
    return "from __future__ import annotations\n" + ast.unparse(ast.Module(body=out, type_ignores=[]))


NS = dict(dataclasses=dataclasses, List=list, Dict=dict, Optional=Optional, Tuple=tuple, Union=Union,
          OrderedDict=OrderedDict, defaultdict=defaultdict, DETOKENIZER_MAX_STATES=1 << 16)
exec(_take(SITE / "utils.py", {"find_printable_text", "_is_chinese_char"}, {}), NS)
exec(_take(SITE / "srt/utils/patch_tokenizer.py", {"decode_without_hf_kwargs"}, {}), NS)
exec(_take(SITE / "srt/managers/detokenizer_manager.py", {"DecodeStatus"}, {"DetokenizerManager": METHODS}), NS)
INIT_OFFSET = 5  # schedule_batch.py:163 INIT_INCREMENTAL_DETOKENIZATION_OFFSET


@dataclasses.dataclass
class BatchTokenIDOutput:  # the fields _decode_batch_token_id_output reads (io_struct.py)
    rids: list
    decoded_texts: list
    decode_ids: list
    read_offsets: list
    finished_reasons: list
    no_stop_trim: list
    skip_special_tokens: list
    spaces_between_special_tokens: list


def load_tokenizer(tokenizer_json: str):
    from transformers import AutoTokenizer
    folder = Path(tempfile.mkdtemp(prefix="sglang-tok-"))
    src = Path(tokenizer_json).resolve()
    os.symlink(src, folder / "tokenizer.json")
    cfg = src.parent / "tokenizer_config.json"
    if cfg.exists():
        os.symlink(cfg, folder / "tokenizer_config.json")
    return AutoTokenizer.from_pretrained(str(folder), clean_up_tokenization_spaces=False)


def make_manager(tokenizer):
    m = NS["DetokenizerManager"]()
    m.tokenizer = tokenizer
    m.decode_status = OrderedDict()
    m.disable_tokenizer_batch_decode = False
    m.is_tool_call_parser_gpt_oss = False
    m.tool_close_token_ids = set()
    m.vocab_size = None
    return m


def stream(m, ids, prompt, skip_special):
    rid = "r"
    m.decode_status.clear()
    deltas = []
    origin = ids[:prompt]
    surr = max(prompt - INIT_OFFSET, 0)
    sent = 0
    for k in range(prompt, len(ids)):
        output_ids = ids[prompt:k + 1]
        all_ids = origin[surr:] + output_ids
        finished = {"type": "length", "length": len(output_ids)} if k == len(ids) - 1 else None
        obj = BatchTokenIDOutput(rids=[rid], decoded_texts=[""], decode_ids=[all_ids[sent:]],
                                 read_offsets=[prompt - surr], finished_reasons=[finished], no_stop_trim=[False],
                                 skip_special_tokens=[skip_special], spaces_between_special_tokens=[True])
        sent = len(all_ids)
        deltas.append(m._decode_batch_token_id_output(obj)[0])
    return deltas


def main():
    tok = load_tokenizer(sys.argv[1])
    m = make_manager(tok)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            if req["op"] == "stream":
                if req.get("step", 1) != 1:
                    reply["error"] = "one id per step only"
                else:
                    reply["deltas"] = stream(m, req["ids"], req["prompt"], bool(req.get("skip_special")))
            else:
                reply["error"] = f"unsupported op {req['op']!r}"
        except Exception as e:
            reply.update(error=f"{type(e).__name__}: {e}", status="error")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
