"""A py: engine that misbehaves on purpose (see flaky_engine.py for the cmd: twin)."""

from __future__ import annotations

import os
import signal
import time


def encode(text: str, add_special: bool, parse_special: bool) -> list[int]:
    if text == "SEGV":
        os.kill(os.getpid(), signal.SIGSEGV)
    if text == "HANG":
        while True:
            time.sleep(3600)
    if text == "RAISE":
        raise ValueError("RAISE is not a text this engine likes")
    if text == "PID":
        return [os.getpid()]
    return ([1] if add_special else []) + list(text.encode("utf-8"))


class BytesEngine:
    """The class form: made once with the model's files, then .encode / .decode."""

    def __init__(self, files: dict[str, str]):
        self.files = files

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        return bytes(ids).decode("utf-8", "replace")
