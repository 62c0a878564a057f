"""A case an engine gives no ids for has a shape: what the engine did (failed, or gave no answer in
time) and what the reference gives. A port that fails on some texts is then described on every
row, not left blank. The engine here is the real ``tokenizers`` library that raises on any text
with a character outside ASCII, as a port whose byte table covers ASCII only does; its twin
raises on nothing."""

from __future__ import annotations

from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = '''
from tokenizers import Tokenizer


class Engine:
    def __init__(self, files):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])

    def encode(self, text, add_special=False, parse_special=False):
        return self.tok.encode(text, add_special_tokens=add_special).ids


class AsciiOnly(Engine):
    def encode(self, text, add_special=False, parse_special=False):
        if not text.isascii():
            raise ValueError("no byte for this character")
        return super().encode(text, add_special, parse_special)
'''


def test_a_failed_encode_says_what_the_engine_did(tmp_path: Path, zoo):
    zoo("llama-bpe")
    (tmp_path / "ascii_engine.py").write_text(ENGINE, "utf-8")
    backends = [f"bug=py:{tmp_path / 'ascii_engine.py'}:AsciiOnly", f"twin=py:{tmp_path / 'ascii_engine.py'}:Engine"]
    results = run_compare(["llama-bpe"], ["edge"], backends, CompareOptions(diagnose=False))
    failed = [m for m in results.mismatches if m.backend == "bug" and m.cls == "crash"]
    assert len(failed) > 100  # (the edge corpus's texts outside ASCII)
    assert all(m.shape.startswith("the engine failed on a text of ") and " where the reference gives " in m.shape
               for m in failed)
    assert not [m for m in results.mismatches if m.backend == "twin" and m.cls == "crash"]
