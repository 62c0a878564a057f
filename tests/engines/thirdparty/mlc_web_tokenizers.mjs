// @mlc-ai/web-tokenizers (npm, MLC's tokenizers-cpp compiled to WebAssembly: Hugging Face's Rust
// tokenizers behind a C++ wrapper, or Google's SentencePiece) as a tokparity cmd: engine:
//
//   tokparity compare llama-bpe -b 'mlc=cmd:node tests/engines/thirdparty/mlc_web_tokenizers.mjs json {tokenizer_json}'
//   tokparity compare mistral-v1 -b 'mlc-spm=cmd:node tests/engines/thirdparty/mlc_web_tokenizers.mjs spm {spm_model}'
//
// Tokenizer.fromJSON(bytes) / Tokenizer.fromSentencePiece(bytes), then encode(text). encode has
// no options: tokenizers-cpp calls the Rust Tokenizer's encode with add_special_tokens=false, and
// added tokens' text is always matched (no parse_special switch); both flags are ignored.

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { serve } from "./protocol.mjs";

const [kind, path] = process.argv.slice(2);
if (!["json", "spm"].includes(kind) || !path) {
  console.error("usage: node mlc_web_tokenizers.mjs json|spm FILE");
  process.exit(2);
}
// lib/index.js is a UMD bundle, but the package.json says "type": "module": Node loads it as an
// ES module with no exports at all (import { Tokenizer } fails). A copy named .cjs in a temporary
// folder is required instead, which runs its UMD wrapper's CommonJS branch (the wasm is inlined).
const require = createRequire(import.meta.url);
const tmp = mkdtempSync(join(tmpdir(), "tokparity-mlc-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
copyFileSync(require.resolve("@mlc-ai/web-tokenizers/lib/index.js"), join(tmp, "index.cjs"));
const { Tokenizer } = require(join(tmp, "index.cjs"));
const bytes = readFileSync(path);
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const tokenizer = kind === "json" ? await Tokenizer.fromJSON(buffer) : await Tokenizer.fromSentencePiece(buffer);

await serve({
  encode: (text) => tokenizer.encode(text),
  decode: (ids) => tokenizer.decode(Int32Array.from(ids)),
});
