"""The mutation suite for causes first met in real packages (tests/diagnose/test_real_packages.py):
``specials.other-release`` (llama3-tokenizer-js's Llama 3.1 names, kitoken's ChatML specials on
cl100k), ``model.lookup-key`` (@microsoft/tiktokenizer's packed rank-map keys, ai-tokenizer's
keys decoded as text), ``model.prototype-lookup`` (ai-tokenizer's ranks in a plain object) and kitoken's two ways with Gemma 3's added tokens,
``user-defined.unmergeable`` and ``user-defined.first-listed``. Here tokenizers itself carries each
bug, planted by tests/engines/tokenizers_engine.py, and its twin is the same file unedited
(tests/diagnose/mutation.py says how each check reads).

* ``--specials-of llama-3.1``: Llama 3's tokenizer.json with its added tokens named as Llama 3.1
  names ids 128000-128255: with parse_special on, ``<|reserved_special_token_2|>`` is 128005 and
  ``<|python_tag|>`` 128010, where Llama 3 has 128004 and plain text.
* ``--rank-bpe --packed-keys``: tiktoken's merge by rank with every byte string looked up through a
  key that packs its bytes six at a time into integers (@microsoft/tiktokenizer's BinaryMap):
  ``'!\\0'`` is ``[0]`` (``'!\\0'`` reads as ``'!'``), and on GPT-4o's o200k ``b'\\0'`` (188)
  shares the key of ``b'\\0\\0'`` (156344), which wins. Its twin merges by rank with exact keys.
* ``--rank-bpe --decoded-keys``: the same merge with ai-tokenizer's two rank tables, every byte
  string that is UTF-8 looked up as the text JavaScript's TextDecoder makes of it, a leading BOM
  dropped: ``'a\\ufeffb'`` is ``[64, 65]`` on GPT-4o's o200k where the oracle has ``[64, 5574, 65]``.
* ``--plain-object``: every pre-token looked up whole in a plain JavaScript object first (the
  ranks of ai-tokenizer, the cache of gpt3-tokenizer before 1.1.5): ``a.hasOwnProperty(b)`` fails on
  Claude's vocabulary (``hasOwnProperty`` is no token there, and the object finds the function every
  object inherits); on Llama 3, ``.hasOwnProperty`` is one piece and ``toString`` a token, so only a
  name that is no token, after a digit, a line break or a run of punctuation, fails.
* ``--added-unmergeable``: Gemma 3's user-defined pieces out of the model's vocabulary and merges:
  ``'  '`` is two ``▁`` (236743), not ``▁▁`` (138); still matched whole where the text has ``▁▁``.
* ``--added-first-listed``: Gemma 3's added tokens cut out by one alternation in id order:
  ``'\\n\\n'`` is two ``'\\n'`` (107), not 108; ``<unused1>0`` is ``<unused1>`` and ``0``.
"""

from __future__ import annotations

import pytest
from mutation import Mutation, check_single, compare_runs, engine, param
from thirdparty import compare, texts_file

HF = ("tokenizers_engine.py", "{tokenizer_json}")

MUTATIONS = [
    param(Mutation("specials.other-release", "llama-bpe", engine(*HF, "--specials-of", "llama-3.1"), engine(*HF),
                   ("focus:llama3-reserved",), parse_special=True), "llama-31-names-llama-bpe"),
    param(Mutation("model.lookup-key", "gpt4o", engine(*HF, "--rank-bpe", "--packed-keys"), engine(*HF, "--rank-bpe"),
                   ("focus:nul-bytes",), at_least=8), "packed-keys-gpt4o"),
    param(Mutation("model.lookup-key", "gpt4o", engine(*HF, "--rank-bpe", "--decoded-keys"), engine(*HF, "--rank-bpe"),
                   ("focus:bom-texts",)), "decoded-keys-gpt4o"),
    param(Mutation("model.prototype-lookup", "claude", engine(*HF, "--plain-object"), engine(*HF),
                   ("focus:inherited-names",)), "plain-object-claude"),
    param(Mutation("model.prototype-lookup", "llama-bpe", engine(*HF, "--plain-object"), engine(*HF),
                   ("focus:inherited-names",)), "plain-object-llama-bpe"),
    param(Mutation("user-defined.unmergeable", "gemma-3", engine(*HF, "--added-unmergeable"), engine(*HF),
                   ("focus:whitespace-pieces",), at_least=8), "unmergeable-gemma-3"),
    param(Mutation("user-defined.first-listed", "gemma-3", engine(*HF, "--added-first-listed"), engine(*HF),
                   ("focus:whitespace-pieces",), at_least=8), "first-listed-gemma-3"),
]


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([p.values[0] for p in MUTATIONS], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m", MUTATIONS)
def test_lookup_cause(runs, m):
    check_single(runs[m.group], m)


def test_an_engine_that_fails_on_every_text_is_not_named(tmp_path):
    """A crash is one outcome whatever its reason: an engine that fails on every text fails on each
    that holds ``toString`` too, where the plain-object variant fails. On texts that all hold such a
    piece nothing but agreements could tell the two apart, and there are none: no verdict is proven,
    and no row is named ``model.prototype-lookup``."""
    texts = texts_file(tmp_path, "names", ["x.toString()", "a.hasOwnProperty(b)", "n.valueOf() + 1", "(isPrototypeOf)"])
    run = compare(tmp_path, "p50k-base", engine("hostile_engine.py", "error"), texts)
    assert run.exit_code == 1
    assert run.root["explains"] == 4 and not run.root["proven"], run.root
    assert {(row["class"], row["cause"]) for row in run.rows} == {("crash", "")}
