"""A hand-written streaming detokenizer for a byte-level BPE tokenizer.json (Llama 3): a py: engine.

A helper trying the README as a newcomer wrote it, with a bug of its own choosing, before the
cause that names it existed (2026-12-04). It keeps a byte buffer and sends each UTF-8 character
once all its bytes are in. Its bug: utf8_len() forgets 4-byte sequences (lead bytes 0xF0-0xF7,
emoji and other astral characters), so it sends such a character after 3 of its 4 bytes.
``FixedEngine`` has the length table whole.

    -b 'mine=py:tests/engines/blind/utf8_len_stream.py:Engine'
"""
import json


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(map(chr, cs), bs))


def utf8_len(lead):
    """How many bytes the character starting with this byte has; 0 if it cannot start one."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF8:   # BUG: 0xF0-0xF7 start 4-byte characters
        return 3
    return 0


def utf8_len_fixed(lead):
    if 0xF0 <= lead < 0xF5:
        return 4
    return utf8_len(lead) if lead < 0xF0 else 0


class Streamer:
    def __init__(self, path, length=utf8_len):
        self.length = length
        data = json.load(open(path, encoding="utf-8"))
        u2b = bytes_to_unicode()
        self.piece = {}
        for tok, i in data["model"]["vocab"].items():
            self.piece[i] = bytes(u2b[c] for c in tok)
        for t in data["added_tokens"]:
            self.piece[t["id"]] = t["content"].encode("utf-8")

    def _take(self, buf):
        """Split buf into the text of its complete characters and the bytes held back."""
        out = []
        while buf:
            need = self.length(buf[0])
            if need == 0:                       # a byte no character starts with
                out.append(buf[:1].decode("utf-8", "replace"))
                buf = buf[1:]
            elif len(buf) >= need:
                out.append(buf[:need].decode("utf-8", "replace"))
                buf = buf[need:]
            else:
                break                           # hold back an unfinished character
        return "".join(out), buf

    def stream(self, prompt_ids, new_ids):
        buf = b""
        for i in prompt_ids:                    # the prompt's text is not sent, but a character
            buf += self.piece.get(i, b"")       # it leaves unfinished is
            _, buf = self._take(buf)
        for n, i in enumerate(new_ids):
            buf += self.piece.get(i, b"")
            text, buf = self._take(buf)
            if n == len(new_ids) - 1 and buf:   # end of generation: flush what is held
                text += buf.decode("utf-8", "replace")
                buf = b""
            yield text


class Engine:
    LENGTH = staticmethod(utf8_len)

    def __init__(self, files):
        self.s = Streamer(files["tokenizer_json"], self.LENGTH)

    def encode(self, text, add_special, parse_special):
        raise NotImplementedError

    def stream(self, ids, prompt):
        return list(self.s.stream(ids[:prompt], ids[prompt:]))


class FixedEngine(Engine):
    LENGTH = staticmethod(utf8_len_fixed)
