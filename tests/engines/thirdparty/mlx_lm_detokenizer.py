"""mlx-lm's streaming detokenizers (PyPI ``mlx-lm``, ``mlx_lm/tokenizer_utils.py``) as a tokparity
``cmd:`` engine: the code that turns a generation into text in ``mlx_lm.stream_generate``.

    tokparity compare llama-bpe --ops stream -c ids -b 'mlx=cmd:{python} tests/engines/thirdparty/mlx_lm_detokenizer.py {tokenizer_json}'

``tokenizer_utils.load`` is mlx-lm's own: it reads the folder's tokenizer.json, loads the tokenizer
with transformers and picks the detokenizer from the decoder (SPMStreamingDetokenizer for
SentencePiece-style decoders, BPEStreamingDetokenizer for ByteLevel, else the naive one). The module
needs only transformers, so it is loaded from the installed package's file: ``import mlx_lm`` would
import MLX, which this machine need not have. ``stream`` does what ``stream_generate`` does: the
detokenizer is reset for the generation (the prompt is not given to it), each generated id is
``add_token``-ed and its delta is ``last_segment``; ``finalize`` adds the rest to the last delta.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path


def _tokenizer_utils():
    spec = importlib.util.find_spec("mlx_lm")  # (finds the package without running its __init__)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("mlx-lm is not installed: pip install mlx-lm==0.32.2 (it needs no MLX here)")
    path = Path(list(spec.submodule_search_locations)[0]) / "tokenizer_utils.py"
    module_spec = importlib.util.spec_from_file_location("mlx_lm_tokenizer_utils", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def _folder(tokenizer_json: str) -> Path:
    """A folder holding the model's tokenizer.json (and its tokenizer_config.json, if one lies beside it)."""
    folder = Path(tempfile.mkdtemp(prefix="tokparity-mlx-"))
    source = Path(tokenizer_json).resolve()
    os.symlink(source, folder / "tokenizer.json")
    config = source.parent / "tokenizer_config.json"
    if config.exists() and source.name == "tokenizer.json":
        os.symlink(config, folder / "tokenizer_config.json")
    else:
        (folder / "tokenizer_config.json").write_text("{}")
    return folder


def main() -> int:
    wrapper = _tokenizer_utils().load(_folder(sys.argv[1]))
    tokenizer, detokenizer = wrapper._tokenizer, wrapper.detokenizer
    print(f"mlx-lm detokenizer: {type(detokenizer).__name__}", file=sys.stderr)

    def stream(ids: list[int], prompt: int) -> list[str]:
        detokenizer.reset()
        deltas = []
        for token in ids[prompt:]:
            detokenizer.add_token(token)
            deltas.append(detokenizer.last_segment)
        detokenizer.finalize()
        if deltas:
            deltas[-1] += detokenizer.last_segment
        return deltas

    for line in sys.stdin:
        req = json.loads(line)
        reply: dict = {"id": req.get("id")}
        try:
            if req["op"] == "encode":
                reply["ids"] = tokenizer.encode(req["text"], add_special_tokens=req["add_special"])
            elif req["op"] == "decode":
                reply["text"] = tokenizer.decode(req["ids"])
            elif req["op"] == "stream":
                reply["deltas"] = stream(req["ids"], req["prompt"])
            else:
                reply["error"] = f"no op {req['op']!r}"
        except Exception as e:  # one bad request is its error, not the end of the engine
            reply["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
