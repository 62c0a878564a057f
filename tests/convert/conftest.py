"""Fixtures of the converter tests (the helpers live in convert_helpers.py)."""

from __future__ import annotations

import pytest
from convert_helpers import pooled_texts


@pytest.fixture(scope="session")
def texts() -> dict[str, str]:
    return pooled_texts()
