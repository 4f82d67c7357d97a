/** Line structure shared by the parsers: indentation blocks, `KEY: value` lines, a token cursor and small readers. */
import type { NameAst, Pos, TextAst } from './ast.js';
import { tokenize, stripComment, type Token } from './lexer.js';
import type { Diagnostics, SourceLine } from './source.js';
/** An indented line with the lines indented under it. */
export interface Block {
  readonly line: number;
  readonly indent: number;
  /** The line without its indentation. */
  readonly content: string;
  readonly children: Block[];
  /** For `KEY: |` lines: the raw indented text below, common indentation removed. */
  blockText?: string;
}

/** A `KEY: value` line split into parts. */
export interface KeyLine {
  readonly key: string;
  readonly upper: string;
  readonly value: string;
  /** 1-based column of the first character of `value`. */
  readonly valueColumn: number;
  readonly pos: Pos;
}

/** A `KEY: value` line. */
export const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_]*)[ \t]*:(.*)$/;
/** A `KEY: |` line, whose value is the indented text below it. */
export const BLOCK_SCALAR = /^[A-Za-z_][A-Za-z0-9_]*[ \t]*:[ \t]*\|[ \t]*(#.*)?$/;

/** Builds the indentation tree; reports tabs and lines that don't line up. */
export function buildBlocks(lines: readonly SourceLine[], diag: Diagnostics): Block[] {
  const root: Block = { line: 0, indent: -1, content: '', children: [] };
  const stack: Block[] = [root];
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.text;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const lead = /^[ \t]*/.exec(raw)![0];
    if (lead.includes('\t')) diag.error(lines[n]!.number, lead.indexOf('\t') + 1, 'Use spaces, not tabs, to indent lines.');
    const indent = lead.replace(/\t/g, '    ').length;
    while (stack.length > 1 && stack[stack.length - 1]!.indent >= indent) stack.pop();
    const parent = stack[stack.length - 1]!;
    const block: Block = { line: lines[n]!.number, indent, content: raw.slice(lead.length).trimEnd(), children: [] };
    const siblings = parent.children;
    if (parent === root && indent > 0) {
      diag.error(block.line, 1, `This line is indented, but there is no section above it for it to belong to. Start it at the beginning of the line.`);
    } else if (siblings.length > 0 && siblings[0]!.indent !== indent && parent !== root) {
      diag.error(block.line, indent + 1, `This line's indentation doesn't line up with the lines above it (expected ${siblings[0]!.indent} spaces, found ${indent}).`);
    }
    siblings.push(block);
    stack.push(block);
    if (BLOCK_SCALAR.test(block.content)) {
      // `KEY: |` takes every following line indented deeper (and blank lines) as raw text.
      const body: string[] = [];
      while (n + 1 < lines.length) {
        const next = lines[n + 1]!.text;
        const nextIndent = /^[ \t]*/.exec(next)![0].replace(/\t/g, '    ').length;
        if (next.trim() !== '' && nextIndent <= indent) break;
        body.push(next.replace(/\t/g, '    '));
        n++;
      }
      while (body.length > 0 && body[body.length - 1]!.trim() === '') body.pop();
      const common = Math.min(...body.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length));
      block.blockText = body.map((l) => l.slice(Number.isFinite(common) ? common : 0).trimEnd()).join('\n');
    }
  }
  return root.children;
}

/** Splits a block's line into key and value; undefined when it is not `KEY: value`. */
export function keyLine(block: Block): KeyLine | undefined {
  const m = KEY_LINE.exec(block.content);
  if (!m) return undefined;
  const key = m[1]!;
  const value = m[2]!;
  const valueOffset = block.content.length - value.length;
  return { key, upper: key.toUpperCase(), value, valueColumn: block.indent + valueOffset + 1, pos: { line: block.line, column: block.indent + 1 } };
}

/** Reports indented lines under a line that takes none. */
export function noChildren(block: Block, kl: KeyLine, diag: Diagnostics): void {
  const child = block.children[0];
  if (child) diag.error(child.line, child.indent + 1, `${kl.upper} does not take indented lines below it.`);
}

/** Token cursor over one line. */
export class Cursor {
  #i = 0;
  constructor(
    readonly tokens: readonly Token[],
    readonly line: number,
    readonly endColumn: number,
  ) {}
  peek(offset = 0): Token | undefined {
    return this.tokens[this.#i + offset];
  }
  next(): Token | undefined {
    return this.tokens[this.#i++];
  }
  get atEnd(): boolean {
    return this.#i >= this.tokens.length;
  }
  /** True when the next token is the word `w` (case-insensitive). */
  isWord(w: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t !== undefined && t.kind === 'word' && t.value.toUpperCase() === w;
  }
  /** Column to blame for "something is missing here". */
  get here(): number {
    return this.peek()?.column ?? this.endColumn;
  }
}

/** Lexes a KeyLine's value, reporting lexer errors. */
export function lex(kl: KeyLine, diag: Diagnostics): Cursor {
  const { tokens, errors } = tokenize(kl.value, kl.valueColumn);
  for (const e of errors) diag.error(kl.pos.line, e.column, e.message);
  return new Cursor(tokens, kl.pos.line, kl.valueColumn + kl.value.trimEnd().length);
}

/** The value as free text: comment removed, surrounding quotes dropped. */
export function freeText(kl: KeyLine): string {
  return unquote(stripComment(kl.value).trim());
}

/** Drops surrounding double quotes and unescapes what they held. */
export function unquote(s: string): string {
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1).replace(/\\(.)/g, '$1') : s;
}

/** Reports anything left on the line after `after`. */
export function expectEnd(cur: Cursor, diag: Diagnostics, after: string): void {
  const t = cur.peek();
  if (t) diag.error(cur.line, t.column, `Unexpected ${describe(t)} after ${after}.`);
}

/** How a token is named in messages. */
export function describe(t: Token): string {
  if (t.kind === 'string') return `text "${t.value}"`;
  if (t.kind === 'regex') return `pattern /${t.value}/`;
  return `"${t.value}"`;
}

/** Reads a quoted text, explaining missing quotes in plain words. */
export function quoted(cur: Cursor, diag: Diagnostics, keyword: string, example: string): TextAst | undefined {
  const t = cur.peek();
  if (!t) {
    diag.error(cur.line, cur.endColumn, `${keyword} needs a text in double quotes, like ${example}`);
    return undefined;
  }
  if (t.kind !== 'string') {
    diag.error(cur.line, t.column, `Put the text of ${keyword} in double quotes, like ${example}`);
    // Skip the unquoted words so they don't cause more errors.
    while (cur.peek() && cur.peek()!.kind !== 'string' && !(cur.peek()!.kind === 'word' && /^[A-Z_]+$/.test(cur.peek()!.value))) cur.next();
    return undefined;
  }
  cur.next();
  return { text: t.value, pos: { line: cur.line, column: t.column } };
}

/** Reads a name, reporting `Expected <what> here.` when there is none. */
export function name(cur: Cursor, diag: Diagnostics, what: string): NameAst | undefined {
  const t = cur.peek();
  if (!t || t.kind !== 'word') {
    diag.error(cur.line, cur.here, `Expected ${what} here.`);
    return undefined;
  }
  cur.next();
  return { name: t.value, pos: { line: cur.line, column: t.column } };
}

