/**
 * A deliberately buggy byte-level BPE engine in plain JavaScript, over a Hugging Face
 * tokenizer.json (the zoo's `llama-bpe`, `qwen3` and `gpt-oss`), whose bugs are all in one place:
 * how the split regex's case-insensitive contraction group `(?i:'s|'t|'re|'ve|'m|'ll|'d)` is
 * rewritten for JavaScript. Node 20's RegExp has no inline `(?i:...)` modifier (a SyntaxError
 * "Invalid group"), so every JavaScript port must rewrite that group, and real ports do it in
 * different, not quite right, ways. Llama 3's and Qwen 3's patterns start with the group as an
 * alternative of its own; gpt-oss's (o200k) has it twice, as an optional suffix after each of its
 * two word alternatives (`...[\p{Ll}...]+(?i:'s|...)?|...`).
 *
 * Written for tokparity's test suite on 2026-11-26 from the bug class only, by an author who read
 * none of tokparity's diagnosis code (see README.md beside it) and ran tokparity only with
 * `--no-diagnose`. The engine is js_bpe.mjs's (the GPT-2 `encoder.py` port style: regex split,
 * byte-to-unicode alphabet, lowest-rank-pair `bpe()` with a cache), with its two bugs taken out.
 *
 *     node js_contractions.mjs tokenizer.json [--drop-i | --ascii-case | --flag-i]
 *
 * It speaks tokparity's `cmd:` protocol through ../thirdparty/protocol.mjs. No npm packages. At
 * most one flag (each is a different rewrite of the same group).
 *
 * With no flag it is meant to be right (the twin). What it does, in the order the text goes
 * through it:
 *
 * 1. Added tokens: cut out of the raw text first, leftmost-longest, as the tokenizers library's
 *    added vocabulary does: a token marked `special: false` always (qwen3's `<think>`,
 *    `<tool_call>`, `<|fim_prefix|>`, ...), a special one only with `parse_special`. `lstrip`,
 *    `rstrip`, `single_word` and `normalized: true` are refused at start (none in the three files).
 * 2. Normalizer of each remaining piece: NFC / NFD / NFKC / NFKD, a Sequence of them, or none.
 * 3. Split: the `Split` regexes (behavior `Isolated`, not inverted) and GPT-2's pattern for a
 *    `ByteLevel` step with `use_regex`, translated from Oniguruma to a JavaScript RegExp with the
 *    `u` flag. `\s` / `\S` are spelled out as Unicode White_Space (Oniguruma's `\s`; JavaScript's
 *    lacks U+0085 and has U+FEFF), in every mode. `(?i:...)` becomes `(?:...)` with each letter
 *    inside as the class of every character with the same simple case fold: `[sSſ]` (U+017F
 *    LATIN SMALL LETTER LONG S folds to s), `[kK` + U+212A KELVIN SIGN + `]`, otherwise `[tT]` etc.,
 *    which is what Oniguruma's case-insensitive match does on these letters.
 * 4. Bytes in GPT-2's byte-to-unicode alphabet; with `ignore_merges` a pre-token whole in the
 *    vocabulary is that id; otherwise GPT-2's `bpe()`. Vocabulary and cache are Maps.
 *
 * `add_special` adds nothing (the three files' post-processors are ByteLevel: no BOS; any other
 * post-processor answers an error). `decode` maps ids back to bytes (added tokens as their text)
 * with the protocol's `skip_special` and `clean_up_spaces`; no flag touches it.
 *
 * The flags (each one a way a JavaScript port rewrites `(?i:'s|'t|'re|'ve|'m|'ll|'d)`)
 * ----------------------------------------------------------------------------------------------
 * Ids below are the `tokenizers` library's (0.23.3) and this engine's; the pre-tokens are shown
 * with `|` between them.
 *
 * --drop-i
 *     The modifier is deleted and the letters are left as written: `(?:'s|'t|'re|'ve|'m|'ll|'d)`,
 *     GPT-2's own case-sensitive contractions. Only the all-lowercase forms are contractions;
 *     `'S`, `'T`, `'RE`, `'Re`, `'rE`, `'VE`, `'M`, `'LL`, `'Ll`, `'D` and `'ſ` are not, and the
 *     text is taken by the pattern's next alternatives: in llama-bpe and qwen3,
 *     `[^\r\n\p{L}\p{N}]?\p{L}+` takes the apostrophe with the whole run of letters after it
 *     (`it|'Self` where the right split is `it|'S|elf`); in gpt-oss the word's optional suffix is
 *     not taken, so the word ends before the apostrophe and the apostrophe starts the next word
 *     (`it|'Self` for `it'S|elf`, ` I|'M` for ` I'M`). The ids change only where BPE then merges
 *     differently: an upper-case contraction with nothing after it (`DON'T`, `IT'S` at the end
 *     of a text) gives the same ids in llama-bpe and qwen3, and in gpt-oss mostly too.
 *     Why a port has it: the pattern compiles once the `?i` is gone, and the lowercase forms are
 *     what English text and GPT-2's pattern have.
 *     Minimal text, llama-bpe: "it'Self"   right [275, 13575, 491] (it|'S|elf)
 *                                          engine [275, 6, 12363]  (it|'Self)
 *
 * --ascii-case
 *     Each letter inside the group becomes its two ASCII cases: `(?:'[sS]|'[tT]|'[rR][eE]|
 *     '[vV][eE]|'[mM]|'[lL][lL]|'[dD])`, which matches what transformers.js's
 *     PROBLEMATIC_REGEX_MAP writes (`(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))`) and
 *     many ports copied from it, often with a comment that it is exactly equivalent.
 *     Every ASCII case is right; only `'ſ` (U+017F, whose case fold is s, so Oniguruma's `(?i:'s)`
 *     matches it) is no longer a contraction and falls to the next alternatives as with --drop-i.
 *     In llama-bpe and qwen3 that never changes the ids (no token of either vocabulary joins ſ's
 *     bytes to a neighbour's: `it'ſx` is it|'ſ|x or it|'ſx, the same ids); in gpt-oss it does
 *     where the word before the apostrophe is " I" (the vocabulary's ` I'`).
 *     Minimal text, gpt-oss: " I'ſ"   right [3413, 70067]    ( I'ſ, one pre-token: ` I'` + ſ)
 *                                     engine [357, 6, 70067] ( I|'ſ)
 *
 * --flag-i
 *     The modifier is deleted, the letters left as written, and the `i` flag is put on the whole
 *     RegExp (`new RegExp(source, "giu")`), as several JavaScript ports of the cl100k / o200k
 *     patterns do. The contractions are then right (JavaScript's /iu folds ſ to s too), but the
 *     rest of the pattern is case-insensitive as well, and under /iu a character matches a class
 *     when its case fold matches a member's: `\p{L}` then also matches U+0345 COMBINING GREEK
 *     YPOGEGRAMMENI (a mark, category Mn, whose case fold is ι), the one character in Unicode
 *     where `\p{L}` or `\p{N}` changes. So in llama-bpe and qwen3 U+0345 counts as a letter:
 *     `ͅ.|sn` becomes `ͅ|.sn`, `.ͅ|n` becomes `.ͅn`, and NFD polytonic Greek (`ᾳ` as α + U+0345)
 *     glued to the next word by punctuation changes (qwen3's NFC composes most of these back).
 *     In gpt-oss's pattern `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` and `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
 *     both match every cased letter under /iu, so a camelCase run is one pre-token (`camelCase`,
 *     not `camel|Case`), but o200k's vocabulary has no token with a lower-case letter before an
 *     upper-case one, so BPE gives the same ids: no id of gpt-oss changed in any text tried.
 *     (U+0345 is \p{M}, inside both of gpt-oss's word classes already.) Only the Split regex that
 *     holds `(?i:` gets the flag.
 *     Minimal text, llama-bpe: "\u0345.sn"   right [137, 227, 13, 9810] (ͅ.|sn)
 *                                            engine [137, 227, 38772]   (ͅ|.sn)
 */

import { readFileSync } from "node:fs";
import { serve } from "../thirdparty/protocol.mjs";

// ------------------------------------------------------------------------------------------------
// Command line

const args = process.argv.slice(2);
const FLAGS = new Set(["--drop-i", "--ascii-case", "--flag-i"]);
const files = args.filter((a) => !a.startsWith("--"));
const unknown = args.filter((a) => a.startsWith("--") && !FLAGS.has(a));
const flags = args.filter((a) => FLAGS.has(a));
if (files.length !== 1 || unknown.length || new Set(flags).size > 1) {
  process.stderr.write("usage: node js_contractions.mjs tokenizer.json [--drop-i | --ascii-case | --flag-i]\n");
  process.exit(2);
}
// How (?i:...) is rewritten: "fold" (the twin), or the flag's way.
const MODE = { "--drop-i": "drop", "--ascii-case": "ascii", "--flag-i": "flag" }[flags[0]] ?? "fold";

const config = JSON.parse(readFileSync(files[0], "utf8"));
const model = config.model;
if (model?.type !== "BPE") throw new Error(`not a BPE model: ${model?.type}`);
if (model.continuing_subword_prefix || model.end_of_word_suffix || model.byte_fallback || model.dropout) {
  throw new Error("continuing_subword_prefix, end_of_word_suffix, byte_fallback and dropout are not implemented");
}

// ------------------------------------------------------------------------------------------------
// Split patterns: Oniguruma (as tokenizer.json spells them) to JavaScript

// GPT-2's pattern, which a ByteLevel pre-tokenizer with use_regex (the default) applies itself.
const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// Unicode White_Space, which is what Oniguruma's (and Python's) \s matches. JavaScript's \s is a
// different set (no U+0085, plus U+FEFF), so it is spelled out in every mode.
const WHITE_SPACE = "\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

// Under Oniguruma's (?i:...) a letter matches every character whose simple case fold is the same:
// for the ASCII letters that is the two cases, plus ſ (U+017F LATIN SMALL LETTER LONG S) for s and
// the Kelvin sign (U+212A) for k (Unicode's CaseFolding.txt has no other such pair). The full
// (multi-character) folds give no contraction: no character folds to "re", "ve", "ll", nor to any
// of them after an apostrophe.
const FOLDS = { s: "sS\u017f", k: "kK\u212a" };

/** One letter inside (?i:...), as the mode writes it. */
function caselessLetter(c) {
  const lower = c.toLowerCase();
  if (MODE === "fold") return `[${FOLDS[lower] ?? lower + lower.toUpperCase()}]`;
  if (MODE === "ascii") return `[${lower}${lower.toUpperCase()}]`;
  return c;  // "drop" and "flag": the letter as written
}

/**
 * The pattern as a JavaScript RegExp source (for the `u` flag). Handles what the zoo's patterns
 * use: `(?i:...)` over literal text (Node 20 has no inline modifiers: rewritten as the mode says)
 * and `\s` / `\S` in and out of character classes (White_Space spelled out). `\S` inside a class
 * cannot be spelled out without the `v` flag and is refused.
 */
function translatePattern(pattern) {
  let out = "";
  let inClass = false;
  const groups = [];  // for each open group: is it a (?i:...) group
  const caseless = () => groups.includes(true);
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[++i];
      if (next === undefined) throw new Error(`pattern ends in a backslash: ${pattern}`);
      if (next === "s" || next === "S") {
        if (inClass && next === "S") throw new Error(`\\S inside a class is not translated: ${pattern}`);
        out += inClass ? WHITE_SPACE : next === "s" ? `[${WHITE_SPACE}]` : `[^${WHITE_SPACE}]`;
      } else if (next === "p" || next === "P") {
        const close = pattern.indexOf("}", i);  // \p{L}: copy the whole property name
        out += pattern.slice(i - 1, close + 1);
        i = close;
      } else {
        out += "\\" + next;
      }
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
      if (pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "]") out += pattern[++i];  // a leading ] is a literal in Oniguruma
    } else if (pattern.startsWith("(?i:", i)) {
      groups.push(true);
      out += "(?:";
      i += 3;
    } else if (c === "(") {
      groups.push(false);
      out += c;
    } else if (c === ")") {
      groups.pop();
      out += c;
    } else if (caseless() && /[a-zA-Z]/.test(c)) {
      out += caselessLetter(c);
    } else {
      out += c;
    }
  }
  return out;
}

/** The RegExp of one split pattern. --flag-i makes the whole of it case-insensitive. */
function compile(pattern) {
  const caseInsensitive = MODE === "flag" && pattern.includes("(?i:");
  return new RegExp(translatePattern(pattern), caseInsensitive ? "giu" : "gu");
}

// ------------------------------------------------------------------------------------------------
// Normalizer and pre-tokenizer from the file

function normalizerOf(spec) {
  if (spec == null) return (text) => text;
  if (["NFC", "NFD", "NFKC", "NFKD"].includes(spec.type)) return (text) => text.normalize(spec.type);
  if (spec.type === "Sequence") {
    const steps = spec.normalizers.map(normalizerOf);
    return (text) => steps.reduce((t, step) => step(t), text);
  }
  throw new Error(`normalizer ${spec.type} is not implemented`);
}

/** The split regexes, in order; each later one splits every piece the earlier ones made. */
function splitPatternsOf(spec) {
  if (spec == null) return [];
  if (spec.type === "Sequence") return spec.pretokenizers.flatMap(splitPatternsOf);
  if (spec.type === "ByteLevel") {
    if (spec.add_prefix_space) throw new Error("ByteLevel add_prefix_space is not implemented");
    return spec.use_regex === false ? [] : [compile(GPT2_PATTERN)];
  }
  if (spec.type === "Split") {
    if (spec.behavior !== "Isolated" || spec.invert) throw new Error("only Split Isolated, not inverted, is implemented");
    const source = spec.pattern.Regex ?? spec.pattern.String.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    return [compile(source)];
  }
  throw new Error(`pre-tokenizer ${spec.type} is not implemented`);
}

const normalize = normalizerOf(config.normalizer);
const splitPatterns = splitPatternsOf(config.pre_tokenizer);

/** Isolated split: the matches are pre-tokens, and so is any text between them. */
function splitText(text) {
  let pieces = [text];
  for (const pattern of splitPatterns) {
    pieces = pieces.flatMap((piece) => {
      const out = [];
      let last = 0;
      for (const m of piece.matchAll(pattern)) {
        if (m[0] === "") continue;
        if (m.index > last) out.push(piece.slice(last, m.index));
        out.push(m[0]);
        last = m.index + m[0].length;
      }
      if (last < piece.length) out.push(piece.slice(last));
      return out;
    });
  }
  return pieces;
}

// ------------------------------------------------------------------------------------------------
// GPT-2's byte-to-unicode alphabet

/** Printable Latin-1 bytes stand for themselves; the other 68 are moved to U+0100 and up. */
function bytesToUnicode() {
  const bs = [];
  for (let b = "!".charCodeAt(0); b <= "~".charCodeAt(0); b++) bs.push(b);
  for (let b = "¡".charCodeAt(0); b <= "¬".charCodeAt(0); b++) bs.push(b);
  for (let b = "®".charCodeAt(0); b <= "ÿ".charCodeAt(0); b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const table = new Array(256);
  bs.forEach((b, i) => (table[b] = String.fromCharCode(cs[i])));
  return table;
}

const byteEncoder = bytesToUnicode();
const byteDecoder = new Map(byteEncoder.map((ch, b) => [ch, b]));
const utf8 = new TextEncoder();

// ------------------------------------------------------------------------------------------------
// Vocabulary, merges, cache (Maps: a plain object would also "hold" Object.prototype's members)

const vocab = new Map(Object.entries(model.vocab));

// "a b" -> rank. Byte-level symbols never hold a space, so "a b" names one pair unambiguously.
const bpeRanks = new Map();
model.merges.forEach((merge, rank) => {
  const [a, b] = Array.isArray(merge) ? merge : merge.split(" ");
  bpeRanks.set(a + " " + b, rank);
});

const cache = new Map();

const decoder = new Map([...vocab].map(([token, id]) => [id, token]));
const addedTokens = new Map((config.added_tokens ?? []).map((added) => [added.id, added]));

// ------------------------------------------------------------------------------------------------
// BPE

/**
 * GPT-2's bpe(): the merged symbols of one pre-token (in the byte alphabet) joined by spaces.
 * Each round takes the adjacent pair of lowest rank and merges every occurrence of it, left to
 * right, until no adjacent pair has a rank.
 */
function bpe(token) {
  if (cache.has(token)) return cache.get(token);
  let word = Array.from(token);
  while (word.length > 1) {
    let best = null;
    let bestRank = Infinity;
    for (let i = 0; i < word.length - 1; i++) {
      const rank = bpeRanks.get(word[i] + " " + word[i + 1]);
      if (rank !== undefined && rank < bestRank) {
        bestRank = rank;
        best = [word[i], word[i + 1]];
      }
    }
    if (best === null) break;
    const [first, second] = best;
    const merged = [];
    for (let i = 0; i < word.length; ) {
      if (i < word.length - 1 && word[i] === first && word[i + 1] === second) {
        merged.push(first + second);
        i += 2;
      } else {
        merged.push(word[i]);
        i += 1;
      }
    }
    word = merged;
  }
  const result = word.join(" ");
  cache.set(token, result);
  return result;
}

// ------------------------------------------------------------------------------------------------
// Added tokens, cut out of the raw text before anything else (all three zoo files mark theirs
// normalized: false, with no lstrip, rstrip or single_word; other options are refused at start)

for (const added of config.added_tokens ?? []) {
  if (added.lstrip || added.rstrip || added.single_word || added.normalized) {
    throw new Error(`added token ${JSON.stringify(added.content)}: lstrip, rstrip, single_word and normalized are not implemented`);
  }
}
// First character -> the added tokens starting with it, longest first.
const addedByFirst = new Map();
for (const added of [...(config.added_tokens ?? [])].sort((a, b) => b.content.length - a.content.length)) {
  if (!added.content) continue;
  const first = added.content[0];
  if (!addedByFirst.has(first)) addedByFirst.set(first, []);
  addedByFirst.get(first).push(added);
}

/**
 * The text as a list of strings (ordinary text) and added tokens, leftmost-longest as the
 * tokenizers library's added vocabulary matches them: a token that is not special is always
 * matched, a special one only with parse_special.
 */
function cutAddedTokens(text, parseSpecial) {
  const parts = [];
  let start = 0;
  for (let i = 0; i < text.length; ) {
    const found = (addedByFirst.get(text[i]) ?? []).find(
      (added) => (parseSpecial || !added.special) && text.startsWith(added.content, i));
    if (found) {
      if (i > start) parts.push(text.slice(start, i));
      parts.push(found);
      i += found.content.length;
      start = i;
    } else {
      i += 1;
    }
  }
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}

// add_special adds nothing where the post-processor is ByteLevel or absent (the three zoo files:
// no BOS); any other post-processor (TemplateProcessing) is not implemented.
const POST_ADDS_NOTHING = config.post_processor == null || config.post_processor.type === "ByteLevel";

function encode(text, addSpecial = false, parseSpecial = false) {
  if (addSpecial && !POST_ADDS_NOTHING) throw new Error(`add_special with a ${config.post_processor.type} post-processor is not implemented`);
  const ids = [];
  for (const part of cutAddedTokens(text, parseSpecial)) {
    if (typeof part !== "string") {
      ids.push(part.id);
      continue;
    }
    for (const piece of splitText(normalize(part))) {
      const token = Array.from(utf8.encode(piece), (b) => byteEncoder[b]).join("");
      if (model.ignore_merges && vocab.has(token)) {
        ids.push(vocab.get(token));
        continue;
      }
      for (const symbol of bpe(token).split(" ")) {
        // Every merge result and every single byte is in a byte-level vocabulary.
        ids.push(vocab.get(symbol));
      }
    }
  }
  return ids;
}

// transformers' clean_up_tokenization, in its order, each replaced everywhere.
const CLEAN_UP = [[" .", "."], [" ?", "?"], [" !", "!"], [" ,", ","], [" ' ", "'"], [" n't", "n't"],
  [" 'm", "'m"], [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"]];

/**
 * Ids back to text. `skip_special` leaves special added tokens out; `clean_up_spaces` true
 * cleans up as transformers does, and absent or false does not (what the tokenizers library does
 * with a tokenizer.json alone). Spacing special tokens apart and removing BOS/EOS are not
 * implemented: an error with no status, which tokparity reads as "not tried".
 */
function decode(ids, settings = {}) {
  if (settings.spaces_between_specials || settings.remove_special) {
    throw new Error("spaces_between_specials and remove_special are not implemented");
  }
  const bytes = [];
  for (const id of ids) {
    // An added token's text is plain text, not spelled in the byte alphabet.
    if (addedTokens.has(id)) {
      const added = addedTokens.get(id);
      if (!(added.special && settings.skip_special)) bytes.push(...utf8.encode(added.content));
      continue;
    }
    const token = decoder.get(id);
    if (token === undefined) throw new Error(`unknown id ${id}`);
    for (const ch of token) bytes.push(byteDecoder.get(ch));
  }
  // ignoreBOM: a decoded text may begin with U+FEFF, which is text here, not a byte-order mark.
  let text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(bytes));
  if (settings.clean_up_spaces) {
    for (const [from, to] of CLEAN_UP) text = text.replaceAll(from, to);
  }
  return text;
}

await serve({ encode, decode });
