"""vLLM 0.33.0's Python incremental detokenizer (PyPI ``vllm``, ``vllm/tokenizers/detokenizer_utils.py``:
``convert_prompt_ids_to_tokens`` + ``detokenize_incrementally``) as a tokparity ``cmd:`` engine, driven
as ``vllm/v1/engine/detokenizer.py``'s ``SlowIncrementalDetokenizer`` drives it (the detokenizer
vLLM uses for a tokenizer that is not a fast one, and for ``tokenizer_mode="slow"``).

    tokparity compare lenml-llama2 --ops stream -c ids -b 'vllm=cmd:{python} .../vllm_incremental.py {tokenizer_json}'

The file is loaded on its own from the unpacked wheel (``VLLM_SRC``, default /work/survey6/pkgsrc):
``import vllm`` needs torch and CUDA. Its only import, ``vllm.tokenizers.TokenizerLike``, is a type,
given here as a stub. The tokenizer is transformers' AutoTokenizer on the model's tokenizer.json, as
vLLM's ``get_tokenizer`` loads it. ``stream``: the prompt's ids prime
``convert_prompt_ids_to_tokens``; each generated id is appended to ``token_ids`` and
``detokenize_incrementally`` gives its delta (``spaces_between_special_tokens`` True, SamplingParams'
default; ``skip_special_tokens`` as asked).
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import types
from pathlib import Path


def _load():
    src = Path(os.environ.get("VLLM_SRC", "/work/survey6/pkgsrc"))
    for name in ("vllm", "vllm.tokenizers"):
        mod = types.ModuleType(name)
        mod.__path__ = []
        sys.modules[name] = mod
    sys.modules["vllm.tokenizers"].TokenizerLike = object
    spec = importlib.util.spec_from_file_location("vllm_detokenizer_utils", src / "vllm/tokenizers/detokenizer_utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(tokenizer_json: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="survey6-vllm-"))
    source = Path(tokenizer_json).resolve()
    os.symlink(source, folder / "tokenizer.json")
    config = source.parent / "tokenizer_config.json"
    if config.exists():
        os.symlink(config, folder / "tokenizer_config.json")
    else:
        (folder / "tokenizer_config.json").write_text("{}")
    return folder


def main() -> int:
    du = _load()
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(_folder(sys.argv[1])))
    print(f"vllm detokenize_incrementally on {type(tok).__name__} is_fast={tok.is_fast}", file=sys.stderr)

    def stream(ids, prompt, skip):
        tokens, prefix_offset, read_offset = du.convert_prompt_ids_to_tokens(tok, ids[:prompt], skip_special_tokens=skip)
        token_ids = list(ids[:prompt])
        deltas = []
        for tid in ids[prompt:]:
            token_ids.append(tid)
            new_tokens, text, prefix_offset, read_offset = du.detokenize_incrementally(
                tok, token_ids, tokens, prefix_offset, read_offset,
                skip_special_tokens=skip, spaces_between_special_tokens=True)
            tokens.extend(new_tokens)
            deltas.append(text)
        return deltas

    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            if req["op"] == "stream":
                if req.get("step", 1) != 1:
                    reply["error"] = "one id per step only"
                else:
                    reply["deltas"] = stream(req["ids"], req["prompt"], bool(req.get("skip_special")))
            else:
                reply["error"] = f"op {req['op']} not supported"
        except Exception as e:
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}", "status": "error"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
