"""The traits of a tojson (tokparity/chat/render.py): the ways a JSON writer departs from Python's
json.dumps, which chat.tojson-written-otherwise reads off an engine's prompt."""

from __future__ import annotations

import pytest

from tokparity.chat.render import _tojson


def test_a_tojson_of_traits_writes_each_and_refuses_an_unknown_one():
    assert _tojson("compact+ascii+slash+html+sorted")({"b": "a/b<é>", "a": 1}) == '{"a":1,"b":"a\\/b\\u003c\\u00e9\\u003e"}'
    assert _tojson("transformers")({"b": "a/b", "a": 1}) == '{"b": "a/b", "a": 1}'
    with pytest.raises(ValueError):
        _tojson("compact+typo")
