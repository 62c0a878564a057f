"""The `bpe` crate's backtracking encoder (tokparity/reference/backtracking.py) as the
``model.backtracking`` variant swaps it in: rank BPE on a vocabulary whose every token encodes to
itself, as the crate claims (Qwen3's), and other ids on Llama 3's, where 588 tokens past cl100k's do
not (quicktok-v1 and a blind port of the crate give these ids: tests/diagnose)."""

from __future__ import annotations

from tokparity.corpus import load_corpus
from tokparity.diagnose.search import Diagnoser
from tokparity.reference import RefTokenizer
from tokparity.reference.backtracking import Backtracking
from tokparity.vocab import load_vocab

BACKTRACKING = ("model.backtracking",)


def _diagnoser(zoo, model: str, role: str) -> Diagnoser:
    return Diagnoser(RefTokenizer(load_vocab(zoo(model).files[role])), False, False)


def test_rank_bpe_where_every_token_encodes_to_itself(zoo):
    diagnoser = _diagnoser(zoo, "qwen3", "tokenizer_json")
    texts = [c.text for c in load_corpus("multilingual")]
    differ = [t for t in texts if diagnoser.encode_remembered(BACKTRACKING, t) != diagnoser.encode_remembered((), t)]
    assert len(texts) > 300 and differ == []


def test_other_ids_on_llama_3(zoo):
    for role in ("gguf", "tokenizer_json"):  # (llama.cpp's pipeline and tokenizers')
        diagnoser = _diagnoser(zoo, "llama-bpe", role)
        assert diagnoser.encode_remembered((), " každou") == [16909, 12453, 114541]
        assert diagnoser.encode_remembered(BACKTRACKING, " každou") == [103870, 283]
        texts = [c.text for c in load_corpus("multilingual")]
        differ = {t[:12] for t in texts if diagnoser.encode_remembered(BACKTRACKING, t) != diagnoser.encode_remembered((), t)}
        assert len(differ) == 5, differ  # cs, tr, ru, bg, sr (the blind port and quicktok-v1 differ on these five)


def test_parts_are_found_in_rank_order_whatever_is_asked_first():
    """A token's parts are those the crate's build, in rank order, finds: asked for the last token
    first, the answer is the same as asked in order."""
    tokens = ["a", "b", "c", "ab", "bc", "abc", "cab", "bca"]
    in_order, last_first = Backtracking(tokens), Backtracking(tokens)
    wanted = [in_order.parts(i) for i in range(len(tokens))]
    assert [last_first.parts(i) for i in reversed(range(len(tokens)))][::-1] == wanted
    assert wanted[5] == (3, 2)  # 'abc' is 'ab' + 'c' ('ab' ranks before 'bc')
