/** Parser of the TOOLS section: one indented block per tool, one setting per line inside it. */
import type { NameAst, Pos, TextAst, ToolAst } from './ast.js';
import { stripComment } from './lexer.js';
import { closest, type Diagnostics } from './source.js';
import { describe, expectEnd, keyLine, lex, noChildren, quoted, unquote, type Block, type Cursor, type KeyLine } from './parse-lines.js';
import type { ParamType } from './tool-spec.js';

/** Settings a tool may have. */
export const TOOL_SETTINGS = ['DESCRIPTION', 'PARAMS', 'HTTP', 'HEADERS', 'BODY', 'TIMEOUT', 'CODE', 'MEMORY_LIMIT', 'ASYNC', 'TTL'] as const;
const PARAM_TYPES: readonly ParamType[] = ['string', 'number', 'boolean'];
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/i;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Reads a duration like 500ms, 5s, 10m or 1h; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]!) : undefined;
}

/** Reads `{ key: value, ... }` from the cursor; `value` reads one value after the colon. */
function braces<T>(cur: Cursor, diag: Diagnostics, what: string, example: string, value: (cur: Cursor, key: NameAst) => T | undefined): Array<{ key: NameAst; value: T }> | undefined {
  const open = cur.next();
  if (!open || open.value !== '{') {
    diag.error(cur.line, open?.column ?? cur.endColumn, `Write ${what} between braces, like ${example}`);
    return undefined;
  }
  const out: Array<{ key: NameAst; value: T }> = [];
  if (cur.peek()?.value === '}') {
    cur.next();
    return out;
  }
  for (;;) {
    const k = cur.next();
    if (!k || (k.kind !== 'word' && k.kind !== 'string')) {
      diag.error(cur.line, k?.column ?? cur.endColumn, `Expected a name here, like ${example}`);
      return undefined;
    }
    const colon = cur.next();
    if (!colon || colon.value !== ':') {
      diag.error(cur.line, colon?.column ?? cur.endColumn, `Put a colon after ${k.value}, like ${example}`);
      return undefined;
    }
    const v = value(cur, { name: k.value, pos: { line: cur.line, column: k.column } });
    if (v === undefined) return undefined;
    out.push({ key: { name: k.value, pos: { line: cur.line, column: k.column } }, value: v });
    const sep = cur.next();
    if (sep?.value === '}') return out;
    if (sep?.value !== ',') {
      diag.error(cur.line, sep?.column ?? cur.endColumn, `Separate the entries with commas and close with }, like ${example}`);
      return undefined;
    }
  }
}

function durationSetting(kl: KeyLine, diag: Diagnostics, example: string): { value: number; pos: Pos } | undefined {
  const text = stripComment(kl.value).trim();
  const ms = parseDuration(text);
  if (ms === undefined) {
    diag.error(kl.pos.line, kl.valueColumn + (kl.value.length - kl.value.trimStart().length), `${kl.upper} needs a duration like ${example} (ms, s, m or h).`);
    return undefined;
  }
  return { value: ms, pos: kl.pos };
}

/** Template text that may be quoted or not; `pos` is the column before its first character. */
function rawText(kl: KeyLine, text: string): TextAst {
  const start = kl.valueColumn + (kl.value.length - kl.value.trimStart().length);
  const quotedText = text.length >= 2 && text.startsWith('"') && text.endsWith('"');
  return { text: quotedText ? unquote(text) : text, pos: { line: kl.pos.line, column: quotedText ? start : start - 1 } };
}

function setting(tool: ToolAst, block: Block, kl: KeyLine, diag: Diagnostics): void {
  const valueText = stripComment(kl.value).trim();
  switch (kl.upper) {
    case 'DESCRIPTION':
      noChildren(block, kl, diag);
      tool.description = unquote(valueText);
      break;
    case 'PARAMS': {
      noChildren(block, kl, diag);
      const cur = lex(kl, diag);
      const entries = braces(cur, diag, 'the parameters', 'PARAMS: { invoice_id: string, amount: number }', (c, key) => {
        const t = c.next();
        const type = t?.kind === 'word' ? (t.value.toLowerCase() as ParamType) : undefined;
        if (!type || !PARAM_TYPES.includes(type)) {
          const guess = t?.kind === 'word' ? closest(t.value, PARAM_TYPES) : undefined;
          diag.error(c.line, t?.column ?? c.endColumn, `The parameter ${key.name} needs a type: string, number or boolean.${guess ? ` Did you mean ${guess}?` : ''}`);
          return undefined;
        }
        return type;
      });
      if (entries) {
        expectEnd(cur, diag, 'the parameters');
        tool.params = { entries: entries.map((e) => ({ name: e.key, type: e.value })), pos: kl.pos };
      }
      break;
    }
    case 'HTTP': {
      noChildren(block, kl, diag);
      const m = /^([A-Za-z]+)\s+(\S.*)$/.exec(valueText);
      if (!m) {
        diag.error(kl.pos.line, kl.valueColumn, 'HTTP needs a method and an address, like HTTP: GET https://billing.example.com/invoices/{{params.invoice_id}}');
        break;
      }
      const method = m[1]!.toUpperCase();
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
        diag.error(kl.pos.line, kl.valueColumn + (kl.value.length - kl.value.trimStart().length), `Unknown HTTP method ${m[1]}. Use GET, POST, PUT, PATCH or DELETE.`);
        break;
      }
      const urlOffset = kl.value.indexOf(m[2]!, kl.value.indexOf(m[1]!) + m[1]!.length);
      const url = rawText({ ...kl, value: kl.value.slice(urlOffset), valueColumn: kl.valueColumn + urlOffset }, m[2]!.trim());
      tool.http = { method, url, pos: kl.pos };
      break;
    }
    case 'HEADERS': {
      noChildren(block, kl, diag);
      const cur = lex(kl, diag);
      const entries = braces(cur, diag, 'the headers', 'HEADERS: { Authorization: "Bearer {{secrets.api_key}}" }', (c, key) => {
        const t = c.peek();
        if (!t || t.kind !== 'string') {
          diag.error(c.line, t?.column ?? c.endColumn, `Put the value of header ${key.name} in double quotes, like "Bearer {{secrets.api_key}}".`);
          return undefined;
        }
        c.next();
        return { text: t.value, pos: { line: c.line, column: t.column } } satisfies TextAst;
      });
      if (entries) {
        expectEnd(cur, diag, 'the headers');
        tool.headers = entries.map((e) => ({ name: e.key.name, value: e.value }));
      }
      break;
    }
    case 'BODY':
      if (block.blockText !== undefined) tool.body = { text: block.blockText, pos: { line: kl.pos.line + 1, column: block.indent + 2 } };
      else {
        noChildren(block, kl, diag);
        const cur = lex(kl, diag);
        const text = quoted(cur, diag, 'BODY', 'BODY: "{\\"invoice\\": \\"{{params.invoice_id}}\\"}" or BODY: | with the body on indented lines');
        if (text) {
          expectEnd(cur, diag, 'the body');
          tool.body = text;
        }
      }
      break;
    case 'CODE':
      if (block.blockText === undefined) {
        diag.error(kl.pos.line, kl.valueColumn, 'Write the code of a CODE tool on indented lines after CODE: |');
        break;
      }
      tool.code = { source: block.blockText, pos: kl.pos };
      break;
    case 'ASYNC': {
      noChildren(block, kl, diag);
      const v = valueText.toLowerCase();
      if (v !== 'true' && v !== 'false') diag.error(kl.pos.line, kl.valueColumn, 'ASYNC is true or false.');
      else tool.async = { value: v === 'true', pos: kl.pos };
      break;
    }
    case 'TIMEOUT': {
      noChildren(block, kl, diag);
      const d = durationSetting(kl, diag, '5s');
      if (d) tool.timeoutMs = d;
      break;
    }
    case 'TTL': {
      noChildren(block, kl, diag);
      const d = durationSetting(kl, diag, '10m');
      if (d) tool.ttlMs = d;
      break;
    }
    case 'MEMORY_LIMIT': {
      noChildren(block, kl, diag);
      const m = /^(\d+)\s*MB$/i.exec(valueText);
      if (!m) diag.error(kl.pos.line, kl.valueColumn, 'MEMORY_LIMIT is a number of megabytes, like MEMORY_LIMIT: 64MB.');
      else tool.memoryMb = { value: Number(m[1]), pos: kl.pos };
      break;
    }
    default: {
      const guess = closest(kl.key, TOOL_SETTINGS);
      diag.error(kl.pos.line, kl.pos.column, `Unknown tool setting ${kl.key}.${guess ? ` Did you mean ${guess}?` : ` A tool can have ${TOOL_SETTINGS.join(', ')}.`}`);
    }
  }
}

/** Parses the tools indented under TOOLS:. */
export function parseTools(block: Block, diag: Diagnostics, into: ToolAst[]): void {
  const top = keyLine(block)!;
  if (stripComment(top.value).trim() !== '') diag.error(top.pos.line, top.valueColumn, 'Put each tool on its own indented line below TOOLS:, with its settings indented below it.');
  for (const child of block.children) {
    const kl = keyLine(child);
    if (!kl) {
      diag.error(child.line, child.indent + 1, 'Start each tool with its name and a colon, like lookup_invoice:, and indent its settings below it.');
      continue;
    }
    if (stripComment(kl.value).trim() !== '') {
      diag.error(kl.pos.line, kl.valueColumn + (kl.value.length - kl.value.trimStart().length), `Put the settings of tool ${kl.key} on indented lines below it, like HTTP: GET https://...`);
    }
    const tool: ToolAst = { name: { name: kl.key, pos: kl.pos } };
    const seen = new Map<string, number>();
    for (const s of child.children) {
      const skl = keyLine(s);
      if (!skl) {
        const t = lex({ key: '', upper: '', value: s.content, valueColumn: s.indent + 1, pos: { line: s.line, column: s.indent + 1 } }, diag).peek();
        diag.error(s.line, s.indent + 1, `I don't understand this tool setting${t ? ` (${describe(t)})` : ''}. Settings look like HTTP: GET https://... or TIMEOUT: 5s.`);
        continue;
      }
      const first = seen.get(skl.upper);
      if (first !== undefined) {
        diag.error(skl.pos.line, skl.pos.column, `${skl.upper} is given twice for tool ${kl.key} (first on line ${first}).`);
        continue;
      }
      seen.set(skl.upper, skl.pos.line);
      setting(tool, s, skl, diag);
    }
    into.push(tool);
  }
}
