// kitoken (npm, Systemcluster; a Rust tokenizer compiled to WebAssembly, with its own converters
// from SentencePiece, Hugging Face tokenizers, tiktoken and Tekken files into its own BPE /
// Unigram / WordPiece definition) as a tokparity cmd: engine, on a model file of the zoo read with
// the converter named by the first argument:
//
//   tokparity compare mistral-v1      -b 'kitoken=cmd:node tests/engines/thirdparty/kitoken_engine.mjs sentencepiece {spm_model}'
//   tokparity compare llama-bpe       -b 'kitoken=cmd:node tests/engines/thirdparty/kitoken_engine.mjs tokenizers {tokenizer_json}'
//   tokparity compare tekken          -b 'kitoken=cmd:node tests/engines/thirdparty/kitoken_engine.mjs tekken {tiktoken}'
//   tokparity compare cl100k-tiktoken -b 'kitoken=cmd:node tests/engines/thirdparty/kitoken_engine.mjs tiktoken {tiktoken}'
//
// As the package's readme calls it: the "kitoken/node" build, Kitoken.from_sentencepiece /
// from_tokenizers / from_tekken / from_tiktoken on the file's bytes, then encode(text,
// encode_specials). parse_special maps to encode_specials. kitoken has no switch for BOS/EOS
// (nor adds any); add_special is ignored.
//
// from_tiktoken reads a plain .tiktoken rank file ("<base64 bytes> <rank>" lines), which holds no
// regex and no special tokens (kitoken picks both by the vocabulary's size). The zoo ships the
// same ranks as @dqbd/tiktoken's encoder JSON ("! OFFSET b64 b64 ..." lines), so for "tiktoken"
// the engine writes those ranks out as .tiktoken lines and hands kitoken that text.

import { readFileSync } from "node:fs";
import { Kitoken } from "kitoken/node";
import { serve } from "./protocol.mjs";

const [format, path] = process.argv.slice(2);
const loaders = {
  sentencepiece: () => Kitoken.from_sentencepiece(readFileSync(path)),
  tokenizers: () => Kitoken.from_tokenizers(readFileSync(path)),
  tekken: () => Kitoken.from_tekken(readFileSync(path)),
  tiktoken: () => {
    const lines = [];
    for (const line of JSON.parse(readFileSync(path, "utf-8")).bpe_ranks.split("\n")) {
      if (!line) continue;
      const [, offset, ...tokens] = line.split(" ");
      tokens.forEach((b64, i) => lines.push(`${b64} ${Number(offset) + i}`));
    }
    return Kitoken.from_tiktoken(new TextEncoder().encode(lines.join("\n") + "\n"));
  },
};
if (!loaders[format] || !path) {
  console.error(`usage: node kitoken_engine.mjs ${Object.keys(loaders).join("|")} FILE`);
  process.exit(2);
}
const tokenizer = loaders[format]();

await serve({
  encode: (text, _addSpecial, parseSpecial) => tokenizer.encode(text, parseSpecial),
  decode: (ids) => new TextDecoder().decode(tokenizer.decode(Uint32Array.from(ids), true)),
});
