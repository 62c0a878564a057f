// A WebAssembly build of Google's SentencePiece from npm as a tokparity cmd: engine, on a
// SentencePiece .model of the zoo:
//
//   tokparity compare botchan-unigram -b 'sctg-spm=cmd:node tests/engines/thirdparty/sentencepiece_wasm.mjs @sctg/sentencepiece-js {spm_model}'
//   tokparity compare botchan-unigram -b 'spm-js=cmd:node tests/engines/thirdparty/sentencepiece_wasm.mjs sentencepiece-js {spm_model}'
//
// The first argument names the package: @sctg/sentencepiece-js (sctg-development's fork) or
// sentencepiece-js (the original, jsonobject's). Both export SentencePieceProcessor with
// load(path) and encodeIds(text). The README passes texts through the package's cleanText()
// first; the engine does not (it asks what the processor does with the text it is given), and
// says so: cleanText is a separate, opt-in helper. Neither flag has a switch: encodeIds adds no
// BOS/EOS, and a .model has no special-token text to parse.

import { createRequire } from "node:module";
import { serve } from "./protocol.mjs";

const [pkg, model] = process.argv.slice(2);
if (!pkg || !model) {
  console.error("usage: node sentencepiece_wasm.mjs PACKAGE MODEL.model");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const lib = require(pkg);
const { SentencePieceProcessor } = lib.SentencePieceProcessor ? lib : lib.default;
const spp = new SentencePieceProcessor();
// The wasm module prints to stdout while it loads on some builds: keep the protocol's stdout clean.
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
await spp.load(model);
process.stdout.write = write;

await serve({
  encode: (text) => spp.encodeIds(text),
  decode: (ids) => spp.decodeIds(Int32Array.from(ids)),
});
