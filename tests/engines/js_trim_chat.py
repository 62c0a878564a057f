"""The blind chat engine (``blind/chat_blind.py``) with one change: the template's ``trim`` filter
is JavaScript's ``String.prototype.trim``, as a Jinja port written in JavaScript runs it. That trim
strips U+FEFF and keeps U+0085 and U+001F; jinja2's (Python's ``str.strip``) does the opposite.

    python3 js_trim_chat.py TOKENIZER_JSON [--python-trim]

``--python-trim``: the bug-free twin, jinja2's own trim.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "blind"))
import chat_blind  # noqa: E402

# ECMAScript's WhiteSpace and LineTerminator: what String.prototype.trim takes off both ends.
_JS_SPACE = "[\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_ENDS = re.compile(f"^{_JS_SPACE}+|{_JS_SPACE}+$")


def js_trim(value: object, chars: str | None = None) -> str:
    text = str(value)
    return text.strip(chars) if chars is not None else _ENDS.sub("", text)


_BUILD = chat_blind.build_environment


def _with_js_trim(bugs: frozenset[str]):
    env = _BUILD(bugs)
    env.filters["trim"] = js_trim
    return env


if __name__ == "__main__":
    if "--python-trim" in sys.argv:
        sys.argv.remove("--python-trim")
    else:
        chat_blind.build_environment = _with_js_trim
    sys.exit(chat_blind.main())
