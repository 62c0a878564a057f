// Nunjucks (npm `nunjucks`, Mozilla's Jinja-inspired JavaScript engine) as a `cmd:` chat engine.
//
//     cmd:node chat_nunjucks.mjs {tokenizer_config}
//
// Renders the chat template of tokenizer_config.json with `new nunjucks.Template(source, env)`.
// The environment is as close to transformers' apply_chat_template as Nunjucks allows:
// `installJinjaCompat()` (its own Jinja layer: True/False/None, slices `[a:b:c]`, Python's dict and
// list methods), `autoescape: false` (Nunjucks escapes HTML by default; transformers does not),
// `trimBlocks` and `lstripBlocks` on, undefined rendered as "" (throwOnUndefined off), and
// transformers' additions as a filter and globals: `tojson` (Python's json.dumps with
// ensure_ascii=False, indent, separators, sort_keys, written here), `raise_exception`,
// `strftime_now`, `namespace` and `dict` (plain objects made of the keyword arguments).
// Nothing else of Jinja is added: what Nunjucks lacks (Python's string methods such as
// .startswith/.strip, the `false` test, `{% set ns.attr = %}`, break/continue) stays missing, and
// the conversations that need it are where it differs.
//
// Messages, variables and replies as in chat_hf_jinja.mjs (whose loadConfig and serveChat, which
// prepares the messages, it uses): text only, {"raised"} where the template raised or did not compile.

import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import nunjucks from "nunjucks";
import { loadConfig, serveChat } from "./chat_hf_jinja.mjs";

const KEYWORDS = "__keywords";

// Python's json.dumps(x, ensure_ascii, indent, separators, sort_keys), as transformers' tojson calls it.
export function pyJsonDumps(x, { ensureAscii = false, indent = null, separators = null, sortKeys = false } = {}) {
  const [itemSep, keySep] = separators ?? (indent === null ? [", ", ": "] : [",", ": "]);
  const pad = typeof indent === "number" ? " ".repeat(indent) : indent ?? "";
  const str = (s) => {
    const out = JSON.stringify(s);
    return ensureAscii ? out.replace(/[^\x00-\x7f]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")) : out;
  };
  const dump = (v, depth) => {
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") return str(v);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "number") return Number.isFinite(v) ? JSON.stringify(v) : v > 0 ? "Infinity" : v < 0 ? "-Infinity" : "NaN";
    const items = Array.isArray(v) ? v.map((e) => dump(e, depth + 1))
      : (sortKeys ? Object.keys(v).sort() : Object.keys(v)).map((k) => str(k) + keySep + dump(v[k], depth + 1));
    const [open, close] = Array.isArray(v) ? ["[", "]"] : ["{", "}"];
    if (items.length === 0) return open + close;
    if (indent === null) return open + items.join(itemSep) + close;
    const inner = "\n" + pad.repeat(depth + 1);
    return open + inner + items.join(itemSep + inner) + "\n" + pad.repeat(depth) + close;
  };
  return dump(x, 0);
}

function keywords(args) {
  const last = args.at(-1);
  if (last && typeof last === "object" && last[KEYWORDS]) {
    const { [KEYWORDS]: _, ...kwargs } = last;
    return [args.slice(0, -1), kwargs];
  }
  return [args, {}];
}

// transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
function tojson(x, ...rest) {
  const [args, kw] = keywords(rest);
  const [ensureAscii = kw.ensure_ascii ?? false, indent = kw.indent ?? null, separators = kw.separators ?? null,
    sortKeys = kw.sort_keys ?? false] = args;
  return pyJsonDumps(x, { ensureAscii, indent, separators, sortKeys });
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
  "November", "December"];

// transformers' strftime_now(format): datetime.now().strftime(format), the common directives.
function strftimeNow(format) {
  const d = new Date();
  const p2 = (n) => String(n).padStart(2, "0");
  const start = new Date(d.getFullYear(), 0, 1);
  const codes = {
    d: p2(d.getDate()), m: p2(d.getMonth() + 1), Y: String(d.getFullYear()), y: p2(d.getFullYear() % 100),
    H: p2(d.getHours()), I: p2(d.getHours() % 12 || 12), M: p2(d.getMinutes()), S: p2(d.getSeconds()),
    p: d.getHours() < 12 ? "AM" : "PM", A: DAYS[d.getDay()], a: DAYS[d.getDay()].slice(0, 3),
    B: MONTHS[d.getMonth()], b: MONTHS[d.getMonth()].slice(0, 3), j: String(Math.floor((d - start) / 864e5) + 1).padStart(3, "0"),
    "%": "%",
  };
  return String(format).replace(/%(.)/g, (all, c) => codes[c] ?? all);
}

export function environment() {
  nunjucks.installJinjaCompat();
  const env = new nunjucks.Environment(null, {
    autoescape: false, trimBlocks: true, lstripBlocks: true, throwOnUndefined: false,
  });
  env.addFilter("tojson", tojson);
  env.addGlobal("raise_exception", (message) => { throw new Error(String(message)); });
  env.addGlobal("strftime_now", strftimeNow);
  const fromKeywords = (...args) => {
    const [positional, kw] = keywords(args);
    return Object.assign({}, ...positional.filter((a) => a && typeof a === "object"), kw);
  };
  env.addGlobal("namespace", fromKeywords);
  env.addGlobal("dict", fromKeywords);
  return env;
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const env = environment();
  await serveChat(loadConfig(process.argv[2]), (source, variables, compiled) => {
    if (!compiled.has(source)) compiled.set(source, new nunjucks.Template(source, env, "chat_template", true));
    return compiled.get(source).render(variables);
  });
}
