"""Stage traces: the steps the reference takes on one input, as readable lines.

``tokparity encode MODEL TEXT -b ref --trace`` prints these, so a user can watch the algorithm
work on their own text the way the write-ups of parity bugs do under a debugger::

    partition      ['Hello world']
    normalize      '▁Hello▁world'
    merge   1      '▁' + 'H' (score -1020.0) -> ▁H e l l o ▁ w o r l d
    ...
    ids            [15043, 3186]
    pieces         ['▁Hello', '▁world']
"""

from __future__ import annotations

from tokparity.reference.bpe import TRACED_STEPS, TRACED_WORD
from tokparity.reference.normalize import escape_spaces
from tokparity.reference.specials import partition


def show(text: str) -> str:
    """Make whitespace and control characters visible: ``"a b\\n"`` -> ``'a␣b↵'``."""
    out = []
    for ch in text:
        if ch == " ":
            out.append("␣")
        elif ch == "\n":
            out.append("↵")
        elif ch == "\t":
            out.append("⇥")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def trace(tok, text: str, add_special: bool = False, parse_special: bool = False) -> list[str]:
    p = tok.pipeline
    lines = [f"{'input':14} {show(text)}"]
    specials = getattr(p, "specials", [])
    fragments = partition(text, specials, parse_special) if specials else ([text] if text else [])
    shown = [show(f) if isinstance(f, str) else f"<{p.vocab.tokens[f]}>({f})" for f in fragments]
    lines.append(f"{'partition':14} [{', '.join(shown)}]")
    algo = p.algorithm
    for index, frag in enumerate(fragments):
        if not isinstance(frag, str):
            continue
        if tok.flavour == "llama.cpp" and algo == "spm":
            # llama.cpp's is_prev_special: the first fragment and any after a special token
            prev_special = index == 0 or isinstance(fragments[index - 1], int)
            lines += _trace_spm_llama(p, frag, prev_special)
        elif algo == "bpe" and tok.flavour == "llama.cpp":
            lines += _trace_bpe(p, frag)
        elif algo == "ugm":
            lines += _trace_ugm(p, frag)
        elif algo == "spm":
            normalized = p.normalize(frag)
            lines.append(f"{'normalize':14} {show(normalized)}")
            steps: list = []
            p.segment(normalized, trace=steps)
            lines += _merge_lines(steps, "score")
        elif algo == "wpm":
            words = p.pre_tokenize(frag)
            lines.append(f"{'pre-tokenize':14} {words}")
            for word in words:
                ids = p.encode_text(word)
                lines.append(f"{'match':14} {show('▁' + word)} -> {[p.vocab.tokens[i] for i in ids]}")
        else:
            lines.append(f"{'normalize':14} {show(tok.normalize(frag))}")
            lines.append(f"{'pre-tokenize':14} {[show(w) for w in tok.pre_tokenize(frag)]}")
    ids = tok.encode(text, add_special, parse_special)
    lines.append(f"{'ids':14} {ids}")
    lines.append(f"{'pieces':14} {tok.pieces(ids)}")
    return lines


def _merge_lines(steps, key: str) -> list[str]:
    lines = []
    for n, step in enumerate(steps[:TRACED_STEPS], 1):
        value = getattr(step, key)
        lines.append(f"{'merge':8}{n:>6} {show(step.left)} + {show(step.right)} ({key} {value}) -> "
                     + " ".join(show(s)[1:-1] for s in step.symbols))
    if len(steps) > TRACED_STEPS:
        lines.append(f"{'':14} … {len(steps) - TRACED_STEPS} more merges")
    return lines


def _trace_spm_llama(p, frag: str, prev_special: bool) -> list[str]:
    text = escape_spaces((" " if p.flags.add_space_prefix and prev_special else "") + frag)
    lines = [f"{'normalize':14} {show(text)}", f"{'symbols':14} " + " ".join(show(c)[1:-1] for c in text)]
    steps: list = []
    p.encode_text(text, trace=steps)
    return lines + _merge_lines(steps, "score")


def _trace_bpe(p, frag: str) -> list[str]:
    lines = [f"{'normalize':14} {show(p.normalize(frag))}"]
    words = p.pretokenizer.split(p.normalize(frag))
    lines.append(f"{'pre-tokenize':14} [{', '.join(show(w) for w in words)}]")
    for word in words:
        steps: list = []
        ids = p.encode_word(word, trace=steps)
        lines.append(f"{'word':14} {show(word)} -> {[p.vocab.tokens[i] for i in ids]}")
        lines += _merge_lines(steps, "rank") if len(word) <= TRACED_WORD else \
            [f"{'':14} … merges not traced: a word of more than {TRACED_WORD:,} characters"]
    return lines


def _trace_ugm(p, frag: str) -> list[str]:
    normalized = p.normalize(frag)
    lines = [f"{'normalize':14} {show(normalized)}"]
    if not normalized:
        return lines
    best = p.model.lattice(normalized)
    path = []
    j = len(normalized)
    while j > 0:
        node = best[j]
        path.append((node.start, j, node.token_id, node.score))
        j = node.start
    for start, end, token_id, score in reversed(path[-TRACED_STEPS:]):
        piece = normalized[start:end]
        lines.append(f"{'lattice':14} [{start}:{end}] {show(piece)} id {token_id} "
                     f"score {p.model.pieces.get(piece, (token_id, p.model.unk_score))[1]:.6g} "
                     f"best path so far {score:.6g}")
    return lines
