import { setFlagsFromString } from 'node:v8';

// Agent patterns are written by tenants and run on shared workers, so one pattern must never
// hold a thread (ReDoS). V8 can switch a regexp that backtracks too much to its linear-time
// engine, but only for patterns without the i/u flags, lookarounds and backreferences. So:
// turn that switch on for the process, refuse the features that would disable it, and rewrite
// case-insensitivity into character classes instead of using the i flag.
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** Longest pattern source accepted. */
export const MAX_PATTERN_LENGTH = 1000;

/** Why a pattern cannot be used, in plain words; undefined when it is fine. */
export function unsafePatternReason(source: string, flags: string): string | undefined {
  if (source.length > MAX_PATTERN_LENGTH) return `This pattern is longer than ${MAX_PATTERN_LENGTH} characters. Shorten it.`;
  if (flags.includes('u') || flags.includes('v')) return 'The pattern flag u is not supported. Use i (ignore case), m or s.';
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const n = source[i + 1] ?? '';
      if (/[1-9]/.test(n) || n === 'k') return 'This pattern refers back to an earlier group (like \\1), which can make it extremely slow. Remove the back-reference.';
      i++;
    } else if (c === '(' && source[i + 1] === '?') {
      const kind = source.slice(i + 2, i + 4);
      if (kind.startsWith('=') || kind.startsWith('!') || kind === '<=' || kind === '<!') {
        return 'Look-ahead and look-behind groups like (?=…) are not supported in patterns. Rewrite the pattern without them.';
      }
    }
  }
  return undefined;
}

const cache = new Map<string, RegExp>();

/**
 * Builds the RegExp of a checked pattern so V8 can always fall back to linear time: the i flag
 * is replaced by case-folded character classes (hi → [hH][iI]) and g/y are dropped.
 */
export function buildSafeRegExp(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`;
  let re = cache.get(key);
  if (!re) {
    const insensitive = flags.includes('i');
    const rest = flags.replace(/[giyuv]/g, '');
    re = new RegExp(insensitive ? foldCase(source) : source, rest);
    if (cache.size > 10_000) cache.clear();
    cache.set(key, re);
  }
  return re;
}

const swap = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
const isCased = (c: string): boolean => c.toLowerCase() !== c.toUpperCase() && c.length === 1 && swap(c).length === 1;

/** Rewrites a pattern so it matches both cases of every letter without the i flag. */
export function foldCase(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const escape = escapeLength(source, i);
      const text = source.slice(i, i + escape);
      // \xHH and \uHHHH name a character: fold it like a literal one. Other escapes (\d, \w, \.) stay.
      const named = /^\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4}))$/.exec(text);
      const ch = named ? String.fromCharCode(parseInt(named[1] ?? named[2]!, 16)) : '';
      if (named && isCased(ch)) out += inClass ? text + swap(ch) : `[${text}${swap(ch)}]`;
      else out += text;
      i += escape - 1;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        out += c;
      } else if (source[i + 1] === '-' && source[i + 2] !== undefined && source[i + 2] !== ']' && source[i + 2] !== '\\') {
        const from = c;
        const to = source[i + 2]!;
        out += `${from}-${to}`;
        if (isCased(from) && isCased(to) && (from === from.toLowerCase()) === (to === to.toLowerCase())) out += `${swap(from)}-${swap(to)}`;
        i += 2;
      } else {
        out += isCased(c) ? c + swap(c) : c;
      }
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (source[i + 1] === '^') {
        out += '^';
        i++;
      }
    } else if (c === '(' && source[i + 1] === '?' && source[i + 2] === '<') {
      // A named group: its name is not text to match.
      const close = source.indexOf('>', i);
      out += source.slice(i, close + 1);
      i = close;
    } else if (c === '{') {
      const close = source.indexOf('}', i);
      const body = close === -1 ? '' : source.slice(i, close + 1);
      if (/^\{\d+(,\d*)?\}$/.test(body)) {
        out += body;
        i = close;
      } else {
        out += c;
      }
    } else {
      out += isCased(c) ? `[${c}${swap(c)}]` : c;
    }
  }
  return out;
}

// Length of the escape sequence starting at `i` (the backslash included).
function escapeLength(s: string, i: number): number {
  const n = s[i + 1];
  if (n === 'x') return 4;
  if (n === 'c') return 3;
  if (n === 'u') {
    if (s[i + 2] === '{') return s.indexOf('}', i) - i + 1;
    return 6;
  }
  if (n === 'p' || n === 'P') return s[i + 2] === '{' ? s.indexOf('}', i) - i + 1 : 2;
  return 2;
}
