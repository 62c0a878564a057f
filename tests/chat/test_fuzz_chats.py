"""``fuzz --ops chat``: generated conversations find an engine's bug, shrink it to a conversation
of a message or two, and write the findings as a corpus of conversations that ``compare --ops
chat -c`` reads back; the bug-free twin gives no finding."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BLIND = Path(__file__).parents[1] / "engines" / "blind" / "chat_blind.py"


def _fuzz(tmp_path: Path, bugs: list[str]) -> tuple[subprocess.CompletedProcess, list[dict]]:
    engine = f"eng=cmd:{sys.executable} {BLIND} {{tokenizer_json}}" + "".join(f" --bug {b}" for b in bugs)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "qwen3", "--ops", "chat", "--cases", "150",
                           "-b", engine, "-q", "-o", str(out)], capture_output=True, text=True, timeout=600)
    findings = [json.loads(line) for line in (out / "fuzz-findings.jsonl").read_text("utf-8").splitlines()] \
        if (out / "fuzz-findings.jsonl").exists() else []
    return done, findings


def test_a_dropped_system_message_is_found_and_shrunk(zoo, tmp_path):
    zoo("qwen3")
    done, findings = _fuzz(tmp_path, ["system-dropped"])
    assert done.returncode == 1, done.stderr
    keys = {f["tags"]["key"] for f in findings if f["tags"]["backend"] == "eng"}
    assert keys == {"chat.system-dropped"}, findings
    (found,) = [f for f in findings if f["tags"]["backend"] == "eng"]
    assert len(found["messages"]) <= 2 and any(m["role"] == "system" for m in found["messages"])
    # the findings are a corpus: compare reads them back and names the same cause
    again = tmp_path / "again"
    engine = f"eng=cmd:{sys.executable} {BLIND} {{tokenizer_json}} --bug system-dropped"
    subprocess.run([sys.executable, "-m", "tokparity", "compare", "qwen3", "--ops", "chat", "-c",
                    str(tmp_path / "out" / "fuzz-findings.jsonl"), "-b", engine, "-q", "-o", str(again)],
                   capture_output=True, text=True, timeout=600)
    summary = json.loads((again / "summary.json").read_text("utf-8"))
    (run,) = [r for r in summary["runs"] if r["backend"] == "eng"]
    assert run["causes"] == {"chat.system-dropped": 1}


def test_the_twin_gives_no_finding(zoo, tmp_path):
    zoo("qwen3")
    done, findings = _fuzz(tmp_path, [])
    assert done.returncode == 0, done.stdout + done.stderr
    assert findings == [] and "no failure found" in done.stdout
    conversations = int(done.stdout.split(" conversations in ")[0].rsplit(" ", 1)[1])
    assert conversations > 100


def test_flags_about_texts_are_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "qwen3", "--ops", "chat", "-g", "whitespace",
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "fuzz --ops chat: -g is about texts" in done.stderr, done.stderr


JS_TRIM = Path(__file__).parents[1] / "engines" / "js_trim_chat.py"


def test_a_javascript_trim_is_found_where_the_template_trims(zoo, tmp_path):
    """Gemma 3's template trims each message. A Jinja port whose trim is JavaScript's agrees on
    every ASCII content; fuzz puts the encode seams' spaces (U+FEFF, U+0085, U+001F…) at a
    content's ends, finds it and names it ``chat.trim-javascript``. Its twin, with Python's trim,
    gives no finding."""
    zoo("gemma-3")
    found = {}
    for name, flag in (("js", ""), ("twin", " --python-trim")):
        out = tmp_path / name
        done = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "gemma-3", "--ops", "chat", "--cases", "200",
                               "-b", f"eng=cmd:{sys.executable} {JS_TRIM} {{tokenizer_json}}{flag}", "-q", "-o",
                               str(out)], capture_output=True, text=True, timeout=600)
        path = out / "fuzz-findings.jsonl"
        found[name] = [json.loads(line) for line in path.read_text("utf-8").splitlines()] if path.exists() else []
        assert done.returncode == (1 if name == "js" else 0), done.stdout[-2000:] + done.stderr[-2000:]
    assert found["js"] and found["twin"] == []
    # (a continued last message can make one side refuse where the other does not: a second symptom)
    summary = json.loads((tmp_path / "js" / "summary.json").read_text("utf-8"))
    count = {f["key"]: f["count"] for f in summary["options"]["fuzz"]["findings"]}
    assert count.get("chat.trim-javascript", 0) >= 0.9 * sum(count.values()), count
    shrunk = json.dumps([f["messages"] for f in found["js"]], ensure_ascii=True)
    assert any(space in shrunk for space in ("\\ufeff", "\\u0085", "\\u001f", "\\u001c", "\\u001d", "\\u001e")), shrunk
