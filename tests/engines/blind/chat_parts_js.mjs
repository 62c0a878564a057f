// A blind `cmd:` chat engine: the model's chat template rendered with @huggingface/jinja, as a
// hand-written JavaScript prompt builder does it, with one optional bug.
//
// Written on 2026-11-28 from a one-paragraph bug description and the `cmd:` protocol
// (docs/contracts.md, docs/guides/chat.md); its author read no diagnosis code.
//
//     node chat_parts_js.mjs TOKENIZER_CONFIG_JSON [--bug parts-as-string]
//
// Answers only "op": "chat": {"id", "text"} (text only, no ids), {"id", "raised"} where the
// template raised or did not parse, {"id", "error", "status": "skipped"} for
// continue_final_message; any other op gets an error with no status. The template is
// tokenizer_config.json's `chat_template` (a string, or a list of {name, template}: "tool_use"
// for a conversation with tools where there is one, else "default"), rendered with
// `new Template(source).render(variables)`; the variables are messages, tools, documents (null,
// as transformers passes it), add_generation_prompt, the special tokens' texts and every other
// option. Messages are prepared as transformers does: keys whose value is null dropped,
// reasoning aliased to `thinking` and `reasoning_content`.
//
// The bug, `--bug parts-as-string`: before rendering, every message whose content is an array of
// parts gets `String(content)` as its content, as a builder that writes `${message.content}` into
// a template string does, so `[{"type": "text", "text": "Hi"}]` becomes "[object Object]" (one per
// part, joined by commas). String contents are left alone; without `--bug` the messages are passed
// unchanged (the bug-free twin).

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const { Template } = await import(
  new URL("../thirdparty/node_modules/@huggingface/jinja/dist/index.js", import.meta.url).href
);

const BUGS = new Set(["parts-as-string"]);
const REASONING_FIELDS = ["reasoning_content", "thinking", "reasoning"];
const OWN_OPTIONS = new Set(["add_generation_prompt", "continue_final_message"]);

function usage(why) {
  process.stderr.write(`${why}\nusage: node chat_parts_js.mjs TOKENIZER_CONFIG_JSON [--bug parts-as-string]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  let config = null;
  const bugs = new Set();
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--bug") {
      const name = argv[++i];
      if (!BUGS.has(name)) usage(`unknown bug ${JSON.stringify(name)}`);
      bugs.add(name);
    } else if (config === null) {
      config = argv[i];
    } else {
      usage(`unexpected argument ${JSON.stringify(argv[i])}`);
    }
  }
  if (config === null) usage("no tokenizer_config.json given");
  return { config, bugs };
}

function loadConfig(path) {
  const config = JSON.parse(readFileSync(path, "utf-8"));
  const found = config.chat_template;
  const templates = typeof found === "string" ? { default: found }
    : Object.fromEntries((Array.isArray(found) ? found : []).map((t) => [t.name, t.template]));
  const specials = {};
  for (const role of ["bos", "eos", "unk", "pad"]) {
    let value = config[`${role}_token`];
    if (value && typeof value === "object") value = value.content;
    if (typeof value === "string") specials[`${role}_token`] = value;
  }
  return { templates, specials };
}

// As transformers: keys whose value is null dropped, reasoning aliased.
function prepared(messages) {
  return messages.map((m) => {
    m = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined));
    const key = REASONING_FIELDS.find((k) => m[k] !== null && m[k] !== undefined);
    return key === undefined ? m : { thinking: m[key], ...m, reasoning_content: m[key] };
  });
}

// The bug: a list of parts put into a template string, `${message.content}`.
function partsAsString(messages) {
  return messages.map((m) =>
    m && Array.isArray(m.content) ? { ...m, content: `${m.content}` } : m);
}

function answer(req, { templates, specials }, bugs, compiled) {
  if (req.op !== "chat") return { error: `op ${req.op} not supported` };
  const options = req.options ?? {};
  if (options.continue_final_message) {
    return { error: "continue_final_message not supported", status: "skipped" };
  }
  const name = req.tools != null && "tool_use" in templates ? "tool_use" : "default";
  if (!(name in templates)) return { error: "the model has no chat template" };
  let messages = req.messages ?? [];
  if (bugs.has("parts-as-string")) messages = partsAsString(messages);
  const variables = { ...specials };
  for (const [k, v] of Object.entries(options)) if (!OWN_OPTIONS.has(k)) variables[k] = v;
  Object.assign(variables, {
    messages: prepared(messages),
    tools: req.tools ?? null,
    documents: null,
    add_generation_prompt: !!options.add_generation_prompt,
  });
  try {
    const source = templates[name];
    if (!compiled.has(source)) compiled.set(source, new Template(source));
    return { text: compiled.get(source).render(variables) };
  } catch (e) {
    return { raised: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
  }
}

const { config, bugs } = parseArgs(process.argv.slice(2));
const model = loadConfig(config);
const compiled = new Map();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  let reply;
  try {
    reply = answer(req, model, bugs, compiled);
  } catch (e) {
    reply = { error: `${e?.name ?? "Error"}: ${e?.message ?? e}`, status: "error" };
  }
  process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\n");
}
