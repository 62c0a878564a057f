"""outlines-core 0.2.14 (PyPI, dottxt's Rust core of Outlines): the token table of
``outlines_core.Vocabulary.from_pretrained`` (token bytes -> ids, built by its Rust
``TokenProcessor``) as a tokparity cmd: engine for the pieces op. No fixes.

    -b 'outlines-core=cmd:VENV/bin/python tests/engines/thirdparty/survey11/outlines_core_pieces.py {tokenizer_json} {tokenizer_config}'

Ops: pieces only (encode answers "not supported", which tokparity reads as "not this op").

``Vocabulary.from_pretrained(MODEL)`` reads the model from the Hugging Face cache (hf-hub's
``Api.get`` looks in the cache first; no network is used). A private cache is made once per model
under ``$TMPDIR/tokparity-survey11-outlines-core/``: ``hub/models--tokparity--NAME/snapshots/0…0/``
with the model's ``tokenizer.json`` and ``tokenizer_config.json`` (links) and ``refs/main``, as
``huggingface_hub`` lays a download out. Its EOS locator (src/vocabulary/locator.rs) builds its
own ``ApiBuilder::new()``, which reads ``$HOME/.cache/huggingface``: ``HOME`` is pointed at the
private folder for the call (``HF_HOME`` alone reaches the tokenizer but not the locator).

The table is read off the vocabulary's public ``str()`` (``["0x62", "0x63"] -> [2]`` per token):
each id gets the bytes of the token that lists it; an id no token lists is ``null``. The table may
list one id under two spellings: an added token that is not special and is also in the model's
vocabulary is inserted as its content (src/vocabulary/mod.rs:110-113) and again as the processed
vocabulary token (mod.rs:123-127); Gemma 3's ``▁▁`` (id 138) is under both ``'▁▁'`` and ``'  '``.
Such an id is given the first spelling (the added token's content, as tokenizer.json writes it);
``notes`` on the reply count them.
"""
import json
import os
import re
import sys
import tempfile
from pathlib import Path

TOKENIZER_JSON, TOKENIZER_CONFIG = sys.argv[1:3]


def cache_folder():
    tj = Path(TOKENIZER_JSON).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "-", tj.parent.parent.parent.name or "model")[:60]
    home = Path(tempfile.gettempdir()) / "tokparity-survey11-outlines-core" / name
    repo = home / ".cache" / "huggingface" / "hub" / f"models--tokparity--{name}"
    snap = repo / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text("0" * 40)
    for src, dst in ((TOKENIZER_JSON, "tokenizer.json"), (TOKENIZER_CONFIG, "tokenizer_config.json")):
        link = snap / dst
        if not link.exists():
            link.symlink_to(os.path.abspath(src))
    return home, f"tokparity/{name}"


def table():
    home, model = cache_folder()
    os.environ["HOME"] = str(home)
    os.environ["HF_HOME"] = str(home / ".cache" / "huggingface")
    os.environ["HF_HUB_OFFLINE"] = "1"
    import outlines_core

    vocab = outlines_core.Vocabulary.from_pretrained(model)
    tj = json.loads(Path(TOKENIZER_JSON).read_text())
    size = 1 + max([max(tj["model"]["vocab"].values()) if isinstance(tj["model"]["vocab"], dict)
                    else len(tj["model"]["vocab"]) - 1] + [t["id"] for t in tj.get("added_tokens", [])])
    spellings = [[] for _ in range(size)]
    line = re.compile(r"^\[(.*)\] -> \[(.*)\]$")
    for row in str(vocab).splitlines()[1:]:
        m = line.match(row)
        if not m:
            continue
        data = bytes(int(h.strip().strip('"'), 16) for h in m.group(1).split(",") if h.strip())
        for i in m.group(2).split(","):
            if i.strip() and data not in spellings[int(i)]:
                spellings[int(i)].append(data)
    added = {t["id"]: t["content"].encode() for t in tj.get("added_tokens", [])}
    pieces, twice = [], 0
    for i, found in enumerate(spellings):
        if len(found) > 1:
            twice += 1
            found = [added[i]] if added.get(i) in found else sorted(found)
        pieces.append(found[0].hex() if found else None)
    notes = [f"{twice} ids are in the table under two spellings; each is given its added token's content"] if twice else []
    return pieces, notes


PIECES = NOTES = None
for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        if req["op"] == "pieces":
            if PIECES is None:
                PIECES, NOTES = table()
            reply["pieces"] = PIECES
            if NOTES:
                reply["notes"] = NOTES
        else:
            reply["error"] = f"op {req['op']} not supported"
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
