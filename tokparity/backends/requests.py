"""The requests of tokparity's JSON-lines protocol, as the members of a JSON object without its id
(engine_process.py adds the id and writes the line): ``'"op": "encode", "text": "Hi", ...'``.
The op comes first, so a reader finds it without parsing the request."""

from __future__ import annotations

import json

_json_str = json.encoder.encode_basestring_ascii  # the C encoder for one string: '"Hi\\n"'


def encode_body(text: str, add_special: bool, parse_special: bool) -> str:
    """The members of an encode request, serialized by hand: this is the hot path."""
    return (f'"op": "encode", "text": {_json_str(text)}, "add_special": {"true" if add_special else "false"}, '
            f'"parse_special": {"true" if parse_special else "false"}')


def op_of(body: str) -> str:
    """The op a request's members name first (``encode_body`` and ``body`` put it there); "" if none."""
    if not body.startswith('"op": "'):
        return ""
    end = body.find('"', 7)
    return body[7:end] if end > 0 else ""


def body(payload: dict) -> str:
    return json.dumps(payload)[1:-1]
