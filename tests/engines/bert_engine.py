"""transformers' ``BertTokenizer`` on a WordPiece GGUF's vocabulary, as a ``cmd:`` engine.

The vocabulary comes from the GGUF (llama.cpp's converter writes a word-initial piece ``word`` as
``▁word`` and a continuation ``##ing`` as ``ing``; that is undone here into a ``vocab.txt``), and
the normalizer settings from the flags, so one of them can be set against the model:

    --do-lower-case true|false     lower-casing (bert-bge is uncased: true)
    --strip-accents true|false     accent stripping (NFD, marks dropped); unset: follows lower-casing

With neither flag the tokenizer is the model's own (lower-cased, accents stripped): the twin.

    python bert_engine.py bert-bge.gguf --strip-accents false
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from gguf import GGUFReader
from transformers import BertTokenizer

SPACE_MARK = "\u2581"
CONTROL = 3  # llama.cpp's token type


def vocab_lines(path: str) -> list[str]:
    reader = GGUFReader(path)
    tokens_field = reader.fields["tokenizer.ggml.tokens"]
    types_field = reader.fields["tokenizer.ggml.token_type"]
    tokens = [bytes(tokens_field.parts[i]).decode("utf-8") for i in tokens_field.data]
    types = [int(types_field.parts[i][0]) for i in types_field.data]
    lines = []
    for token, kind in zip(tokens, types):
        if token.startswith(SPACE_MARK):
            lines.append(token[1:])  # a word-initial piece
        elif kind == CONTROL or (token.startswith("[") and token.endswith("]")):
            lines.append(token)  # [PAD], [CLS], [unused0], ...
        else:
            lines.append("##" + token)  # a continuation piece
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("gguf")
    parser.add_argument("--do-lower-case", choices=("true", "false"), default="true")
    parser.add_argument("--strip-accents", choices=("true", "false"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vocab = Path(tmp) / "vocab.txt"
        vocab.write_text("\n".join(vocab_lines(args.gguf)) + "\n", encoding="utf-8")
        strip = None if args.strip_accents is None else args.strip_accents == "true"
        tok = BertTokenizer(str(vocab), do_lower_case=args.do_lower_case == "true", strip_accents=strip)
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            ids = tok.convert_tokens_to_ids(tok.tokenize(req["text"]))
            if req.get("add_special"):
                ids = [tok.cls_token_id] + ids + [tok.sep_token_id]
            reply = {"id": req["id"], "ids": ids}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
