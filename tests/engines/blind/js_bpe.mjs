/**
 * A deliberately buggy byte-level BPE engine in plain JavaScript, over a Hugging Face
 * tokenizer.json (GPT-2 / Llama 3 style models: the zoo's `claude` and `llama-bpe`).
 *
 * Written for tokparity's test suite on 2026-11-26 from bug descriptions only, by an author who
 * read none of tokparity's diagnosis code (see README.md beside it), in the style of the many
 * hand-made JavaScript ports of OpenAI's GPT-2 `encoder.py` on npm (gpt-3-encoder and its
 * descendants): a regex split, the byte-to-unicode alphabet, the classic "find the lowest-ranked
 * pair, merge it everywhere, repeat" `bpe()` with a cache.
 *
 *     node js_bpe.mjs tokenizer.json [--plain-object] [--js-whitespace]
 *
 * It speaks tokparity's `cmd:` protocol through ../thirdparty/protocol.mjs. No npm packages.
 *
 * With no flag it is meant to be right. What it does, in the order the text goes through it:
 *
 * 1. Normalizer: NFC / NFD / NFKC / NFKD (String.prototype.normalize), a Sequence of them, or
 *    none. Any other normalizer is refused at start.
 * 2. Split: the pre-tokenizer's `Split` regexes (behavior `Isolated`, not inverted) and, for a
 *    `ByteLevel` step with `use_regex` (its default), GPT-2's pattern, each translated from
 *    Oniguruma to a JavaScript RegExp with the `u` flag (`translatePattern`): `(?i:...)`, which
 *    Node 20 lacks, becomes explicit `[xX]` classes, and `\s` / `\S` become the Unicode
 *    White_Space set spelled out, because JavaScript's own `\s` is not Oniguruma's.
 * 3. Bytes: each pre-token's UTF-8 bytes in GPT-2's byte-to-unicode alphabet.
 * 4. Merges: with `ignore_merges`, a pre-token that is whole in the vocabulary is that id;
 *    otherwise GPT-2's `bpe()` (lowest merge rank first, every occurrence of that pair merged
 *    left to right), its result cached per pre-token.
 *
 * Not implemented: added tokens (neither `add_special` nor `parse_special` is honoured: special
 * text is always plain text, right only with `parse_special` off), `add_prefix_space`, other Split
 * behaviours, `byte_fallback`, `dropout`, continuing-subword prefixes (refused at start where the
 * file asks for them). `decode` maps ids back to bytes (added tokens as their text), with the
 * protocol's `skip_special` and `clean_up_spaces`.
 *
 * The flags (each one a bug a JavaScript port of a BPE tokenizer typically has)
 * -------------------------------------------------------------------------------
 * --plain-object
 *     The vocabulary is the plain object JSON.parse made of `model.vocab`, the per-pre-token
 *     cache a plain `{}`, and lookups are `token in cache` and `encoder[token] !== undefined`,
 *     as in gpt-3-encoder. A plain object inherits Object.prototype, so a pre-token that is the
 *     name of one of its members (`toString`, `valueOf`, `hasOwnProperty`, `isPrototypeOf`,
 *     `constructor`, ...) "is" in the cache (its value a function, not a merged word) or "is" in
 *     the vocabulary (its id a function). A port has it because `{}` is JavaScript's everyday
 *     dictionary and the code was translated line by line from Python, where `in` on a dict only
 *     sees its own keys. Nothing here decides what then happens: the engine returns or throws
 *     whatever the ordinary code does with the inherited member.
 * --js-whitespace
 *     The split regex keeps `\s` / `\S` as written, so JavaScript's meaning applies: its `\s`
 *     lacks U+0085 (NEL) and includes U+FEFF (BOM), where Oniguruma's is Unicode White_Space.
 *     A port that pastes the pattern from tokenizer.json or encoder.py into a RegExp literal
 *     (it compiles, and agrees on every ordinary text) has this bug.
 */

import { readFileSync } from "node:fs";
import { serve } from "../thirdparty/protocol.mjs";

// ------------------------------------------------------------------------------------------------
// Command line

const args = process.argv.slice(2);
const FLAGS = new Set(["--plain-object", "--js-whitespace"]);
const files = args.filter((a) => !a.startsWith("--"));
const unknown = args.filter((a) => a.startsWith("--") && !FLAGS.has(a));
if (files.length !== 1 || unknown.length) {
  process.stderr.write("usage: node js_bpe.mjs tokenizer.json [--plain-object] [--js-whitespace]\n");
  process.exit(2);
}
const PLAIN_OBJECT = args.includes("--plain-object");
const JS_WHITESPACE = args.includes("--js-whitespace");

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

// Unicode White_Space, which is what Oniguruma's (and Python's) \s matches. JavaScript's \s
// is a different set (no U+0085, plus U+FEFF), so it is spelled out.
const WHITE_SPACE = "\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

// Under (?i:...) a letter also matches its simple case folds. ſ (U+017F) folds to s and the
// Kelvin sign (U+212A) to k, as Oniguruma's case-insensitive match knows.
const FOLDS = { s: "sS\u017f", k: "kK\u212a" };

/**
 * The pattern as a JavaScript RegExp source (for the `u` flag). Handles what the zoo's patterns
 * use: `(?i:...)` over literal text (Node 20 has no inline modifiers) and `\s` / `\S` in and out
 * of character classes. `\S` inside a class cannot be spelled out without the `v` flag and is
 * refused. With `--js-whitespace`, `\s` and `\S` are left as written (the bug).
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
      if ((next === "s" || next === "S") && !JS_WHITESPACE) {
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
      const lower = c.toLowerCase();
      out += `[${FOLDS[lower] ?? lower + lower.toUpperCase()}]`;
    } else {
      out += c;
    }
  }
  return out;
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
    return spec.use_regex === false ? [] : [new RegExp(translatePattern(GPT2_PATTERN), "gu")];
  }
  if (spec.type === "Split") {
    if (spec.behavior !== "Isolated" || spec.invert) throw new Error("only Split Isolated, not inverted, is implemented");
    const source = spec.pattern.Regex ?? spec.pattern.String.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    return [new RegExp(translatePattern(source), "gu")];
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
// Vocabulary, merges, cache
//
// The bug-free twin uses Maps, whose keys are only what was put in. With --plain-object the
// vocabulary is the object JSON.parse already made and the cache a {} (the port's way).

const vocabObject = model.vocab;
const vocabMap = new Map(Object.entries(vocabObject));

// "a b" -> rank. Byte-level symbols never hold a space, so "a b" names one pair unambiguously.
const bpeRanks = new Map();
model.merges.forEach((merge, rank) => {
  const [a, b] = Array.isArray(merge) ? merge : merge.split(" ");
  bpeRanks.set(a + " " + b, rank);
});

const cacheMap = new Map();
const cacheObject = {};

const encoderHas = PLAIN_OBJECT
  ? (token) => vocabObject[token] !== undefined
  : (token) => vocabMap.has(token);
const encoderGet = PLAIN_OBJECT ? (token) => vocabObject[token] : (token) => vocabMap.get(token);
const cacheHas = PLAIN_OBJECT ? (token) => token in cacheObject : (token) => cacheMap.has(token);
const cacheGet = PLAIN_OBJECT ? (token) => cacheObject[token] : (token) => cacheMap.get(token);
const cacheSet = PLAIN_OBJECT ? (token, word) => (cacheObject[token] = word) : (token, word) => cacheMap.set(token, word);

const decoder = new Map([...vocabMap].map(([token, id]) => [id, token]));
const addedTokens = new Map((config.added_tokens ?? []).map((added) => [added.id, added]));

// ------------------------------------------------------------------------------------------------
// BPE

/**
 * GPT-2's bpe(): the merged symbols of one pre-token (in the byte alphabet) joined by spaces.
 * Each round takes the adjacent pair of lowest rank and merges every occurrence of it, left to
 * right, until no adjacent pair has a rank.
 */
function bpe(token) {
  if (cacheHas(token)) return cacheGet(token);
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
  cacheSet(token, result);
  return result;
}

function encode(text) {
  const ids = [];
  for (const piece of splitText(normalize(text))) {
    const token = Array.from(utf8.encode(piece), (b) => byteEncoder[b]).join("");
    if (model.ignore_merges && encoderHas(token)) {
      ids.push(encoderGet(token));
      continue;
    }
    for (const symbol of bpe(token).split(" ")) {
      // Every merge result and every single byte is in a byte-level vocabulary.
      ids.push(encoderGet(symbol));
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
