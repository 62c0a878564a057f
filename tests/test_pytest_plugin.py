"""The pytest plugin as a user meets it: a test file in their own repository, run by pytest in a
child process, with tokparity's plugin loaded through its ``pytest11`` entry point.

The engines are real: tokparity's reference (a correct engine) and the greedy longest-match engine
of the Gemma 3 write-up (examples/engines/greedy_engine.py), on the zoo's llama-spm and its oracle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tokparity.zoo import cache_dir

pytest_plugins = ["pytester"]


ENGINES = Path(__file__).resolve().parent / "engines"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "engines"  # the greedy engine

ENGINE_MODULE = f'''
import sys
sys.path.insert(0, {str(EXAMPLES)!r})
from greedy_engine import GreedyEngine
from tokparity.backends.ref import RefBackend
from tokparity.vocab import load_vocab
from tokparity.zoo import resolve_model

MODEL = resolve_model("llama-spm")
_ref = RefBackend(MODEL)
_greedy = GreedyEngine(load_vocab(MODEL.files["gguf"]))


def ref_encode(text, add_special, parse_special):
    return _ref.encode(text, add_special, parse_special)


def greedy_encode(text, add_special, parse_special):
    return _greedy.encode(text, add_special)
'''


@pytest.fixture(autouse=True)
def shared_zoo_cache(monkeypatch):
    """pytester gives the child a HOME of its own; the zoo cache must stay the machine's, or every
    child would fetch the zoo again."""
    monkeypatch.setenv("TOKPARITY_CACHE", str(cache_dir()))


def test_plugin_is_registered_by_entry_point(pytester):
    result = pytester.runpytest_subprocess("--trace-config", "--co", "-q")
    result.stdout.fnmatch_lines(["*tokparity*tokparity/pytest_plugin.py*"])


def test_correct_engine_passes_and_greedy_fails_naming_the_class_and_the_cause(pytester):
    pytester.makepyfile(engines=ENGINE_MODULE)
    pytester.makepyfile(test_parity='''
        from tokparity.pytest_plugin import assert_tokenizer_parity
        from engines import greedy_encode, ref_encode

        def test_reference_callable():
            assert assert_tokenizer_parity(ref_encode, model="llama-spm", corpus="edge") == 884

        def test_reference_as_py_spec():  # the same engine named as a backend spec, in a child process
            assert assert_tokenizer_parity("py:engines:ref_encode", model="llama-spm", corpus="multilingual") == 353

        def test_greedy(tokenizer_parity):
            tokenizer_parity(greedy_encode, model="llama-spm", corpus="edge")
    ''')
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "E *AssertionError: py:engines:greedy_encode disagrees with golden/llama.cpp on 181 of 884 cases of "
        "'edge' (llama-spm):",
        "E *  root cause: model.greedy-longest-match (the reference with it gives the engine's ids on 181 of 181 "
        "mismatching cases)",
        "E *  classes: whitespace-runs 107, merge-order 74",
        "E *edge/ascii-0096: class whitespace-runs (stage *), first difference at token 0",
        "E *  text: '␣!'",
        "E *  cause: model.greedy-longest-match: *",
        "E *  0  29871 '▁' * ≠ 259 '▁▁'",
        "E *… and 178 more",
    ])


def test_strategies_fixture_with_hypothesis(pytester):
    pytester.makepyfile(engines=ENGINE_MODULE)
    pytester.makepyfile(test_generated='''
        from hypothesis import given, settings, strategies as st
        from tokparity.pytest_plugin import assert_tokenizer_parity
        from engines import greedy_encode, ref_encode

        @settings(max_examples=25, deadline=None, database=None)
        @given(data=st.data())
        def test_reference(data, tokparity_strategies):
            text = data.draw(tokparity_strategies("llama-spm").vocab_texts())
            assert assert_tokenizer_parity(ref_encode, model="llama-spm", texts=[text]) == 1

        @settings(max_examples=200, deadline=None, database=None, derandomize=True)
        @given(data=st.data())
        def test_greedy(data, tokparity_strategies):
            text = data.draw(tokparity_strategies("llama-spm").whitespace_texts())
            assert_tokenizer_parity(greedy_encode, model="llama-spm", texts=[text])
    ''')
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    # Hypothesis shrinks to the simplest whitespace text the greedy engine gets wrong
    result.stdout.fnmatch_lines(["E *AssertionError: py:engines:greedy_encode disagrees with golden/llama.cpp on 1 of "
                                 "1 cases of the given texts (llama-spm):",
                                 "E *texts/text-0: class whitespace-runs (stage *), first difference at token 0",
                                 "E *  text: '␣a'"])
