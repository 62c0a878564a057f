"""transformers-cfg 0.2.7 (PyPI) per-token byte table as a tokparity cmd: pieces engine.

    -b 'tcfg=cmd:VENV/bin/python tests/engines/thirdparty/survey8/tcfg_pieces.py MODELS/Qwen3-8B'
    (model folders: Qwen3-8B for qwen3, Meta-Llama-3-8B-Instruct for llama-bpe, Llama-2-7b-hf for lenml-llama2,
    gemma-3-4b-it for gemma-3: each holds the zoo model's own tokenizer.json and tokenizer_config.json, laid out
    as the Hugging Face repo of that name is; Qwen3-8B also has the repo's vocab.json/merges.txt, written from
    the tokenizer.json, which transformers-cfg needs to load the slow tokenizer)

The venv: python3.11 -m venv VENV; pip install transformers==4.51.3 'tokenizers<0.22'
sentencepiece protobuf numpy termcolor; pip install --no-deps transformers-cfg==0.2.7 (no torch: only the
tokenization modules are imported, which do not need it).

The table is what the grammar-constrained decoder matches tokens by: ByteTrie.from_tokenizer
(transformers_cfg/tokenization/byte_trie.py:52-67) inserts mapping.map(token_id) for every token_id in
range(TCFG_Tokenizer.real_vocab_size()) except get_special_token_ids_to_excluded(); mapping is
TokenizerMiddleMapping.from_hf_tokenizer(AutoTokenizer.from_pretrained(folder)). This engine answers those
same bytes per id, and null for the ids the trie leaves out (the excluded special tokens, and ids past
real_vocab_size). ByteProxyMapping (GPT-2-style vocabularies) loads AutoTokenizer.from_pretrained("gpt2",
use_fast=False) from the Hub for its byte table when the tokenizer has none (Llama 3); offline, the engine
runs in MODELS, which holds a local "gpt2" folder (only its byte_encoder, bytes_to_unicode(),
is read). Encode is not answered.
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))

from transformers import AutoTokenizer  # noqa: E402
from transformers_cfg.tokenization.middle.TokenizerMiddleMapping import TokenizerMiddleMapping  # noqa: E402
from transformers_cfg.tokenization.tokenizer import TCFG_Tokenizer  # noqa: E402


def table(folder):
    tok = AutoTokenizer.from_pretrained(folder)
    mapping = TokenizerMiddleMapping.from_hf_tokenizer(tok)
    tcfg = TCFG_Tokenizer.from_hf_tokenizer(tok)
    ignore = tcfg.get_special_token_ids_to_excluded()
    n = tcfg.real_vocab_size()
    out = []
    for token_id in range(n):  # as ByteTrie.from_tokenizer does
        out.append(None if token_id in ignore else mapping.map(token_id))
    return out


def main():
    folder = sys.argv[1]
    cached = None
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        if req.get("op") == "pieces":
            try:
                if cached is None:
                    cached = [None if b is None else bytes(b).hex() for b in table(folder)]
                reply["pieces"] = cached
            except Exception as e:
                reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}", "status": "error"}
        else:
            reply["error"] = f"op {req.get('op')!r} not supported"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
