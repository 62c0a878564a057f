"""bert-tokenizer 1.1.8 (npm; a hand-written JavaScript BERT tokenizer: its own punctuation, control,
whitespace and non-spacing-mark tables, a trie WordPiece) as a tokparity cmd: engine. No fixes.

    -b 'berttok=cmd:VENV/bin/python tests/engines/thirdparty/survey10/bert_tokenizer_npm.py {gguf}'

The package reads a ``vocab.json``: a JSON list of pieces spelt as TF.js spells them, a word-initial
piece with a leading ``▁``, a continuation piece bare: the spelling of llama.cpp's WPM GGUF. This
file writes the GGUF's ``tokenizer.ggml.tokens`` to such a list (``gguf`` package) and runs
``bert_tokenizer_npm.mjs`` on it with node: ``new BertTokenizer(vocab, true)`` and ``tokenize(text)``
as its README shows (no [CLS]/[SEP]; ``convertSingleExample`` adds them and pads, so with add_special
the engine answers [CLS] + ``tokenize(text)`` + [SEP], the ids of convertSingleExample before its padding).
parse_special is ignored (the package has no switch). The package is one of this folder's pinned
JavaScript tokenizers (``python tests/engines/thirdparty/install.py``); BERT_TOKENIZER_NPM names
another npm prefix that holds it.
"""
import json
import os
import sys
import tempfile

from gguf import GGUFReader

reader = GGUFReader(sys.argv[1])
f = reader.fields["tokenizer.ggml.tokens"]
tokens = [bytes(f.parts[i]).decode("utf-8") for i in f.data]
folder = tempfile.mkdtemp()
vocab = os.path.join(folder, "vocab.json")
with open(vocab, "w", encoding="utf-8") as out:
    json.dump(tokens, out, ensure_ascii=False)
here = os.path.dirname(os.path.abspath(__file__))
os.environ["NODE_PATH"] = os.path.join(os.environ.get("BERT_TOKENIZER_NPM", os.path.dirname(here)), "node_modules")
os.execvp("node", ["node", os.path.join(here, "bert_tokenizer_npm.cjs"), vocab])
