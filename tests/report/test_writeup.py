"""The root-cause write-up, from real runs: a greedy longest-match engine on llama-spm (the bug of
the Gemma 3 write-up, through `cmd:`), transformers' GGUF converter on llama-bpe (byte-level
pieces), llama.cpp on kyoto-ja (a Viterbi tie). summary.md, report.html and `tokparity explain`
must give the same sentence, case, readable pieces and fix.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).parents[2] / "examples" / "engines" / "greedy_engine.py"
GREEDY = f"cmd:{sys.executable} {ENGINE} {{gguf}}"
SENTENCE = (f"{GREEDY} differs from golden/llama.cpp on 319 cases of llama-spm because of model.greedy-longest-match: "
            "the reference with that deviation reproduces 319 of 319 mismatches exactly and keeps all 7,512 "
            "agreements.")
PROOF = "reproduces 319 of 319 mismatches and keeps all 7,512 agreements"
FIX = ("segment with the model's algorithm (SentencePiece: score-ordered merges or Viterbi; BPE: ranked merges), "
       "not the longest vocabulary match")
SPEC = "tokparity/reference/spm.py, ugm.py, bpe.py"
# multilingual/en-0004 "It's raining.": the shortest prompt-like text among the 319; the ids
# side by side, pieces as text (▁ shown as ␣), '^' under the difference.
COMPARISON = [
    "first difference at token 3",
    "oracle   739 29915 29879 1153 2827  29889",
    "         ␣It '     s     ␣ra  ining .",
    "backend  739 29915 29879 17251 292  29889",
    "         ␣It '     s     ␣rain ing  .",
    "                         ^^^^^^^^^^",
]


def tokparity(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def flat(text: str) -> str:
    """Wrapped text as one line (the terminal and the Markdown wrap differently)."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def greedy(tmp_path_factory, zoo):
    zoo("llama-spm")
    out = tmp_path_factory.mktemp("greedy") / "run"
    proc = tokparity("compare", "llama-spm", "-b", "ref", "-b", GREEDY, "-o", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # 319 unexplained mismatches
    return out, proc


def test_summary_md_writes_up_the_root_cause(greedy):
    out, _ = greedy
    md = (out / "summary.md").read_text("utf-8")
    section = md[md.index("## Root cause, per model and backend"):md.index("## First mismatches to review")]
    assert f"**{SENTENCE.replace('_', chr(92) + '_')}**" in section  # md escapes greedy\_engine
    assert ("- **Symptom**: `merge-order` (195 of 319 mismatches): same text, different segmentation; both sides "
            "use valid pieces") in section
    assert "- **→ Implication**: the engine picks pieces in another order than the oracle" in section
    assert "**Most telling case** multilingual/en-0004: It's␣raining." in section
    assert "\n".join(["```"] + COMPARISON + ["```"]) in section
    assert f"**Root cause** `model.greedy-longest-match`: {PROOF}." in section
    assert f"- `model.greedy-longest-match`: {FIX} (specified by `{SPEC}`)" in section
    # the table: classes, then causes
    row = next(line for line in md.splitlines() if line.startswith("| llama-spm") and "greedy" in line)
    assert row.endswith("| 319 | 319 | merge-order 195, whitespace-runs 124 | model.greedy-longest-match 319 |")


def test_compare_prints_one_line_per_root_cause(greedy):
    _, proc = greedy
    out = proc.stdout
    assert next(line for line in out.splitlines() if line.startswith("model ")).split() == [
        "model", "oracle", "backend", "cases", "mismatches", "to", "review", "classes", "causes"]
    assert f"model.greedy-longest-match {PROOF}" in flat(out)
    assert "tokparity explain DIR" in out
    assert "**Fix**" not in out and "first difference at token" not in out  # the write-ups are in the files


def test_report_html_writes_up_the_root_cause(greedy):
    out, _ = greedy
    page = (out / "report.html").read_text("utf-8")
    root = page[page.index('id="root-cause"'):page.index('id="tags"')]
    assert f'<p class="sentence">{SENTENCE}</p>' in root
    assert "<th>Symptom</th><td><span class='badge cls'>merge-order</span> (195 of 319 mismatches)" in root
    assert "<th>→ Implication</th><td>the engine picks pieces in another order" in root
    assert "Most telling case: multilingual/en-0004</h4>" in root
    # the differing block: ids and readable pieces; the stored spelling is the tooltip
    assert ('<td class="diff"><span class="tok" title="1153 &#x27;▁ra&#x27;"><span class="tid">1153</span>'
            '<span class="tpc">␣ra</span></span>') in root
    assert '<span class="tid">17251</span><span class="tpc">␣rain</span>' in root
    assert "<caption>first difference at token 3</caption>" in root
    assert f"<p><code>model.greedy-longest-match</code>: {PROOF}.</p>" in root
    assert f"<li><code>model.greedy-longest-match</code>: {FIX.replace(chr(39), '&#x27;')}" in root
    assert f"specified by <code>{SPEC}</code>" in root
    summary = page[page.index('id="summary"'):page.index('id="root-cause"')]
    assert "cause: model.greedy-longest-match 319" in summary


def test_explain_prints_the_write_up(greedy):
    out, _ = greedy
    proc = tokparity("explain", str(out), "--width", "100")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith(f"{out}: tokparity ")
    assert "agree on every case: llama-spm/llama.cpp, llama-spm/ref" in text
    assert SENTENCE in flat(text)
    assert "Symptom        merge-order (195 of 319 mismatches): same text, different segmentation" in flat(text) \
        .replace("Symptom merge-order", "Symptom        merge-order")
    assert "Case           multilingual/en-0004 'It's␣raining.'" in text
    assert "\n".join("  " + line for line in COMPARISON) in text
    assert f"Root cause model.greedy-longest-match: {PROOF}" in flat(text)
    assert f"Fix model.greedy-longest-match: {FIX} specified by {SPEC}" in flat(text)


@pytest.mark.parametrize("case", ["multilingual/en-0004", "en-0004"])
def test_explain_one_case(greedy, case):
    out, _ = greedy
    proc = tokparity("explain", str(out), case, "--width", "100")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith(f"multilingual/en-0004 · llama-spm · {GREEDY} against llama.cpp\n")
    assert "Text           'It's␣raining.' (13 characters)" in text
    assert "Class          merge-order: same text, different segmentation; both sides use valid pieces" in text
    assert "Evidence       same text ' raining', other segmentation:" in text
    assert "Cause          model.greedy-longest-match\n" in text
    assert ("the reference reproduces the backend's ids exactly with: the longest vocabulary piece at each "
            "position") in flat(text)
    assert "\n".join("  " + line for line in COMPARISON) in text
    assert f"Fix model.greedy-longest-match: {FIX} specified by {SPEC}" in flat(text)


def test_explain_a_case_that_agreed(greedy):
    out, _ = greedy
    proc = tokparity("explain", str(out), "multilingual/en-0002")
    assert proc.returncode == 0
    assert proc.stdout == f"multilingual/en-0002: every backend agrees with its oracle on this case in {out}\n"


def test_csv_has_the_cause_columns(greedy):
    out, _ = greedy
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[-9:] == ["evidence", "known", "cause", "cause_evidence", "text_json", "op", "oracle_output",
                                  "backend_output", "shape"]
    assert {r["op"] for r in rows} == {"encode"} and {r["backend_output"] for r in rows} == {"[]"}
    row = next(r for r in rows if r["case_id"] == "en-0004")
    assert row["cause"] == "model.greedy-longest-match"
    assert row["cause_evidence"] == ("the reference reproduces the backend's ids exactly with: the longest vocabulary "
                                     "piece at each position")
    assert {r["cause"] for r in rows if r["backend"] == GREEDY} == {"model.greedy-longest-match"}
    assert row["shape"].startswith("same bytes, cut otherwise at character ")  # (greedy cuts the same text)
    assert all(r["shape"] for r in rows)


def test_explain_reads_mismatches_csv_without_a_journal(greedy, tmp_path):
    """A regress or fuzz folder has no journal of mismatches: mismatches.csv gives the same write-up
    (its formula-guarded cells read back as they were)."""
    out, _ = greedy
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("summary.json", "mismatches.csv"):
        shutil.copy(out / name, copy / name)
    from_journal = tokparity("explain", str(out), "--width", "100").stdout
    from_csv = tokparity("explain", str(copy), "--width", "100").stdout
    assert from_csv.replace(str(copy), str(out)) == from_journal


@pytest.mark.parametrize(("make", "message"), [
    pytest.param(lambda d: d / "missing", "missing: no such folder; give the -o folder of a finished "
                                          "'tokparity compare' run", id="missing"),
    pytest.param(lambda d: d, "not a tokparity run (no summary.json); give the -o folder", id="empty-folder"),
    pytest.param(lambda d: (d / "cases.jsonl").write_text("{}\n") and d,
                 "no summary.json: the run did not finish (or still runs); finish it with 'tokparity compare "
                 "--resume", id="unfinished"),
    pytest.param(lambda d: (d / "summary.json").write_text("{not json") and d, "summary.json: not readable as JSON",
                 id="damaged-summary"),
    pytest.param(lambda d: (d / "summary.json").write_text('{"runs": 3}') and d, "not a tokparity summary.json",
                 id="other-json"),
    pytest.param(lambda d: (d / "summary.json").write_text('{"tokparity": "0.1.0", "runs": []}') and d,
                 "neither cases.jsonl nor mismatches.csv", id="no-mismatches-file"),
])
def test_explain_bad_folder(tmp_path, make, message):
    folder = make(tmp_path)
    proc = tokparity("explain", str(folder))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tokparity: error: {folder}")
    assert message in lines[0]


def test_explain_unknown_case(greedy):
    out, _ = greedy
    proc = tokparity("explain", str(out), "multilingual/xx-9999")
    assert proc.returncode == 2
    assert proc.stderr == (f"tokparity: error: {out}: no mismatching case 'multilingual/xx-9999' (ids look like "
                           "multilingual/en-0001 or en-0001; mismatches.csv lists corpus and case_id)\n")


def test_byte_level_pieces_are_text(zoo, tmp_path):
    """llama-bpe's pieces are byte-level BPE ('Ġ' a space, 'á»ĩ' the bytes of 'ệ'): the write-up
    shows the text they stand for. transformers' GGUF converter ignores ignore_merges."""
    zoo("llama-bpe")
    out = tmp_path / "run"
    proc = tokparity("compare", "llama-bpe", "-b", "hf-gguf", "-c", "multilingual", "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr  # a known divergence
    text = tokparity("explain", str(out), "vi-0001", "--width", "100").stdout
    assert "Text           'Hôm␣nay␣trời␣mưa␣to␣quá,␣tôi␣không␣muốn␣ra␣ngoài.' (49 characters)" in text
    assert "  oracle   … 10 same 54137  104445 15473 102507         13\n" in text
    assert "                     ␣không ␣muốn  ␣ra   ␣ngoài         .\n" in text
    assert "  backend  … 10 same 54137  104445 15473 308 3427 53651 13\n" in text
    assert "                     ␣không ␣muốn  ␣ra   ␣n  go   ài    .\n" in text
    run = tokparity("explain", str(out), "--width", "100").stdout
    assert "Root cause     model.ignore-merges: reproduces 4 of 4 mismatches and keeps all 349 agreements" in run
    assert "Ġ" not in run.split("Case")[1].split("Root cause")[0]  # the comparison is text, not byte-level spelling
    page = (out / "report.html").read_text("utf-8")
    root = page[page.index('id="root-cause"'):page.index('id="tags"')]
    assert '<span class="tid">100937</span><span class="tpc">␣nhiều</span>' in root  # vi-0005, the shortest
    # the list of mismatches too: text shown, the stored spelling in the tooltip
    assert '<span class="piece t1" title="102507 &#x27;ĠngoÃłi&#x27;">␣ngoài</span>' in page


def test_ties_are_reported_apart(zoo, tmp_path):
    """kyoto-ja's '000' is '00'+'0' to SentencePiece and '0'+'00' to llama.cpp: the same pieces,
    so the same score. A tie, not a failure."""
    zoo("kyoto-ja-unigram")
    out = tmp_path / "run"
    proc = tokparity("compare", "kyoto-ja-unigram", "-b", "llama.cpp", "-c", "edge", "-o", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "  0 (1 tie)  " in proc.stdout
    assert "1 tie apart" in proc.stdout
    explained = tokparity("explain", str(out), "--width", "100").stdout
    assert ("Ties 1 tie of equal score (model.viterbi-tie): two segmentations the model scores the same; reported "
            "apart, not failures. E.g. edge/digits-0053 '1_000_000':") in flat(explained)
    # the tie's ids side by side, in every report (the terminal showed them only when all were ties)
    tie_ids = "\n".join(["  first difference at token 6",
                         "  oracle   … 3 same 584 814 7361 (none) 814 584",
                         "                    0   00  _           00  0",
                         "  backend  … 3 same 584 814 7361 584    814 (none)",
                         "                    0   00  _    0      00",
                         "                                 ^^^^^^     ^^^^^^"])
    assert tie_ids in explained
    case = tokparity("explain", str(out), "digits-0053", "--width", "100").stdout
    assert "Cause          model.viterbi-tie\n" in case
    assert "nothing to fix: two segmentations of exactly equal score" in flat(case)
    md = (out / "summary.md").read_text("utf-8")
    assert "**Ties** 1 tie of equal score (`model.viterbi-tie`)" in md
    assert "\n".join(["```", *(line[2:] for line in tie_ids.splitlines()), "```"]) in md
    page = (out / "report.html").read_text("utf-8")
    assert "<h4>Ties</h4><p>1 tie of equal score (<code>model.viterbi-tie</code>)" in page


def test_a_decoding_op_is_named_in_its_sentence():
    """llama.cpp's stream judged against llama.cpp's decode does not read as llama.cpp differing
    from itself (a newcomer's "llama.cpp differs from llama.cpp on 4 cases")."""
    from tokparity.report.build import verdict_sentence
    from tokparity.run.results import RunSummary

    stream = RunSummary("llama-bpe", "llama.cpp", "llama.cpp", op="stream", cases=10, mismatches=4)
    assert verdict_sentence(stream).startswith("llama.cpp's stream differs from llama.cpp's whole decode on 4 cases of "
                                               "llama-bpe")
    encode = RunSummary("llama-bpe", "llama.cpp", "mine", cases=10, mismatches=4)
    assert verdict_sentence(encode).startswith("mine differs from llama.cpp on 4 cases")


def test_one_line_says_a_verdict_is_not_proven():
    """The terminal's root-cause line said "reproduces 25 of 26 mismatches and keeps 0 of 7
    agreements" and left "not proven" to explain (a newcomer's chat run, 2026-11-29)."""
    from tokparity.records import RootCause
    from tokparity.report.writeup import proof

    loose = RootCause("chat.bos-token-empty", ("chat.bos-token-empty",), 25, 26, 0, 7, False)
    assert proof(loose) == "reproduces 25 of 26 mismatches and keeps 0 of 7 agreements: not proven"
    tight = RootCause("model.greedy-longest-match", ("model.greedy-longest-match",), 181, 181, 703, 703, True)
    assert proof(tight) == "reproduces 181 of 181 mismatches and keeps all 703 agreements"


def test_a_run_with_no_agreement_does_not_claim_to_keep_them():
    """A replayed fuzz file of 3 failing texts read "keeps all 0 agreements": nothing checked the
    cause against a text it must leave alone, and the line says so."""
    from tokparity.diagnose.verdict import sentence
    from tokparity.records import RootCause
    from tokparity.report.writeup import proof

    bare = RootCause("pretokenizer.deepseek3", ("pretokenizer.deepseek3",), 3, 3, 0, 0, True)
    assert proof(bare) == "reproduces 3 of 3 mismatches and is checked on no agreement, since no case agrees"
    assert "0 agreements" not in sentence("llama-bpe", "mine", "llama.cpp", bare, 3)


def test_the_case_shown_has_the_symptom_the_write_up_names():
    """A strip bug: most rows lose a leading space (space-prefix), a few a trailing newline. The
    shortest prose case was one of the few, shown right under "Symptom: space-prefix" (a newcomer's
    trial, 2026-12-01)."""
    from tokparity.records import Decision, Judgement, Mismatch
    from tokparity.report.writeup import writeup
    from tokparity.run.results import RunSummary

    def row(n: int, text: str, cls: str) -> Mismatch:
        j = Judgement("llama-bpe", "multilingual", f"c{n}", {}, "llama.cpp", "mine", cls, "", "unknown", 0, text,
                      [1, 2], [2], ["a", "b"], ["b"])
        return Mismatch(j, Decision(cls, "normalize", cause="input.strip"))

    rows = [row(0, "Hi there\n", "whitespace-runs")] + [row(n, f" Hello my dear friend {n}", "space-prefix")
                                                        for n in range(1, 4)]
    w = writeup(RunSummary("llama-bpe", "llama.cpp", "mine", cases=10, mismatches=4), rows)
    assert w.cls == "space-prefix" and w.case is not None and w.case.cls == "space-prefix", w.case


def test_a_verdict_says_the_crashes_it_leaves_out():
    """mistral-common's server: 9 mismatches, 3 of them HTTP 500s. The verdict weighs the 6 others, and
    its sentence read "reproduces 3 of 6" with nothing on the other 3 (a newcomer's trial, 2026-12-01)."""
    from tokparity.records import RootCause
    from tokparity.report.build import verdict_sentence
    from tokparity.run.results import RunSummary

    verdict = RootCause("chat.parts-joined", ("chat.parts-joined",), 3, 6, 26, 26, False)
    crashed = RunSummary("tekken", "template+tiktoken", "mc", op="chat", cases=35, mismatches=9,
                         classes={"chat-raises": 4, "crash": 3, "chat-ids": 2}, root_cause=verdict)
    assert verdict_sentence(crashed).endswith(
        "reproduces 3 of 6 mismatches and keeps all 26 agreements: not proven, the engine deviates elsewhere or on "
        "fewer texts. The other 3 cases are not weighed: a crash or a timeout gives no answer a cause could reproduce.")
    # (ties are spoken of apart: a verdict that weighs every mismatch but the ties adds nothing)
    tied = RunSummary("llama-bpe", "llama.cpp", "mine", cases=35, mismatches=7, ties=1,
                      root_cause=RootCause("model.other", ("model.other",), 6, 6, 28, 28, True))
    assert verdict_sentence(tied).endswith("keeps all 28 agreements.")


def test_the_cases_where_the_oracle_departs_are_not_counted_twice():
    """A stream whose 4 of 23 mismatches are the oracle's own departures read "On 4 cases more the
    reference gives mine's own answer … The other 4 cases are not weighed": the same 4 cases, told
    twice (a newcomer's trial, 2026-12-04)."""
    from tokparity.records import RootCause
    from tokparity.report.build import verdict_sentence
    from tokparity.run.results import RunSummary

    verdict = RootCause("stream.split-character-sent", ("stream.split-character-sent",), 5, 19, 525, 617, False,
                        oracle_departs=4)
    run = RunSummary("llama-bpe", "llama.cpp", "mine", op="stream", cases=640, mismatches=23, root_cause=verdict)
    said = verdict_sentence(run)
    assert said.endswith("not proven, the engine deviates elsewhere or on fewer texts. On 4 more cases, tokparity's own "
                         "reference gives mine's stream's answer. There llama.cpp's whole decode is the one that differs."), said


def test_a_chat_engine_that_gives_ids_only_shows_its_pieces():
    """The same server gives ids, not a prompt's text. Its most telling case showed "mc:" and
    nothing, and the template's refusal with a mark on every space."""
    from tokparity.records import Decision, Judgement, Mismatch
    from tokparity.report.outputs import decoded_outputs
    from tokparity.report.plain import block

    refused = "(the template raised: TypeError: can only concatenate str (not \"list\") to str)"
    j = Judgement("tekken", "chats", "content-parts-01", {"gave": "ids"}, "template+tiktoken", "mc", "chat-raises",
                  "", "chat", 0, '{"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi."}]}]}',
                  [], [1, 3, 22177, 1046, 4], [], ["<s>", "[INST]", "Hi", ".", "[/INST]"], op="chat",
                  oracle_output=[refused], backend_output=[])
    shown = "\n".join(block(decoded_outputs(Mismatch(j, Decision("chat-raises", "chat"))), 120))
    assert "mc, ids only   <s> [INST] Hi . [/INST]" in shown, shown
    assert refused in shown and "␣" not in shown, shown


def test_a_decoding_case_shows_byte_level_pieces_as_their_bytes():
    """A stream's most telling case listed its ids as GPT-2's byte glyphs (``ðŁ ĳ ¨``): it now
    shows each piece's text, or its bytes where it holds part of a character."""
    from tokparity.records import Decision, Judgement, Mismatch
    from tokparity.report.outputs import decoded_outputs
    from tokparity.report.pieces import BYTE_LEVEL
    from tokparity.report.plain import block

    j = Judgement("llama-bpe", "edge", "control-0047", {"prompt": 1}, "llama.cpp", "mine", "stream-replacement", "",
                  "decode", 0, "👨\u200d💻", [9468, 239, 101], [9468, 239, 101], ["ðŁ", "ĳ", "¨"], [], op="stream",
                  oracle_output=["👨"], backend_output=["\ufffd", "\ufffd"])
    shown = "\n".join(block(decoded_outputs(Mismatch(j, Decision("stream-replacement", "decode")), BYTE_LEVEL), 120))
    assert "<0x91> <0xA8>" in shown and "ðŁ" not in shown, shown
    # (the prompt's ids are not streamed: a newcomer missed them, 2026-12-05; they are shown apart)
    assert "Prompt ids     <0xF0><0x9F> (not streamed)\nStreamed ids   <0x91> <0xA8>" in shown, shown


def test_a_chat_case_whose_prompts_read_alike_shows_the_ids():
    """A doubled BOS: the two prompts are the same text, so the most telling case showed two equal
    strings (a newcomer's chat builder, 2026-12-04). It shows each side's pieces."""
    from tokparity.records import Decision, Judgement, Mismatch
    from tokparity.report.outputs import decoded_outputs
    from tokparity.report.plain import block

    prompt = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    j = Judgement("llama-bpe", "chats", "system-01", {}, "template+llama.cpp", "mine", "chat-bos", "", "chat", 0,
                  '{"messages": [{"role": "user", "content": "Hi"}]}', [128000, 128006], [128000, 128000, 128006],
                  ["<|begin_of_text|>", "<|start_header_id|>"], ["<|begin_of_text|>", "<|begin_of_text|>",
                                                                 "<|start_header_id|>"],
                  op="chat", oracle_output=[prompt], backend_output=[prompt])
    shown = "\n".join(block(decoded_outputs(Mismatch(j, Decision("chat-bos", "chat"))), 200))
    assert "mine, ids" in shown and "<|begin_of_text|> <|begin_of_text|> <|start_header_id|>" in shown, shown


def test_explain_case_shows_a_chat_case_as_its_messages():
    """``explain DIR CASE`` printed a chat case's JSON with a mark on every space (a newcomer,
    2026-12-04): it shows each message's role and content, and a decoding case both answers."""
    from tokparity.records import Decision, Judgement, Mismatch
    from tokparity.report.plain import case_lines

    conversation = '{"messages": [{"role": "user", "content": "Weather in Zürich?"}], "options": {}}'
    j = Judgement("llama-bpe", "chats", "tool-01", {}, "template+llama.cpp", "mine", "chat-text", "", "chat", 0,
                  conversation, [1, 2], [1, 3], ["a", "b"], ["a", "c"], op="chat", oracle_output=["ab"],
                  backend_output=["ac"])
    shown = "\n".join(case_lines([Mismatch(j, Decision("chat-text", "chat"))], {}))
    assert "user 'Weather in Zürich?'" in shown and "␣" not in shown and '"messages"' not in shown, shown
    s = Judgement("llama-bpe", "edge", "c-1", {"prompt": 1}, "llama.cpp", "mine", "stream-text", "", "decode", 0,
                  "ab", [64, 65], [64, 65], ["a", "b"], [], op="stream", oracle_output=["b"], backend_output=["x"])
    shown = "\n".join(case_lines([Mismatch(s, Decision("stream-text", "decode"))], {}))
    assert "mine, streamed" in shown and "the ids are equal" not in shown, shown
