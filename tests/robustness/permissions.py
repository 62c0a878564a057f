"""Permission tests that hold as root too: root reads a chmod 000 file and writes into a chmod 500
folder (CAP_DAC_OVERRIDE), so as root the command runs under ``setpriv`` with those capabilities
dropped, and the file modes mean what they mean for any other user."""

from __future__ import annotations

import os
import shutil

DAC = "-dac_override,-dac_read_search"


def as_a_user(argv: list[str]) -> list[str]:
    """``argv`` run so that file permissions apply: as is for a user, under setpriv for root."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv, "running as root without setpriv (util-linux): cannot test file permissions"
    return [setpriv, f"--bounding-set={DAC}", *argv]
