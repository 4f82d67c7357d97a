/**
 * The builtin model: a deterministic, local stand-in for a language model. It matches TRIGGER
 * patterns and intents, scores KNOWLEDGE by word overlap, extracts slot values, and estimates
 * tokens. Same input, same output: no randomness, no clock, no network.
 */
import type { PatternSpec } from './program.js';
import { buildSafeRegExp } from './safe-pattern.js';

/** Minimum KNOWLEDGE similarity for the builtin model to answer with that entry. */
export const KNOWLEDGE_THRESHOLD = 0.4;

/** Longest prefix of a message that patterns are run on (bounds the cost of a slow pattern). */
export const MAX_MATCH_CHARS = 4000;

const STOPWORDS: ReadonlySet<string> = new Set(
  ('a an the i me my mine you your we our us it its is are am was were be been do does did can could would should will shall ' +
    'to of for in on at by with and or but if so this that these those there here how what when where which who whom why ' +
    'please just some any get got have has had want need like let lets im ive id youre').split(' '),
);

/** Lowercased words of a text (letters and digits, apostrophes dropped). */
export function words(text: string): string[] {
  return (text.toLowerCase().replace(/['\u2019]/g, '').match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** A crude stem: drops a plural "s" so "refunds" meets "refund". */
export function stem(word: string): string {
  return word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/** Content words of a text: words minus stopwords, stemmed, deduplicated, in order. */
export function keywords(text: string): string[] {
  return [...new Set(words(text).filter((w) => !STOPWORDS.has(w)).map(stem))];
}

/** Similarity of a message to a KNOWLEDGE question, in [0, 1] (Dice coefficient on content words). */
export function similarity(messageKeywords: readonly string[], questionKeywords: readonly string[]): number {
  if (messageKeywords.length === 0 || questionKeywords.length === 0) return 0;
  const q = new Set(questionKeywords);
  const shared = messageKeywords.filter((w) => q.has(w)).length;
  return Math.round(((2 * shared) / (messageKeywords.length + questionKeywords.length)) * 1000) / 1000;
}

/**
 * True when the message expresses the intent: every content word of the intent name
 * (speak_to_human → speak, human) appears in the message. Names made only of stopwords
 * fall back to all their words.
 */
export function matchesIntent(message: string, intent: string): boolean {
  const parts = intent.toLowerCase().split(/[_\s-]+/).filter(Boolean);
  const content = parts.filter((p) => !STOPWORDS.has(p));
  const needed = (content.length > 0 ? content : parts).map(stem);
  if (needed.length === 0) return false;
  const have = new Set(words(message).map(stem));
  return needed.every((w) => have.has(w));
}

const regexCache = new WeakMap<PatternSpec, RegExp>();
const unanchoredCache = new WeakMap<PatternSpec, RegExp>();

/** The RegExp of a stored pattern, built once per pattern object. */
export function regexOf(p: PatternSpec): RegExp {
  let re = regexCache.get(p);
  if (!re) {
    re = buildSafeRegExp(p.source, p.flags);
    regexCache.set(p, re);
  }
  return re;
}

/** The pattern without its leading ^ and trailing $, to find a value inside a longer message. */
export function unanchoredRegexOf(p: PatternSpec): RegExp {
  let re = unanchoredCache.get(p);
  if (!re) {
    let src = p.source;
    if (src.startsWith('^')) src = src.slice(1);
    if (src.endsWith('$') && !src.endsWith('\\$')) src = src.slice(0, -1);
    try {
      re = buildSafeRegExp(src, p.flags);
    } catch {
      re = regexOf(p);
    }
    unanchoredCache.set(p, re);
  }
  return re;
}

/** Tests a stored pattern against a message (bounded length). */
export function testPattern(p: PatternSpec, message: string): boolean {
  return regexOf(p).test(message.slice(0, MAX_MATCH_CHARS));
}

/** Finds the first piece of the message matching the pattern with its anchors removed. */
export function findPattern(p: PatternSpec, message: string): string | undefined {
  const m = unanchoredRegexOf(p).exec(message.slice(0, MAX_MATCH_CHARS));
  return m && m[0] !== '' ? m[0] : undefined;
}

/** Deterministic token estimate: one token per word and per punctuation mark. */
export function estimateTokens(text: string): number {
  return (text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? []).length;
}

/** Splits text into streaming pieces, word by word, keeping whitespace; pieces concatenate to `text`. */
export function streamPieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
