/**
 * Tokenizer for the value part of one line (what follows `KEYWORD:`). The language is line-based,
 * so the parser hands the lexer one line at a time; `#` outside quotes and /patterns/ ends the line.
 */

/** Kinds of token. `regex` has `value` = pattern source and `flags`. */
export type TokenKind = 'word' | 'string' | 'regex' | 'number' | 'op' | 'punct';

/** A token with its 1-based column in the source line. */
export interface Token {
  readonly kind: TokenKind;
  /** Words and punctuation as written; strings unquoted and unescaped; regex source. */
  readonly value: string;
  readonly flags?: string;
  readonly column: number;
  /** Column just after the token (for "missing X after ..." messages). */
  readonly end: number;
}

/** A lexing problem at a 1-based column. */
export interface LexError {
  readonly column: number;
  readonly message: string;
}

/** Result of tokenizing one line. */
export interface LexResult {
  readonly tokens: Token[];
  readonly errors: LexError[];
}

const WORD_START = /[A-Za-z_]/;
const WORD_CHAR = /[A-Za-z0-9_.\-]/;
const DIGIT = /[0-9]/;

/**
 * Tokenizes `text`, whose first character sits at 1-based column `startColumn`.
 * Never throws; unknown characters and unterminated strings/patterns become errors.
 */
export function tokenize(text: string, startColumn: number): LexResult {
  const tokens: Token[] = [];
  const errors: LexError[] = [];
  let i = 0;
  const col = (k: number) => startColumn + k;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '#') break;
    const start = i;
    if (c === '"') {
      let value = '';
      i++;
      let closed = false;
      while (i < text.length) {
        const ch = text[i]!;
        if (ch === '\\' && i + 1 < text.length) {
          const next = text[i + 1]!;
          value += next === 'n' ? '\n' : next;
          i += 2;
          continue;
        }
        if (ch === '"') {
          closed = true;
          i++;
          break;
        }
        value += ch;
        i++;
      }
      if (!closed) errors.push({ column: col(start), message: 'This text is missing its closing double quote (").' });
      tokens.push({ kind: 'string', value, column: col(start), end: col(i) });
      continue;
    }
    if (c === '/') {
      let inClass = false;
      let closed = false;
      i++;
      while (i < text.length) {
        const ch = text[i]!;
        if (ch === '\\') {
          i += 2;
          continue;
        }
        if (ch === '[') inClass = true;
        else if (ch === ']') inClass = false;
        else if (ch === '/' && !inClass) {
          closed = true;
          break;
        }
        i++;
      }
      if (!closed) {
        errors.push({ column: col(start), message: 'This pattern is missing its closing slash (/). Write patterns like /refund|money back/i.' });
        tokens.push({ kind: 'regex', value: text.slice(start + 1), flags: '', column: col(start), end: col(text.length) });
        i = text.length;
        continue;
      }
      const source = text.slice(start + 1, i);
      i++;
      let flags = '';
      while (i < text.length && /[A-Za-z]/.test(text[i]!)) flags += text[i++];
      tokens.push({ kind: 'regex', value: source, flags, column: col(start), end: col(i) });
      continue;
    }
    if (DIGIT.test(c) || (c === '-' && DIGIT.test(text[i + 1] ?? ''))) {
      i++;
      while (i < text.length && /[0-9.]/.test(text[i]!)) i++;
      tokens.push({ kind: 'number', value: text.slice(start, i), column: col(start), end: col(i) });
      continue;
    }
    if (WORD_START.test(c)) {
      while (i < text.length && WORD_CHAR.test(text[i]!)) i++;
      tokens.push({ kind: 'word', value: text.slice(start, i), column: col(start), end: col(i) });
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '<=' || two === '>=') {
      i += 2;
      tokens.push({ kind: 'op', value: two, column: col(start), end: col(i) });
      continue;
    }
    if (c === '<' || c === '>' || c === '=') {
      i++;
      tokens.push({ kind: 'op', value: c === '=' ? '==' : c, column: col(start), end: col(i) });
      continue;
    }
    if ('|[],:(){}'.includes(c)) {
      i++;
      tokens.push({ kind: 'punct', value: c, column: col(start), end: col(i) });
      continue;
    }
    if (c === '\u201c' || c === '\u201d' || c === '\u2018' || c === '\u2019' || c === "'") {
      errors.push({ column: col(start), message: 'Use straight double quotes "like this" around text.' });
    } else {
      errors.push({ column: col(start), message: `Unexpected character ${JSON.stringify(c)}.` });
    }
    // Skip to the next space so one stray character gives one error.
    while (i < text.length && text[i] !== ' ') i++;
  }
  return { tokens, errors };
}

/** Removes a trailing `# comment` from free text (DESCRIPTION, PERSONA, KNOWLEDGE), honouring "quotes". */
export function stripComment(text: string): string {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && inString) {
      i++;
      continue;
    }
    if (c === '"') inString = !inString;
    else if (c === '#' && !inString) return text.slice(0, i);
  }
  return text;
}
