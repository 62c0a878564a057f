"""lmdeploy 0.18.0's incremental detokenizer (PyPI ``lmdeploy``, ``lmdeploy/tokenizer.py``:
``HuggingFaceTokenizer.detokenize_incrementally`` with a ``DetokenizeState``) as a tokparity
``cmd:`` engine, driven as ``lmdeploy/serve/async_engine.py`` drives it while it streams a
generation: ``state = DetokenizeState(len(input_ids))``, then after each step
``response, state = tokenizer.detokenize_incrementally(input_ids + output_ids, state,
skip_special_tokens=..., spaces_between_special_tokens=True)``.

    tokparity compare lenml-llama2 --ops stream -c ids -b 'lmdeploy=cmd:{python} .../lmdeploy_incremental.py {tokenizer_json}'

The file is loaded on its own from the unpacked wheel (``LMDEPLOY_SRC``, default
/work/survey6/pkgsrc): ``import lmdeploy`` needs torch. Its imports ``lmdeploy.utils.get_logger``
and (for a version warning only) ``lmdeploy.archs.get_model_arch`` are stubs here. ``step`` K is
taken: lmdeploy decodes however many ids a step brings.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import tempfile
import types
from pathlib import Path


def _load():
    src = Path(os.environ.get("LMDEPLOY_SRC", "/work/survey6/pkgsrc"))
    for name in ("lmdeploy", "lmdeploy.utils", "lmdeploy.archs"):
        mod = types.ModuleType(name)
        mod.__path__ = []
        sys.modules[name] = mod
    sys.modules["lmdeploy.utils"].get_logger = lambda name: logging.getLogger(name)
    sys.modules["lmdeploy.archs"].get_model_arch = lambda *a, **k: (None, types.SimpleNamespace())
    spec = importlib.util.spec_from_file_location("lmdeploy_tokenizer", src / "lmdeploy/tokenizer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(tokenizer_json: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="survey6-lmdeploy-"))
    source = Path(tokenizer_json).resolve()
    os.symlink(source, folder / "tokenizer.json")
    config = source.parent / "tokenizer_config.json"
    if config.exists():
        os.symlink(config, folder / "tokenizer_config.json")
    else:
        (folder / "tokenizer_config.json").write_text("{}")
    return folder


def main() -> int:
    lt = _load()
    tok = lt.HuggingFaceTokenizer(str(_folder(sys.argv[1])))
    print(f"lmdeploy HuggingFaceTokenizer on {type(tok.model).__name__}", file=sys.stderr)

    def stream(ids, prompt, skip, step):
        state = lt.DetokenizeState(prompt)
        deltas = []
        for end in range(prompt + step, len(ids) + step, step):
            response, state = tok.detokenize_incrementally(list(ids[:min(end, len(ids))]), state,
                                                          skip_special_tokens=skip,
                                                          spaces_between_special_tokens=True)
            deltas.append(response)
        return deltas

    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req.get("id")}
        try:
            if req["op"] == "stream":
                reply["deltas"] = stream(req["ids"], req["prompt"], bool(req.get("skip_special")), int(req.get("step", 1)))
            elif req["op"] == "decode" and not any(k in req for k in ("clean_up_spaces", "spaces_between_specials", "remove_special")):
                reply["text"] = tok.decode(req["ids"], skip_special_tokens=bool(req.get("skip_special")))
            else:
                reply["error"] = f"op {req['op']} not supported"
        except Exception as e:
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}", "status": "error"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
