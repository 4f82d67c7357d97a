/**
 * Model prices in US dollars per million tokens, for the cost of each call. Built-in defaults
 * (list prices when this was written) are merged with the operator's table from
 * PARLEY_MODEL_PRICES: inline JSON when the value starts with "{", otherwise a path to a JSON file.
 * Format: {"gpt-4o-mini": {"input": 0.15, "output": 0.6}, "local/llama3": {"input": 0, "output": 0}}.
 */
import { readFileSync } from 'node:fs';

/** USD per million input and output tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** Prices Parley ships with; the operator's table overrides them key by key. */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
  'claude-3-haiku': { input: 0.25, output: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-opus-4': { input: 15, output: 75 },
};

/**
 * Looks up prices. A key is either "provider/model" (wins) or a bare model name; a model also
 * matches the longest key it extends with "-" (so "claude-3-5-haiku-20241022" costs as
 * "claude-3-5-haiku"). No match: cost 0.
 */
export class PriceTable {
  readonly #prices: ReadonlyMap<string, ModelPrice>;

  constructor(prices: Readonly<Record<string, ModelPrice>>) {
    const map = new Map<string, ModelPrice>();
    for (const [model, price] of Object.entries(prices)) {
      if (!isPrice(price)) throw new Error(`Model price for "${model}" must be {"input": number >= 0, "output": number >= 0} in USD per million tokens`);
      map.set(model, { input: price.input, output: price.output });
    }
    this.#prices = map;
  }

  /** The defaults merged with PARLEY_MODEL_PRICES (inline JSON or a file path); throws naming the variable when it is invalid. */
  static fromEnv(env: Record<string, string | undefined> = process.env): PriceTable {
    const raw = env['PARLEY_MODEL_PRICES']?.trim();
    if (!raw) return new PriceTable(DEFAULT_MODEL_PRICES);
    let text = raw;
    if (!raw.startsWith('{')) {
      try {
        text = readFileSync(raw, 'utf8');
      } catch (err) {
        throw new Error(`PARLEY_MODEL_PRICES: cannot read the file ${raw} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error('PARLEY_MODEL_PRICES must be a JSON object (or the path of a file holding one)');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('PARLEY_MODEL_PRICES must be a JSON object of model -> {"input", "output"}');
    try {
      return new PriceTable({ ...DEFAULT_MODEL_PRICES, ...(parsed as Record<string, ModelPrice>) });
    } catch (err) {
      throw new Error(`PARLEY_MODEL_PRICES: ${(err as Error).message}`);
    }
  }

  /** The price of a model of a provider, or undefined. */
  priceOf(provider: string, model: string): ModelPrice | undefined {
    const exact = this.#prices.get(`${provider}/${model}`) ?? this.#prices.get(model);
    if (exact) return exact;
    let best: { price: ModelPrice; length: number; scoped: boolean } | undefined;
    for (const [key, price] of this.#prices) {
      const scoped = key.startsWith(`${provider}/`);
      const bare = scoped ? key.slice(provider.length + 1) : key.includes('/') ? undefined : key;
      if (bare === undefined || !model.startsWith(`${bare}-`)) continue;
      // Longest prefix wins; at equal length the provider-scoped key does.
      if (!best || bare.length > best.length || (bare.length === best.length && scoped && !best.scoped)) best = { price, length: bare.length, scoped };
    }
    return best?.price;
  }

  /** Cost in USD of a call (0 when the model has no price). */
  cost(provider: string, model: string, usage: { inputTokens: number; outputTokens: number }): number {
    const price = this.priceOf(provider, model);
    if (!price) return 0;
    return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
  }
}

function isPrice(x: unknown): x is ModelPrice {
  const p = x as ModelPrice | null;
  return typeof p === 'object' && p !== null && Number.isFinite(p.input) && p.input >= 0 && Number.isFinite(p.output) && p.output >= 0;
}
