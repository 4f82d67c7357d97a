/**
 * The contract every model provider implements. A provider speaks one wire format (OpenAI chat
 * completions, Anthropic messages); the router picks it, gives it a resolved configuration and a
 * signal that carries the deadlines, and turns whatever it throws into a clear turn error.
 */
import type { ModelCallRequest, ModelCallResult } from '../language/model-port.js';

/** The wire formats Parley speaks. */
export const PROVIDER_KINDS = ['openai', 'anthropic'] as const;

/** One wire format. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Everything a provider needs for one call, resolved by the router from the project's settings. */
export interface ProviderConfig {
  /** The provider's name in the project's settings (e.g. "openai", "local"). */
  name: string;
  kind: ProviderKind;
  /** Without a trailing slash, e.g. "https://api.openai.com/v1" or "https://api.anthropic.com". */
  baseUrl: string;
  /** The decrypted key; undefined for servers that need none (a local OpenAI-compatible server). */
  apiKey: string | undefined;
  /** The model name as the provider knows it (the part after "provider/"). */
  model: string;
  temperature: number | undefined;
  /** Upper bound of generated tokens (Anthropic requires one; OpenAI-compatible: sent only when set). */
  maxTokens: number | undefined;
  /** Called once when the first byte of the response arrives (ends the router's first-byte deadline). */
  onFirstByte?: () => void;
}

/** A model provider: one call in, one streamed answer out. */
export interface ModelProvider {
  readonly name: string;
  /**
   * Calls the model, passes each text delta to `req.onText` as it streams, assembles tool calls
   * from their deltas, and reports usage. Throws ParleyError (HTTP failures, malformed streams);
   * stops promptly when `signal` aborts.
   */
  complete(req: ModelCallRequest, cfg: ProviderConfig, signal: AbortSignal): Promise<ModelCallResult>;
}
