/** Source text handling: size limit, line splitting, diagnostics with 1-based positions. */

/** A compile error at a 1-based line and column, worded for a non-programmer. */
export interface CompileDiagnostic {
  line: number;
  column: number;
  message: string;
}

/** Largest accepted source, in UTF-8 bytes. */
export const MAX_SOURCE_BYTES = 256 * 1024;

/** One physical line of the source. */
export interface SourceLine {
  /** 1-based line number. */
  readonly number: number;
  /** The line without its line terminator. */
  readonly text: string;
}

/** Splits source into lines, accepting \n, \r\n and \r, and dropping a leading byte-order mark. */
export function splitLines(source: string): SourceLine[] {
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  return text.split(/\r\n|\r|\n/).map((t, i) => ({ number: i + 1, text: t }));
}

/** Collects diagnostics; keeps them sorted by position and drops exact duplicates. */
export class Diagnostics {
  readonly #items: CompileDiagnostic[] = [];

  /** Records an error at a 1-based line and column. */
  error(line: number, column: number, message: string): void {
    if (this.#items.some((d) => d.line === line && d.column === column && d.message === message)) return;
    this.#items.push({ line, column: Math.max(1, column), message });
  }

  /** True when at least one error was recorded. */
  get hasErrors(): boolean {
    return this.#items.length > 0;
  }

  /** The errors, in source order. */
  list(): CompileDiagnostic[] {
    return [...this.#items].sort((a, b) => a.line - b.line || a.column - b.column);
  }
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), for "did you mean". */
export function editDistance(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) d.push([i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate to `word` (case-insensitive), if it is close enough to be a likely typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toUpperCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const dist = editDistance(w, c.toUpperCase());
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  const limit = w.length <= 4 ? 1 : 2;
  return bestDistance <= limit ? best : undefined;
}
