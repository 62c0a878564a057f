"""A piece's bytes written as text, learnt from a case (tokparity.diagnose.learnt_bytes)."""

from __future__ import annotations

from tokparity.diagnose import learnt_bytes
from tokparity.diagnose.learnt import is_learnt, said_of
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY
from tokparity.vocab import load_vocab


def pieces(zoo, text: str) -> tuple[RefTokenizer, list[int], list[bytes]]:
    ref = RefTokenizer(load_vocab(zoo("qwen3").primary[1]))
    ids = ref.encode(text, add_special=False)
    return ref, ids, ref.piece_bytes(ids)


def not_text(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def test_a_notation_is_read_off_a_one_byte_piece_in_each_scope_that_gives_it(zoo):
    ref, ids, right = pieces(zoo, "A flamingo 🦩, a goose 🪿 and 中文")
    assert any(len(p) == 1 and p[0] >= 0x80 for p in right) and any(len(p) > 1 and not_text(p) for p in right)
    # every byte of a piece that is not UTF-8 alone, as <0xHH>
    got = [b"".join(b"<0x%02X>" % b for b in p) if not_text(p) else p for p in right]
    keys = learnt_bytes.learnt(ref, ids, got)
    assert keys == ['pieces.bytes-as-text:["<0x", "X", ">", "not UTF-8"]'], keys
    assert is_learnt(keys[0]) and said_of(keys[0]) == "each byte of a piece that is not UTF-8 alone written as '<0xNN>'"
    assert learnt_bytes.run_of(keys[0])(ref, ids, 0, AS_FILES_SAY) == [got]
    # only the one-byte pieces, as llama.cpp's server writes them
    got = [b"byte: \\x%02x" % p[0] if len(p) == 1 and p[0] >= 0x80 else p for p in right]
    assert learnt_bytes.learnt(ref, ids, got) == ['pieces.bytes-as-text:["byte: \\\\x", "x", "", "one byte"]']


def test_no_notation_is_learnt_where_a_piece_of_text_differs(zoo):
    ref, ids, right = pieces(zoo, "A flamingo 🦩 flies")
    got = [p.upper() if not not_text(p) else b"<0x%02X>" % p[0] for p in right]
    assert learnt_bytes.learnt(ref, ids, got) == []
    assert learnt_bytes.run_of('pieces.bytes-as-text:["<0x", "X", ">", "one byte"]')(
        ref, ref.encode("plain words", add_special=False), 0, AS_FILES_SAY) == [None]
