#!/usr/bin/env node
// blind16_spm.mjs: a SentencePiece-style BPE encoder in plain JavaScript (Node 20+, standard library
// only) for Llama-2-like models, reading the model's Hugging Face tokenizer.json, with two bugs a
// JavaScript port really has, each behind a flag. Written on 2026-11-30 from bug descriptions only:
// its author read no diagnosis code and ran tokparity with `--no-diagnose`, looking at mismatch
// counts only. Models: lenml-llama2 (Llama 2's 32,000 pieces) and gemma-3 (262k pieces, no dummy
// prefix).
//
// What it follows of the file (without flags it is the bug-free twin):
// - added_tokens: the non-special ones (Gemma's `<mask>`, `\n\n`, `▁▁`, ...) are cut out of the raw
//   text first, leftmost-longest, as tokenizers' AddedVocabulary does for `normalized: false`
//   tokens; special ones only with `parse_special` (off by default: their text is plain text).
// - normalizer: Sequence / Prepend (only on a non-empty segment) / Replace with a String pattern.
//   Llama 2: Prepend "▁", Replace " " -> "▁". Gemma 3: Replace " " -> "▁" only (no dummy prefix).
// - pre_tokenizer: null or Split on a String pattern (Gemma 3's Split " " MergedWithPrevious, which
//   never fires on normalized text: its spaces are already "▁").
// - model BPE: every character a symbol (byte_fallback: a character with no piece becomes its UTF-8
//   bytes as `<0xHH>`, else unk), then merges applied lowest rank first, leftmost on a tie (the
//   priority queue of tokenizers' `Word::merge_all`).
// - post_processor TemplateProcessing only when `add_special` is asked (tokparity does not by
//   default: no BOS/EOS).
// Only the `encode` op (reply `ids`); every other op answers an error (not implemented).
//
// Flags (may be combined):
// --decoded-vocab   The port ships its vocabulary table "decoded", every piece's "▁" replaced by a
//                   plain space (' m' for '▁m'), as some npm vocabulary packages do to make pieces
//                   readable; the merges are read into the same decoded strings and looked up on
//                   them. To stay consistent it never replaces spaces in the input with "▁" (the
//                   Replace " " -> "▁" becomes " " -> " ", dropped) and adds the dummy prefix the
//                   model asks for as a space; Gemma's Split " " (which in tokenizers runs on text
//                   with no spaces left) is skipped. Consequence a user reported: a "▁" typed in
//                   the text is no longer the same as a space; no piece holds it, so it falls back
//                   to its three bytes <0xE2><0x96><0x81> (`hello▁world`). Added tokens are kept
//                   as the file spells them.
// --code-unit-walk  In place of BPE, greedy longest match over a trie of the vocabulary's normal
//                   pieces (not the `<0xHH>` byte pieces, not control tokens). The trie is built
//                   with `for (const ch of piece)` (code points) but the text is walked by index,
//                   `text[i]` (UTF-16 code units), as the popular JS trie of @lenml-style ports
//                   does: a character past U+FFFF (an emoji) can never start or continue a match.
//                   Characters where no piece starts are collected into a run; when the run ends
//                   it is looked up whole in the vocabulary (a lone emoji may be a piece), else
//                   written as its UTF-8 bytes <0xHH>. Emoji pairs, emoji with skin tones, and
//                   emoji glued to "▁" or letters come out as bytes or as the wrong pieces.
// --greedy          The twin of --code-unit-walk: the same greedy longest match and runs, walked
//                   by code points (Array.from). Greedy is not BPE, so it differs from the oracle
//                   on some texts too, but it never treats an emoji specially.
//
// Command lines (from /work/main; the same with gemma-3 in place of lenml-llama2; add -c emoji or
// -c tests/engines/blind/blind16_texts.jsonl):
//   $PY -P -m tokparity compare lenml-llama2 -b "cmd:node $PWD/tests/engines/blind/blind16_spm.mjs {tokenizer_json}" --no-diagnose -o /tmp/b16 -q
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json}                      (the twin; lenml-llama2, gemma-3)
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json} --decoded-vocab
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json} --code-unit-walk
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json} --greedy             (twin of --code-unit-walk)
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json} --decoded-vocab --code-unit-walk
//   cmd:node tests/engines/blind/blind16_spm.mjs {tokenizer_json} --decoded-vocab --greedy
// Texts that show the bugs: tests/engines/blind/blind16_texts.jsonl (-c that file; also -c emoji).

import { readFileSync } from "node:fs";
import { serve } from "../thirdparty/protocol.mjs";

const argv = process.argv.slice(2);
const path = argv.find((a) => !a.startsWith("--"));
const flags = new Set(argv.filter((a) => a.startsWith("--")));
for (const f of flags) {
  if (!["--decoded-vocab", "--code-unit-walk", "--greedy"].includes(f)) throw new Error(`unknown flag ${f}`);
}
if (!path) throw new Error("usage: blind16_spm.mjs TOKENIZER_JSON [--decoded-vocab] [--code-unit-walk | --greedy]");
if (flags.has("--code-unit-walk") && flags.has("--greedy")) throw new Error("--code-unit-walk and --greedy are two walks: give one");
const DECODED = flags.has("--decoded-vocab");
const WALK = flags.has("--code-unit-walk") ? "units" : flags.has("--greedy") ? "points" : null;

const META = "\u2581";
const file = JSON.parse(readFileSync(path, "utf8"));
const model = file.model;
if (!model || model.type !== "BPE") throw new Error(`not a BPE model: ${model?.type}`);

// What the vocabulary package ships: with --decoded-vocab every "▁" is a space.
const decodePiece = DECODED ? (s) => s.replaceAll(META, " ") : (s) => s;

// ---- vocabulary and merges -------------------------------------------------------------------
const vocab = new Map(); // piece (as this port spells it) -> id
for (const [piece, id] of Object.entries(model.vocab)) vocab.set(decodePiece(piece), id);
const byteIds = [];
for (let b = 0; b < 256; b++) byteIds.push(vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`));
const unkId = model.unk_token != null ? vocab.get(decodePiece(model.unk_token)) : undefined;

const ranks = new Map(); // left -> Map(right -> rank)
model.merges.forEach((m, rank) => {
  let a, b;
  if (Array.isArray(m)) [a, b] = m;
  else {
    const i = m.indexOf(" ");
    a = m.slice(0, i);
    b = m.slice(i + 1);
  }
  a = decodePiece(a);
  b = decodePiece(b);
  let inner = ranks.get(a);
  if (!inner) ranks.set(a, (inner = new Map()));
  if (!inner.has(b)) inner.set(b, rank);
});
const rankOf = (a, b) => ranks.get(a)?.get(b);

// ---- added tokens ----------------------------------------------------------------------------
const added = file.added_tokens ?? [];
const specialContents = new Set(added.filter((t) => t.special).map((t) => t.content));
function buildAddedTrie(tokens) {
  const root = new Map();
  for (const t of tokens) {
    let node = root;
    for (let i = 0; i < t.content.length; i++) {
      const u = t.content[i];
      if (!node.has(u)) node.set(u, new Map());
      node = node.get(u);
    }
    node.set("", t.id);
  }
  return root;
}
const addedTrie = buildAddedTrie(added.filter((t) => !t.special));
const addedTrieSpecial = buildAddedTrie(added);

// Leftmost-longest: [{added: id} | {text: segment}]
function splitAdded(text, trie) {
  const out = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    let node = trie;
    let best = -1;
    let bestId;
    for (let j = i; j < text.length; j++) {
      node = node.get(text[j]);
      if (!node) break;
      if (node.has("")) {
        best = j + 1;
        bestId = node.get("");
      }
    }
    if (best < 0) {
      i++;
      continue;
    }
    if (i > start) out.push({ text: text.slice(start, i) });
    out.push({ added: bestId });
    i = start = best;
  }
  if (start < text.length) out.push({ text: text.slice(start) });
  return out;
}

// ---- normalizer --------------------------------------------------------------------------------
function stringPattern(p) {
  if (p && typeof p.String === "string") return p.String;
  throw new Error(`pattern not supported: ${JSON.stringify(p)}`);
}
const replacedAway = new Set(); // strings the normalizer has replaced (none is left after it)
function buildNormalizer(n) {
  if (n == null) return (s) => s;
  switch (n.type) {
    case "Sequence": {
      const steps = n.normalizers.map(buildNormalizer);
      return (s) => steps.reduce((acc, f) => f(acc), s);
    }
    case "Prepend": {
      const pre = decodePiece(n.prepend); // the dummy prefix: "▁", or " " with --decoded-vocab
      return (s) => (s.length ? pre + s : s);
    }
    case "Replace": {
      const from = stringPattern(n.pattern);
      const to = decodePiece(n.content);
      replacedAway.add(from);
      if (from === to) return (s) => s; // --decoded-vocab: " " -> " ", nothing to do
      return (s) => s.replaceAll(from, to);
    }
    default:
      throw new Error(`normalizer not supported: ${n.type}`);
  }
}
const normalize = buildNormalizer(file.normalizer);

// ---- pre-tokenizer -----------------------------------------------------------------------------
function buildPreTokenizer(p) {
  if (p == null) return (s) => [s];
  switch (p.type) {
    case "Sequence": {
      const steps = p.pretokenizers.map(buildPreTokenizer);
      return (s) => steps.reduce((parts, f) => parts.flatMap(f), [s]);
    }
    case "Split": {
      if (p.invert) throw new Error("inverted Split not supported");
      const pat = stringPattern(p.pattern);
      // tokenizers runs this on the normalized text, where a Replace of this same string has left
      // none of it; our decoded text still has its spaces (they are the metaspace): skip it.
      if (DECODED && replacedAway.has(pat) && !pat.includes(META)) return (s) => [s];
      return (s) => splitString(s, pat, p.behavior);
    }
    default:
      throw new Error(`pre_tokenizer not supported: ${p.type}`);
  }
}
function splitString(s, pat, behavior) {
  // tokenizers' SplitDelimiterBehavior on a String pattern; empty pieces dropped
  if (!pat) return [s];
  const out = [];
  let last = 0; // start of the piece being built
  for (let i = s.indexOf(pat); i >= 0; i = s.indexOf(pat, i + pat.length)) {
    switch (behavior) {
      case "Removed":
        out.push(s.slice(last, i));
        last = i + pat.length;
        break;
      case "Isolated":
        out.push(s.slice(last, i), pat);
        last = i + pat.length;
        break;
      case "MergedWithPrevious":
        out.push(s.slice(last, i + pat.length));
        last = i + pat.length;
        break;
      case "MergedWithNext":
        out.push(s.slice(last, i));
        last = i;
        break;
      default:
        throw new Error(`Split behavior not supported: ${behavior}`);
    }
  }
  out.push(s.slice(last));
  return out.filter((x) => x.length > 0);
}
const preTokenize = buildPreTokenizer(file.pre_tokenizer);

// ---- the model: BPE ----------------------------------------------------------------------------
const enc = new TextEncoder();
function fallback(str, out) {
  // str: one character (BPE) or a run (greedy walk) with no piece: its UTF-8 bytes as <0xHH>
  const bytes = enc.encode(str);
  if (model.byte_fallback && bytes.every((b) => byteIds[b] !== undefined)) {
    for (const b of bytes) out.push(byteIds[b]);
  } else if (unkId !== undefined) {
    if (!(model.fuse_unk && out.length && out[out.length - 1] === unkId)) out.push(unkId);
  } else throw new Error(`no piece for ${JSON.stringify(str)} and no unk`);
}

class Heap {
  // entries [rank, pos, merged]; smallest rank first, then leftmost
  constructor() {
    this.a = [];
  }
  less(x, y) {
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  }
  push(e) {
    const a = this.a;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
  get size() {
    return this.a.length;
  }
}

function bpe(word, out) {
  // symbols: strings (pieces as this port spells them); ids: null until byte fallback decides
  const sym = [];
  const fixed = []; // ids of byte-fallback symbols (they take part in no merge)
  for (const ch of word) {
    if (vocab.has(ch)) {
      sym.push(ch);
      fixed.push(null);
    } else {
      const ids = [];
      fallback(ch, ids);
      for (const id of ids) {
        sym.push(null);
        fixed.push(id);
      }
    }
  }
  const n = sym.length;
  const prev = Array.from({ length: n }, (_, i) => i - 1);
  const next = Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1));
  const alive = new Array(n).fill(true);
  const heap = new Heap();
  const consider = (i) => {
    const j = next[i];
    if (j < 0 || sym[i] === null || sym[j] === null) return;
    const r = rankOf(sym[i], sym[j]);
    if (r !== undefined && vocab.has(sym[i] + sym[j])) heap.push([r, i, sym[i] + sym[j]]);
  };
  for (let i = 0; i < n - 1; i++) consider(i);
  while (heap.size) {
    const [, i, merged] = heap.pop();
    if (!alive[i]) continue;
    const j = next[i];
    if (j < 0 || sym[i] === null || sym[j] === null || sym[i] + sym[j] !== merged) continue;
    if (rankOf(sym[i], sym[j]) === undefined) continue;
    sym[i] = merged;
    alive[j] = false;
    next[i] = next[j];
    if (next[j] >= 0) prev[next[j]] = i;
    if (prev[i] >= 0) consider(prev[i]);
    consider(i);
  }
  for (let i = 0; i >= 0 && i < n; i = next[i]) out.push(sym[i] === null ? fixed[i] : vocab.get(sym[i]));
}

// ---- the model with --code-unit-walk / --greedy: longest match over a trie -----------------------
let trie = null;
function buildTrie() {
  const isByte = /^<0x[0-9A-Fa-f]{2}>$/;
  const control = new Set([...specialContents].map(decodePiece));
  trie = new Map();
  for (const [piece, id] of vocab) {
    if (isByte.test(piece) || control.has(piece)) continue;
    let node = trie;
    for (const ch of piece) {
      let child = node.get(ch);
      if (!child) node.set(ch, (child = new Map()));
      node = child;
    }
    node.set("", id);
  }
}

function greedy(word, out) {
  // --code-unit-walk: text[i] is a UTF-16 code unit; --greedy: chars[i] a whole code point
  const chars = WALK === "units" ? word : Array.from(word);
  let run = "";
  const flushRun = () => {
    if (!run) return;
    const id = vocab.get(run);
    if (id !== undefined) out.push(id);
    else fallback(run, out);
    run = "";
  };
  let i = 0;
  while (i < chars.length) {
    let node = trie;
    let bestLen = 0;
    let bestId;
    for (let j = i; j < chars.length; j++) {
      node = node.get(chars[j]);
      if (!node) break;
      const id = node.get("");
      if (id !== undefined) {
        bestLen = j - i + 1;
        bestId = id;
      }
    }
    if (bestLen === 0) {
      run += chars[i];
      i++;
      continue;
    }
    flushRun();
    out.push(bestId);
    i += bestLen;
  }
  flushRun();
}

if (WALK) buildTrie();
const runModel = WALK ? greedy : bpe;

// ---- post-processor (only with add_special) ----------------------------------------------------
function postProcess(ids) {
  const pp = file.post_processor;
  if (!pp) return ids;
  if (pp.type !== "TemplateProcessing") throw new Error(`post_processor not supported: ${pp.type}`);
  const out = [];
  for (const item of pp.single) {
    if (item.Sequence) out.push(...ids);
    else if (item.SpecialToken) out.push(...pp.special_tokens[item.SpecialToken.id].ids);
  }
  return out;
}

function encode(text, addSpecial, parseSpecial) {
  const ids = [];
  for (const part of splitAdded(text, parseSpecial ? addedTrieSpecial : addedTrie)) {
    if (part.added !== undefined) {
      ids.push(part.added);
      continue;
    }
    const normalized = normalize(part.text);
    for (const word of preTokenize(normalized)) runModel(word, ids);
  }
  return addSpecial ? postProcess(ids) : ids;
}

serve({ encode });
