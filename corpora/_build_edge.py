"""Build corpora/edge.jsonl: edge-case texts for tokenizers.

Every text is written here with explicit escapes ("\\u00a0", "\\x01", ...), so nothing invisible
hides in the source. Deterministic (no clock, no randomness beyond a fixed-seed LCG, no installed
data): re-running gives the same file byte for byte (`python corpora/_build_edge.py`).

Records are {"id": "<category>-NNNN", "text": ..., "tags": {"script", "lang": "und", "kind"}},
one per line, json.dumps(..., ensure_ascii=False); U+0085, U+2028 and U+2029 are written as
\\u escapes too (the same JSON value) so that readers splitting on Unicode line breaks
(str.splitlines) still see one record per line.

Kinds: whitespace, control, nul (the one record holding U+0000, so it can be filtered),
normalization, digits, contractions, punctuation, special-lookalike, long, ascii.

Texts are unique across the file. The single printable ASCII characters (95 records, including
"0".."9" and the lone space) live under kind "ascii"; the digit-run and space ladders of the other
kinds therefore start at length 2.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent / "edge.jsonl"

records: list[dict] = []
_seen: dict[str, str] = {}
_counters: dict[str, int] = {}


# Unicode character-name prefixes of the scripts a record may be tagged with; anything else
# (no letters, several scripts, compatibility letters like FULLWIDTH or MATHEMATICAL) is Zyyy.
_NAME_PREFIX = {"LATIN": "Latn", "GREEK": "Grek", "CYRILLIC": "Cyrl", "ARABIC": "Arab", "HEBREW": "Hebr",
                "DEVANAGARI": "Deva", "HANGUL": "Hang", "THAI": "Thai"}


def guess_script(text: str) -> str:
    """The ISO 15924 code when every letter (and script-specific mark) is of one script, else Zyyy."""
    found = set()
    for ch in text:
        if unicodedata.category(ch) in ("Co", "Cn") or unicodedata.name(ch, "").startswith("OGHAM"):
            return "Zyyy"  # private use / unassigned (script Unknown), Ogham space mark (script Ogham)
        if unicodedata.category(ch)[0] not in "LM":
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("COMBINING") or name.startswith("VARIATION SELECTOR"):
            continue
        found.add(_NAME_PREFIX.get(name.split(" ")[0], "Zyyy"))
    return found.pop() if len(found) == 1 else "Zyyy"


def add(kind: str, text: str, script: str | None = None, **extra: str) -> None:
    script = script or guess_script(text)
    if not text:
        raise ValueError(f"empty text in {kind}")
    if text in _seen:
        raise ValueError(f"duplicate text {text!r} in {kind} (already in {_seen[text]})")
    _counters[kind] = _counters.get(kind, 0) + 1
    rid = f"{kind}-{_counters[kind]:04d}"
    _seen[text] = rid
    tags = {"script": script, "lang": "und", "kind": kind}
    tags.update(extra)
    records.append({"id": rid, "text": text, "tags": tags})


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def lcg_letters(n: int, seed: int = 20261122) -> str:
    """n pseudo-random ASCII letters from a fixed 32-bit LCG (same on every Python)."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    x = seed
    out = []
    for _ in range(n):
        x = (1664525 * x + 1013904223) % 2**32
        out.append(alphabet[(x >> 16) % len(alphabet)])
    return "".join(out)


# --------------------------------------------------------------------------- ascii
# Every printable ASCII character alone (95), then each non-space one after a space (94).
for cp in range(0x20, 0x7F):
    ch = chr(cp)
    add("ascii", ch)
for cp in range(0x21, 0x7F):
    ch = chr(cp)
    add("ascii", " " + ch)
for t in ["CamelCaseWord", "camelCaseWord", "XMLHttpRequest", "getHTTPResponseCode", "snake_case_name",
          "SCREAMING_SNAKE_CASE", "kebab-case-name", "SHOUTING LOUDLY AT THE TOKENIZER", "Title Case Words Here",
          "mIxEd CaSe TeXt", "l33t sp34k r0x0rz", "h4x0r", "n00b pwn3d", "Hello", "hello", "HELLO", " Hello",
          " hello", " HELLO", "HeLLo WoRLD", "iPhone", "McDonald", "O'Neil", "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
          "abcdefghijklmnopqrstuvwxyz", "aA", "Aa", "AA", "aa", "a b c d e f g", "A.B.C.", "U.S.A.", "e.g.", "i.e.,",
          "Mr. Smith", "ok OK Ok oK"]:
    add("ascii", t)
add("ascii", "".join(chr(c) for c in range(0x20, 0x7F)))
add("ascii", "".join(chr(c) for c in range(0x7E, 0x1F, -1)))

# --------------------------------------------------------------------------- whitespace
for n in range(2, 17):
    add("whitespace", " " * n)
for n in range(1, 9):
    add("whitespace", " " * n + "word")
for n in (1, 2, 3, 4, 8):
    add("whitespace", "word" + " " * n)
for n in (2, 3, 4, 5, 8, 16):
    add("whitespace", "hello" + " " * n + "world")
add("whitespace", "one  two   three    four     five")
for n in range(1, 7):
    add("whitespace", "\t" * n)
add("whitespace", "hello\tworld")
add("whitespace", "a\t\tb\t\t\tc")
add("whitespace", "\tindented with a tab")
add("whitespace", "\t\t\t\t\t\tdef foo():\n\t\t\t\t\t\t\treturn 42")
add("whitespace", "col1\tcol2\tcol3\n1\t2\t3\n")
for n in (1, 2, 3, 4, 8):
    add("whitespace", "\n" * n)
add("whitespace", "line1\nline2\n\nline4")
add("whitespace", "\r\n")
add("whitespace", "\r\n\r\n")
add("whitespace", "line1\r\nline2\r\n")
add("whitespace", "\r")
add("whitespace", "a\rb")
add("whitespace", "\n\r")
add("whitespace", " \n \t ")
add("whitespace", "\n \n")
add("whitespace", " \t\n\r\n \t")
add("whitespace", "\v\f")
add("whitespace", "page\fbreak")
add("whitespace", "\u00a0")
add("whitespace", "100\u00a0km")
add("whitespace", "a\u00a0\u00a0b")
add("whitespace", "\u00a0leading nbsp")
add("whitespace", "\u3000")
add("whitespace", "全角\u3000スペース")
add("whitespace", "line\u2028separator")
add("whitespace", "para\u2029graph")
add("whitespace", "\u2028\u2029")
add("whitespace", "10\u2009000")
add("whitespace", "a\u200ab")
add("whitespace", "50\u202f%")
add("whitespace", "«\u202fBonjour\u202f!\u202f»")
add("whitespace", "x\u205fy")
add("whitespace", "a\u1680b")
add("whitespace", "a\u0085b")
add("whitespace", "\u0085")
add("whitespace", "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a")
add("whitespace", "en\u2002space em\u2003space figure\u20071")
add("whitespace", " \t\n\u00a0\u3000\u2028")
add("whitespace", "\u00a0\u00a0\u00a0")
add("whitespace", " \t hello world \n ")
add("whitespace", "\n\nhello\n\n")
add("whitespace", "   Hello   World   ")
add("whitespace", "\t \t mixed \t \t")
add("whitespace", " \u00a0 \u3000 x")
add("whitespace", "end with newline\n")
add("whitespace", "\nstart with newline")
add("whitespace", "trailing tab\t")

# --------------------------------------------------------------------------- nul
add("nul", "a\x00b")

# --------------------------------------------------------------------------- control
for cp in range(0x01, 0x20):
    add("control", "ab" + chr(cp) + "cd", codepoint=f"U+{cp:04X}")
add("control", "\x01\x02\x03\x04\x05\x06\x07\x08")
add("control", "\x1b[31mred\x1b[0m")
add("control", "bell\x07 and backspace\x08x")
add("control", "\x7f")
add("control", "abc\x7fdef")
add("control", "\x80")
add("control", "caf\x82e")
add("control", "x\x9fy")
add("control", "".join(chr(c) for c in range(0x80, 0xA0)))
add("control", "\ufeff")
add("control", "\ufeffHello")
add("control", "Hel\ufefflo")
add("control", "\ufeff\ufeff double BOM")
add("control", "\u200d")
add("control", "a\u200db")
add("control", "👨\u200d💻")
add("control", "\u200c")
add("control", "Auf\u200clage")
add("control", "می\u200cخواهم")
add("control", "\u200b")
add("control", "foo\u200bbar")
add("control", "zero\u200b\u200b\u200bwidth")
add("control", "foo\u2060bar")
add("control", "\u00ad")
add("control", "co\u00adoperate")
add("control", "Silben\u00adtren\u00adnung")
add("control", "\u200eabc\u200f")
add("control", "\u200e\u200f")
add("control", "שלום\u200e123")
add("control", "\u202aLRE\u202c")
add("control", "\u202bRLE\u202c")
add("control", "\u202dLRO\u202c")
add("control", "\u202eRLO override\u202c")
add("control", "invoice_\u202efdp.exe")
add("control", "\u2066LRI\u2069 \u2067RLI\u2069 \u2068FSI\u2069")
add("control", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
add("control", "\ufe0f")
add("control", "\ufe0e")
add("control", "\U000e0100")
add("control", "a\ufe0f")
add("control", "\u2764\ufe0e \u2764\ufe0f")
add("control", "\ufffd")
add("control", "bad \ufffd\ufffd bytes")
add("control", "\ue000")
add("control", "icon:\uf8ff")
add("control", "\U000f0000\U0010fffd")
add("control", "\U0001d407\U0001d41e\U0001d425\U0001d425\U0001d428")
add("control", "\U0001d54f")
add("control", "\U0001f600")
add("control", "\U00020000\U00020001\U0002a6d6")
add("control", "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f")
add("control", "\U000e0041\U000e0042")
add("control", "\U00010348\U00010330")
add("control", "\U0001f468\u200d\U0001f469\u200d\U0001f467")

# --------------------------------------------------------------------------- normalization
add("normalization", nfc("caf\u00e9"), form="NFC")
add("normalization", "cafe\u0301", form="NFD")
add("normalization", "\u00e9")
add("normalization", "e\u0301")
add("normalization", "\u0301")
add("normalization", "\u212b")
add("normalization", "\u00c5")
add("normalization", "A\u030a")
add("normalization", "10 \u212bngstr\u00f6m")
add("normalization", "10 \u00c5ngstr\u00f6m")
add("normalization", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349a\u0336\u0318\u0359\u0330lgo")
add("normalization", "a\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309")
add("normalization", "o\u0323\u0315\u0316\u0317\u0318")
add("normalization", "\u00bd \u00bc \u00be \u2153 \u2154 \u215b")
add("normalization", "\uff21\uff22\uff23\uff11\uff12\uff13")
add("normalization", "\uff48\uff45\uff4c\uff4c\uff4f\u3000\uff57\uff4f\uff52\uff4c\uff44\uff01")
add("normalization", "\uff76\uff80\uff76\uff85")
add("normalization", "\uff76\uff9e\uff77\uff9e")
add("normalization", "\u30ac\u30ae")
add("normalization", "\u30ab\u3099\u30ad\u3099")
add("normalization", "\ufb01nd \ufb02ow \ufb00 \ufb03 \ufb04")
add("normalization", "find flow ff ffi ffl")
add("normalization", "\u1100\u1161\u11a8")
add("normalization", "\uac01")
add("normalization", "\ud55c")
add("normalization", "\u1112\u1161\u11ab")
add("normalization", "\u3131\u314f\u3131")
add("normalization", "\u314e\u314f\u3134\u3131\u3161\u3139")
add("normalization", "\u2460 \u2461 \u2469 \u2473")
add("normalization", "x\u00b2 + y\u00b3 = z\u2074")
add("normalization", "H\u2082O CO\u2082")
add("normalization", "\u210c \u210d \u2115 \u211d \u2124")
add("normalization", "\u216b \u2160\u2161\u2162 \u2170\u2171")
add("normalization", "\u2122 \u2103 \u338f \u337b")
add("normalization", "\u212a")
add("normalization", "273 \u212a = 0 \u2103")
add("normalization", "\u017f")
add("normalization", "Gei\u017ft")
add("normalization", "\u0130stanbul \u0131s\u0131 \u0130I \u0131i")
add("normalization", "D\u0130YARBAKIR diyarbak\u0131r")
add("normalization", "i\u0307")
add("normalization", "Stra\u00dfe STRASSE STRA\u1e9eE")
add("normalization", "\u00df\u1e9e")
add("normalization", "\u039f\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2 \u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3")
add("normalization", "\u03c3\u03c2\u03a3")
add("normalization", "\u037e")
add("normalization", "\u0387")
vi = "Ti\u1ebfng Vi\u1ec7t c\u00f3 nhi\u1ec1u d\u1ea5u: \u1eaf \u1eb1 \u1eb3 \u1eb5 \u1eb7 \u1ec7 \u1ed9 \u1edb \u1edd \u1ee3"
add("normalization", nfc(vi), form="NFC")
add("normalization", nfd(vi), form="NFD")
add("normalization", "Ph\u01b0\u01a1\u0300ng")
add("normalization", nfc("Kant\u014d"), form="NFC")
add("normalization", nfd("Kant\u014d"), form="NFD")
add("normalization", nfd("\u00c5ngstr\u00f6m na\u00efve r\u00e9sum\u00e9 \u00e7a"), form="NFD")
add("normalization", nfd("\u1eb8 k\u00fa \u00e0\u00e1r\u1ecd\u0300"), form="NFD")
add("normalization", "\ufdfa")
add("normalization", "\ufdf2")
add("normalization", "\ufb2a \u05e9\u05c1")
add("normalization", "\u0958 \u0915\u093c")
add("normalization", "\u2126 \u03a9")
add("normalization", "\u00b5 \u03bc")
add("normalization", "\u2024\u2025\u2026")
add("normalization", "\u1e9b\u0323")
add("normalization", "\u0041\u030a\u0301")
add("normalization", "\u00f1 n\u0303 \u00d1 N\u0303")
add("normalization", "\u3392\u3393\u3394 \u33a1")
add("normalization", "\u32c0 \u32c1 \u33e0")
add("normalization", "\u2474 \u2488 \u24b6 \u24d0")
add("normalization", "\U0001d400\U0001d401\U0001d402 \U0001d7ce\U0001d7cf")

# --------------------------------------------------------------------------- digits
run = "".join(str(i % 10) for i in range(1, 21))
for n in range(2, 21):
    add("digits", run[:n])
for t in ["0123456789", "9876543210", "00", "000", "0000000000", "007", "1000", "1000000", "1000000000000",
          "999999999999999999999", "1,234,567.89", "1.234.567,89", "1 234 567", "1\u00a0234\u00a0567",
          "1'234'567", "12,34,567", "3.14159", "3,14", "0.5", ".5", "5.", "-42", "\u221242", "+42", "-0.001",
          "6.02e23", "6.022E+23", "1e-9", "1E10", "0xDEADBEEF", "0xdeadbeef", "0b1010_1010", "0o777", "1_000_000",
          "3.11.7", "v1.2.3-rc.1", "2026-11-22", "22/11/2026", "11/22/26", "22.11.2026", "12:34:56", "23:59:59.999",
          "2026-11-22T12:34:56Z", "2026-11-22T12:34:56+05:30", "+1 (555) 123-4567", "+44 20 7946 0958",
          "555-0100", "192.168.0.1", "127.0.0.1:8080", "1/2", "3/4", "10%", "99.9%", "50 km/h", "1st 2nd 3rd 4th",
          "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669", "\u06f0\u06f1\u06f2\u06f3\u06f4\u06f5\u06f6\u06f7\u06f8\u06f9",
          "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f", "\u09e6\u09e7\u09e8\u09e9",
          "\u0e51\u0e52\u0e53", "\u1040\u1041\u1042", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19",
          "\U0001d7ce\U0001d7cf\U0001d7d0", "\u0661\u0662\u066b\u0665", "$1,000.00", "\u20ac5", "5\u00a0\u20ac",
          "\u00a5300", "\u00a39.99", "\u20b9\u00a01,00,000", "USD 12.50", "-$3.50", "(1,234)", "#1", "No. 42",
          "\u2116 7", "10^6", "2^32-1", "1+1=2", "3\u00d74=12", "10\u00f72=5", "42\n", " 42", "42 ", "4 2",
          "12345 67890", "1.2.3.4.5.6.7.8.9.10"]:
    add("digits", t)

# --------------------------------------------------------------------------- contractions
for t in ["don't", "I'm", "we'll", "they've", "she'd", "it's", "'tis", "rock 'n' roll", "can't", "won't",
          "shouldn't've", "y'all", "o'clock", "ma'am",
          "don\u2019t", "I\u2019m", "we\u2019ll", "they\u2019ve", "she\u2019d", "it\u2019s", "\u2019tis",
          "rock \u2019n\u2019 roll", "don\u02bct", "I\u02bcm", "it\u02bcs",
          "DON'T", "I'M", "WE'LL", "THEY'VE", "SHE'D", "IT'S", "DON\u2019T", "Don'T",
          "l'homme", "aujourd'hui", "l\u2019homme", "aujourd\u2019hui", "qu'il", "c'est", "j'ai", "s'il vous pla\u00eet",
          "James's", "James'", "the dogs' bowls", "Jesus' disciples", "children's", "CHILDREN'S",
          "'single'", "\"double\"", "\u2018single\u2019", "\u201cdouble\u201d", "\u00abguillemets\u00bb",
          "\u00ab guillemets \u00bb", "\u201eGerman\u201c", "\u201aeinfach\u2018", "\u300cJapanese\u300d", "``LaTeX''",
          "it's not 'that' \"hard\"", "He said, \"I'm fine, don't worry.\"", "''", "'''", "\u2019", "\u02bc",
          "\u00b4", "I 'm", "don ' t", "Hawai\u02bbi", "O\u2019Brien", "rock'n'roll"]:
    add("contractions", t)

# --------------------------------------------------------------------------- punctuation
for t in ["!!!", "?!?!", "...", "\u2026", "---", "\u2014", "\u2013", "***", "###", "===", "<<<>>>", ")))))",
          "(((((", "()", "[]", "{}", "<>", "([{<>}])", "\"\"\"", "!!!!!!!!!!!!!!!!", "??", "?!", "..", "....",
          ". . .", "!?\u203d", "\u00a1\u00bfQu\u00e9?!", "Wait...what?!", "hello!!!", "(hello)", "[hello]",
          "{hello}", "<hello>", "hello,world", "hello.world", "end.", "end,", "end;", "a:b", "a-b", "a_b", "a/b",
          "a\\b", "a|b", "a&b", "a@b", "a#b", "a~b", "a^b", "a*b", "a+b", "a=b", "a%b", "a$b", "\"quoted\",",
          "https://example.com/path/to/page?query=1&lang=en#section",
          "http://localhost:8000/", "www.example.org", "ftp://files.example.net/pub/file.tar.gz",
          "user.name+tag@example.co.uk", "mailto:someone@example.com", "C:\\Users\\x\\Documents\\file.txt",
          "\\\\server\\share", "/usr/local/bin/python3", "~/.config/app/settings.json", "../../etc/passwd",
          "# Heading", "## Sub-heading", "**bold** and _italic_ and `code`", "- [ ] todo\n- [x] done",
          "[link](https://example.com)", "![alt](img.png)", "> quoted line", "```python\nprint(1)\n```",
          "| a | b |\n|---|---|\n| 1 | 2 |", ":-)", ":-(", ";-)", ":D", ":P", "^_^", "T_T", "o_O", "\u00af\\_(\u30c4)_/\u00af",
          "<3", "</3", "(\u256f\u00b0\u25a1\u00b0)\u256f\ufe35 \u253b\u2501\u253b",
          "+--------+--------+\n|  ASCII |  art   |\n+--------+--------+", "=-=-=-=-=-=-=-=-=-=", "~~~~~~~~~~",
          "________", "\u2022 bullet \u00b7 middle dot", "\u00a7 1 \u00b6 2", "\u2020\u2021", "\u00a9 \u00ae",
          "\u3001\u3002\u300c\u300d\u3010\u3011", "\uff01\uff1f\uff0c\uff0e", "\u060c\u061b\u061f", "\u0964\u0965",
          "\u2018\u2019\u201c\u201d\u201a\u201e", "\u2039\u203a\u00ab\u00bb", "\u2010\u2011\u2012\u2013\u2014\u2015",
          "#hashtag @mention $TICKER", "key=value; other=thing", "a && b || !c", "x->y => z", "i++ --j",
          "<!-- comment -->", "/* comment */", "// comment", "<b>bold</b>", "&amp; &lt; &#39; &#x1F600;"]:
    add("punctuation", t)

# --------------------------------------------------------------------------- special-lookalike
specials = ["<s>", "</s>", "<unk>", "<pad>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>",
            "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>", "<start_of_turn>",
            "<end_of_turn>", "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "<mask>", "<cls>", "<sep>", "<bos>",
            "<eos>", "<0x0A>", "<0x00>", "<0xFF>", "<0x20>", "[INST]", "[/INST]", "<<SYS>>", "<</SYS>>",
            "<|reserved_special_token_0|>", "<|reserved_special_token_250|>", "<|fim_prefix|>", "<|fim_middle|>",
            "<|fim_suffix|>", "<|padding|>", "<think>", "</think>", "<tool_call>"]
for s in specials:
    add("special-lookalike", s)
for t in ["<s>Hello</s>", " <s> ", "<s> Hello", "Hello</s>", "<s><s><s>", "</s></s>", "<|im_start|>user\nhi<|im_end|>",
          "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n",
          "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
          "<start_of_turn>user\nhello<end_of_turn>\n<start_of_turn>model\n", "<start_of_turn>user",
          "[CLS] x [SEP]", "[CLS]x[SEP]y[SEP]", "The capital is [MASK].", "The capital is <mask>.",
          "[INST] hi [/INST]", "<s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nhi [/INST]", "word<|endoftext|>word",
          " <|endoftext|> ", "\n<|endoftext|>\n", "<|endoftext|><|endoftext|>", "<|endoftext",
          "<|endoftext|", "< |endoftext| >", "<|ENDOFTEXT|>", "<unk><unk>", "x<unk>y", "<pad><pad><pad>",
          "<0x0A><0x0A>", "byte<0xE2><0x96><0x81>", "\u2581", "\u2581\u2581", "\u2581hello", "hello\u2581world",
          "\u2581\u2581\u2581\u2581", " \u2581 ", "\u0120hello", "\u0120", "\u010a", "\u0120\u0120\u0120",
          "hello\u010aworld", "##ing", "play ##ing", "##", "@@", "hel@@ lo", "</w>", "hello</w>", "<|", "|>",
          "<||>", "[[MASK]]", "<<s>>", "<s >", "< s>", "<S>", "</s", "<s", "s>",
          "Hi<s>there</s>!", "\t<s>\t", "\n</s>\n", "<|reserved_special_token_0|><|reserved_special_token_1|>",
          "<think>\nstep 1\n</think>\nanswer"]:
    add("special-lookalike", t)

# --------------------------------------------------------------------------- long
add("long", "a" * 300)
letters = lcg_letters(1000)
add("long", letters)
add("long", " " * 200)
add("long", " " * 64)
add("long", " " * 63 + "x")
add("long", "\t" * 100)
add("long", "\n" * 100)
add("long", "\u00a0" * 50)
german_parts = ["Donaudampfschifffahrts", "gesellschafts", "kapit\u00e4ns", "witwen", "renten", "versicherungs",
                "anstalts", "geb\u00e4ude", "reinigungs", "unternehmens", "mitarbeiter", "parkplatz", "verwaltungs",
                "software", "aktualisierungs", "benachrichtigungs", "einstellungs", "\u00fcberpr\u00fcfungs",
                "kommissions", "vorsitzenden", "stellvertreter", "wahl", "ordnungs", "\u00e4nderungs", "gesetzes",
                "entwurfs", "begr\u00fcndungs", "rindfleisch", "etikettierungs", "\u00fcberwachungs", "aufgaben",
                "\u00fcbertragungs", "grundst\u00fccks", "verkehrs", "genehmigungs", "zust\u00e4ndigkeits",
                "verordnungs", "kraftfahrzeug", "haftpflicht", "schadens", "regulierungs", "bearbeitungs", "fristen",
                "verl\u00e4ngerungs", "antrags", "formular", "ausf\u00fcll", "hilfe", "brosch\u00fcren", "druck",
                "kosten", "erstattungs"]
german = ""
for part in german_parts:
    if len(german) >= 490:
        break
    german += part
german += "richtlinie"
add("long", german)
url = "https://example.com/" + "/".join(f"segment{i:03d}" for i in range(1, 40))
url += "?" + "&".join(f"k{i}=v{i}" for i in range(1, 40))
add("long", url[:300])
add("long", "ab" * 500)
add("long", "\u3042" * 200)
add("long", "\u0928\u092e\u0938\u094d\u0924\u0947 " * 60)
add("long", "!" * 300)
add("long", "1234567890" * 30)
add("long", "x " * 400)
emojis = ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7",
          "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "\u2764\ufe0f", "\U0001f389"]
add("long", "".join(emojis[i % len(emojis)] for i in range(100)), emoji_count="100")
add("long", "\U0001f600" * 100, emoji_count="100")
pieces = ["The quick brown fox's \u201cguide\u201d to tokenizers (v3.11.7, 2026-11-22): ",
          "don't panic\u2014it's fine!!! ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u3000",
          "caf\u00e9 cafe\u0301 \u212b \ufb01 \uff21\uff22\uff23 ", "1,234,567.89 0xDEADBEEF 6.02e23 ",
          "\u0660\u0661\u0662 ", "<s>", "</s>", "<|endoftext|>", " \u2581hello \u0120world ##ing ",
          "\u041f\u0440\u0438\u0432\u0435\u0442 ", "\u3053\u3093\u306b\u3061\u306f ", "\u4f60\u597d ",
          "\u0645\u0631\u062d\u0628\u0627 ", "\u05e9\u05dc\u05d5\u05dd ", "\u0928\u092e\u0938\u094d\u0924\u0947 ",
          "\U0001f600\U0001f44d\U0001f3fd\U0001f1eb\U0001f1f7 ", "\u200b\u200d\u200c\ufeff", "https://example.com/a?b=c ",
          "C:\\Users\\x ", "\u00af\\_(\u30c4)_/\u00af ", "aaaaaaaaaaaaaaaaaaaa", "                ",
          "\u1100\u1161\u11a8 \ud55c ", "\u0130\u0131 \u00df\u1e9e \u03c3\u03c2 "]
para = ""
i = 0
while len(para) < 2000:
    para += pieces[i % len(pieces)]
    i += 1
    if i % len(pieces) == 0:
        para += lcg_letters(40, seed=i) + " "
para = para[:1999] + "."
add("long", para, length="2000")

# --------------------------------------------------------------------------- write


def main() -> None:
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            line = json.dumps(r, ensure_ascii=False)
            line = line.replace("\u0085", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
            f.write(line + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
