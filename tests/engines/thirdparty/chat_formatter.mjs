// chat-formatter (npm `chat-formatter`, version 0.3.4, a-ghorbani/chat-formatter, MIT) as a `cmd:` chat engine.
// Written 2026-11-28.
//
//     cmd:node chat_formatter.mjs FORMAT
//
// The package formats a conversation with its own fixed templates (Nunjucks renderings of
// hand-ported Jinja templates), chosen by name, never with the model's own chat template.
// FORMAT is the package's own template key: default, chatML, llama3, llama32, phi3, gemmaIt,
// gemmasutra, danube2, danube3, qwen2, qwen25 (dist/templates/index.js).
//
// It calls the package's public API as its README shows a user calling it:
//
//     applyTemplate(messages, { templateKey: FORMAT, addGenerationPrompt })
//
// (dist/core/applyTemplate.js). addGenerationPrompt is the request's `add_generation_prompt`
// (absent: the package's default, false). The API has no other switch: tools, enable_thinking,
// date_string and the other variables cannot be given to it, so they are not. The messages are
// passed as received. The package is loaded from ./node_modules next to this file (package.json
// pins it; install.py installs it).
//
// Replies: {"text"} (no ids); {"raised"} where the package threw; continue_final_message (which the
// API cannot do) {"error", "status": "skipped"}; any other op an error with no status (not tried).

import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

const here = dirname(fileURLToPath(import.meta.url));
const ROOTS = [join(here, "node_modules")];

function loadPackage() {
  for (const root of ROOTS) {
    if (existsSync(join(root, "chat-formatter", "package.json"))) {
      return createRequire(join(root, "noop.js"))("chat-formatter");
    }
  }
  throw new Error(`chat-formatter not found in ${ROOTS.join(" or ")}`);
}

const { applyTemplate } = loadPackage();
const templateKey = process.argv[2];
if (!templateKey) {
  process.stderr.write("usage: node chat_formatter.mjs FORMAT\n");
  process.exit(2);
}

function answer(req) {
  if (req.op !== "chat") return { id: req.id, error: `op ${req.op} not supported` };
  const options = req.options ?? {};
  if (options.continue_final_message) return { id: req.id, error: "not supported", status: "skipped" };
  const settings = { templateKey };
  if (options.add_generation_prompt !== undefined) settings.addGenerationPrompt = options.add_generation_prompt;
  try {
    return { id: req.id, text: applyTemplate(req.messages, settings) };
  } catch (e) {
    return { id: req.id, raised: String(e?.message ?? e) };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  let req;
  try {
    req = JSON.parse(line);
    reply = answer(req);
  } catch (e) {
    reply = { id: req?.id ?? null, error: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
