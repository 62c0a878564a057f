"""How one mismatch's two answers are shown: both id lists side by side, or the texts of a
decoding op and the prompts of a chat, whitespace made visible (the write-ups, ``explain CASE``,
the JUnit failures)."""

from __future__ import annotations

from tokparity.chat import RAISED_SHOWN
from tokparity.diff.align import align
from tokparity.records import Mismatch
from tokparity.report import overview
from tokparity.report.nodes import CODE, MUTED, TEXT, AlignedRow, Alignment, Comparison, Fields, Inline, Run, runs
from tokparity.report.pieces import PLAIN, readable
from tokparity.report.writeup import Tokens, comparison, tokens
from tokparity.textview import single_line, visible

CASE_SHOWN = 200  # characters of the most telling case's text (explain CASE shows all)


def text_runs(text: str, limit: int | None = None) -> Inline:
    """A corpus text as a run (whitespace made visible), cut at ``limit`` characters with its length said."""
    shown, more = cut(text, limit)
    return runs(Run(shown, TEXT), more)


def cut(text: str, limit: int | None = None) -> tuple[str, str]:
    """``text`` made visible and cut at ``limit``, and ``… (1,234 characters)`` when cut."""
    if limit is None or len(text) <= limit:
        return visible(text), ""
    return visible(text[:limit]), f"… ({len(text):,} characters)"


def comparison_of(m: Tokens, style: str, oracle: str, backend: str) -> Comparison:
    return Comparison(oracle, backend, comparison(m, style))


def decoded_outputs(m: Mismatch, style: str = PLAIN, limit: int = 40) -> Fields:
    """What the decoder and the backend answered for a decoding op, whitespace made visible: the
    case, its ids (each piece as ``style`` reads it: a byte-level piece's bytes, not GPT-2's
    glyphs), both texts (a stream's deltas apart, ``│`` between them; a piece's bytes in hex).
    For chat: the conversation, then each side's prompt, or its pieces where it gave ids only."""
    def pieces(of: list[str]) -> str:
        return " ".join(readable(p, style) for p in of[:limit]) + (f" … ({len(of):,} ids)" if len(of) > limit else "")

    case: tuple[str, Inline] = ("Case", runs(f"{m.corpus}/{m.case_id}", *((" ", Run(m.tags["about"], MUTED))
                                                                          if "about" in m.tags else ())))
    if m.op == "chat":  # (a conversation's JSON, cut short, read as noise: each message's start)
        rows = [case] + ([("Conversation", runs(overview.conversation_line(m.text)))] if m.text else [])
        same = "".join(m.oracle_output) == "".join(m.backend_output)  # (a BOS twice: the texts read alike)
        for side, out, its_pieces in ((m.oracle, m.oracle_output, m.oracle_pieces),
                                      (m.backend, m.backend_output, m.backend_pieces)):
            if same and its_pieces:
                rows.append((f"{side}, ids", runs(Run(pieces(its_pieces), CODE))))
            elif "".join(out).startswith(RAISED_SHOWN):  # (a refusal is words: no whitespace marks, controls spelt)
                rows.append((side, runs(Run(single_line("".join(out)[:CASE_SHOWN]), MUTED))))
            elif out or not its_pieces:
                rows.append((side, text_runs("".join(out), CASE_SHOWN)))
            else:  # (an engine that gives ids only: its prompt is its pieces)
                rows.append((f"{side}, ids only", runs(Run(pieces(its_pieces), CODE))))
        return Fields(tuple(rows))
    # A stream's first ids are its prompt: they are not streamed, so they are shown apart.
    prompt = int(m.tags.get("prompt") or 0) if m.op == "stream" else 0
    rows = [case] + ([("Prompt ids", runs(Run(pieces(m.oracle_pieces[:prompt]), CODE), Run(" (not streamed)", MUTED)))]
                     if prompt else [])
    rows.append(("Streamed ids" if prompt else "Ids", runs(Run(pieces(m.oracle_pieces[prompt:]), CODE))))
    if m.text:
        rows.append(("Text", text_runs(m.text, CASE_SHOWN)))
    if m.op == "pieces":
        differ = [k for k, (a, b) in enumerate(zip(m.oracle_output, m.backend_output)) if a != b][:4]
        for side, out in ((m.oracle, m.oracle_output), (m.backend, m.backend_output)):
            rows.append((side, joined([runs(f"{readable(m.oracle_pieces[k], style)} ", Run(out[k] or "–", CODE))
                                       for k in differ])))
        return Fields(tuple(rows))
    if m.op == "stream":  # (the two rows say which is which: a library's stream is judged by its own decode)
        rows.append((f"{m.oracle}, decoded whole", text_runs("".join(m.oracle_output), CASE_SHOWN)))
        rows.append((f"{m.backend}, streamed", joined([runs(Run(visible(d), TEXT)) for d in m.backend_output[:limit]],
                                                      " │ ")))
    else:
        rows.append((m.oracle, text_runs("".join(m.oracle_output), CASE_SHOWN)))
        rows.append((m.backend, text_runs("".join(m.backend_output), CASE_SHOWN)))
    return Fields(tuple(rows))


def mismatch_comparison(m: Mismatch, style: str) -> Comparison:
    """The ids of ``m`` side by side (the write-ups, explain CASE, the JUnit failures)."""
    return comparison_of(m, style, m.oracle, m.backend)


def alignment(m: Mismatch, style: str) -> Alignment:
    """Both id lists as the classifier aligned them: equal runs once (longer than six tokens
    folded to the first and last two), differing runs side by side."""
    rows = []
    for tag, i1, i2, j1, j2 in align(m.oracle_ids, m.backend_ids).opcodes:
        a = tokens(m.oracle_ids[i1:i2], m.oracle_pieces[i1:i2], style)
        b = tokens(m.backend_ids[j1:j2], m.backend_pieces[j1:j2], style)
        if tag == "equal" and len(a) > 6:  # keep context short: first and last two
            rows.append(AlignedRow("fold", a[:2], b[:2], i1, j1, skipped=len(a) - 4, tail=a[-2:]))
        else:
            rows.append(AlignedRow("equal" if tag == "equal" else "diff", a, b, i1, j1))
    return Alignment(m.oracle, m.backend, tuple(rows))


def joined(parts: list[Inline], sep: str = ", ") -> Inline:
    out: list[Run] = []
    for n, part in enumerate(parts):
        if n:
            out.append(Run(sep))
        out.extend(part)
    return tuple(out)
