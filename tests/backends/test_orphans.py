"""The command's adoption of its engines' orphans (tokparity.backends.orphans): what it may and may
not stop. The orphans an engine leaves are tested end to end in tests/robustness/test_hostile_engines.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_flag_is_set_back_and_children_from_before_are_kept():
    """A child the process had before it adopted (a server a test fixture started, in a session of its
    own) is not an orphan: it is running after the block; the subreaper flag is 0 again after it."""
    out = run_python("""
        import subprocess, sys
        from tokparity.backends import orphans
        server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
        print(orphans._subreaper())
        with orphans.adopting_orphans() as stopped:
            print(orphans._subreaper())
        print(orphans._subreaper(), stopped, server.poll())
        server.kill()
    """)
    assert out.splitlines() == ["0", "1", "0 [] None"]


def test_a_caller_of_main_adopts_nothing_and_the_command_does():
    """``main([...])`` (a program using tokparity) leaves the process as it was; ``command()``, the
    ``tokparity`` command, is the subreaper while it runs."""
    out = run_python("""
        import sys
        from tokparity import cli
        from tokparity.backends import orphans
        seen = []
        cli._main = lambda argv: seen.append(orphans._subreaper()) or 0
        cli.main(["zoo"])
        cli.command()
        print(seen, orphans._subreaper())
    """)
    assert out == "[0, 1] 0"


def test_an_engine_still_open_is_not_taken_for_an_orphan():
    """An engine tokparity started and still waits for (its own session, like an orphan) is left to
    its owner, who reaps it and reads its status; an orphan beside it is stopped and named."""
    out = run_python("""
        import os, subprocess, sys, tempfile, time
        from tokparity.backends import orphans
        pid_file = os.path.join(tempfile.mkdtemp(), "pid")
        with orphans.adopting_orphans() as stopped:
            engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
            orphans.started(engine)
            # an orphan, adopted: a session of its own, its parent gone (waited for until it is `sleep`)
            subprocess.run(["sh", "-c", f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 31' & exit 0"])
            for _ in range(1000):
                try:
                    with open(f"/proc/{int(open(pid_file).read())}/cmdline", "rb") as f:
                        if f.read().startswith(b"sleep"):
                            break
                except (OSError, ValueError):
                    pass
                time.sleep(0.01)
        print(engine.poll(), stopped)
        engine.kill()
        print(engine.wait())
    """)
    assert out.splitlines() == ["None ['sleep 31']", "-9"]


def test_an_orphan_that_forks_when_told_to_stop_is_stopped_with_its_heirs(tmp_path):
    """An orphan in a session of its own, without its mark, that ignores SIGHUP and SIGINT and
    forks an heir each time it gets SIGTERM: its fifth heir outlived the command (a fifth
    independent campaign's find). An heir born while orphans are stopped gets SIGKILL at once."""
    daemon = tmp_path / "daemon.py"
    daemon.write_text(textwrap.dedent(f"""
        import os, signal, sys, time
        def heir(*_):
            if os.fork() == 0:
                os.setsid()
                os.execve(sys.executable, [sys.executable, {str(daemon)!r}], {{}})
        signal.signal(signal.SIGTERM, heir)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        time.sleep(60)
    """), "utf-8")
    out = run_python(f"""
        import os, subprocess, sys, time
        from tokparity.backends import orphans
        engine = "import subprocess, sys; subprocess.Popen([sys.executable, {str(daemon)!r}], start_new_session=True, env={{}})"
        with orphans.adopting_orphans() as stopped:
            subprocess.run([sys.executable, "-c", engine])  # (the engine ends; its daemon is adopted)
            time.sleep(1)
        time.sleep(0.5)
        left = []
        for pid in [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]:
            try:
                alive = open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
                if alive and {str(daemon).encode()!r} in open(f"/proc/{{pid}}/cmdline", "rb").read():
                    left.append(pid)
            except OSError:
                pass
        print(len(stopped) >= 1, left)
    """)
    assert out == "True []"
