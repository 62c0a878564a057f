// tokparity's JSON-lines protocol for a JavaScript engine (docs/contracts.md, "The cmd: protocol").
//
//   -> {"id": 1, "op": "encode", "text": "Hello world", "add_special": false, "parse_special": false}
//   <- {"id": 1, "ids": [15043, 3186]}
//   -> {"id": 2, "op": "decode", "ids": [15043, 3186]}
//   <- {"id": 2, "text": "Hello world"}
//   -> {"id": 3, "op": "stream", "ids": [15043, 3186, 29991], "prompt": 1}
//   <- {"id": 3, "deltas": [" world", "!"]}
//   -> {"id": 4, "op": "pieces"}
//   <- {"id": 4, "pieces": ["3c756e6b3e", null, ...]}
//
// serve({encode, decode, stream, pieces}) reads one request per line on stdin until EOF and writes
// one reply per line on stdout (decode, stream and pieces are optional: an op without its function
// is answered with an error, which tokparity reads as "not implemented"). An exception becomes an "error" reply for that request; logs go to stderr only.
// Requests are answered in order (tokparity pipelines them, so order is what it relies on).

import { createInterface } from "node:readline";

export async function serve({ encode, decode, stream, pieces }) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let req;
    let reply;
    try {
      req = JSON.parse(line);
      if (req.op === "encode") {
        reply = { id: req.id, ids: Array.from(encode(req.text, !!req.add_special, !!req.parse_special), Number) };
      } else if (req.op === "decode" && decode) {
        reply = { id: req.id, text: decode(req.ids, req) };  // (req: the decode settings asked)
      } else if (req.op === "stream" && stream) {
        reply = { id: req.id, deltas: stream(req.ids, req.prompt) };
      } else if (req.op === "pieces" && pieces) {
        reply = { id: req.id, pieces: pieces().map((b) => (b == null ? null : Buffer.from(b).toString("hex"))) };
      } else {
        reply = { id: req.id, error: `unsupported op ${JSON.stringify(req.op)}` };
      }
    } catch (e) {
      reply = { id: req?.id ?? null, error: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
}
