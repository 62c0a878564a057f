"""How a decoding row's cause is chosen among the variants that reproduce it (tokparity.diagnose.decoding.prefer)."""

from __future__ import annotations

from tokparity.diagnose.decoding import prefer
from tokparity.records import Diagnosis


def row(*names: str) -> Diagnosis:
    return Diagnosis(names[0], "", (names[0],), tuple((n,) for n in names[1:]), stage="stream")


def test_a_stream_row_keeps_the_streams_own_name_before_a_decodes():
    """mlx-lm's streamer reads byte 0x00's glyph as missing: stream.byte-zero-unmapped says so. The
    decode variant that leaves one glyph unmapped gives the same text and is found on more rows,
    but a stream's own name is the more exact one."""
    rows = [row("stream.byte-zero-unmapped", "decode.glyphs-not-mapped"),
            row("stream.prompt-dropped", "decode.glyphs-not-mapped"),
            row("stream.prompt-dropped", "decode.glyphs-not-mapped")]
    assert [d.cause for d in prefer(rows)] == ["stream.byte-zero-unmapped", "stream.prompt-dropped",
                                               "stream.prompt-dropped"]


def test_among_a_streams_own_names_the_commonest_is_taken():
    rows = [row("stream.deltas-lstripped", "stream.restart-after-newline"),
            row("stream.restart-after-newline")]
    assert [d.cause for d in prefer(rows)] == ["stream.restart-after-newline", "stream.restart-after-newline"]
