/**
 * The model router: resolves "provider/model" against a project's settings and a deployment's
 * overrides, calls the provider under deadlines (a hanging provider never holds a session), maps
 * every failure to a clear ParleyError, prices the call, and reports an `llm` event either way.
 */
import { isErrorValue, ParleyError, toErrorValue, type Logger } from '../../runtime/index.js';
import type { ModelCallRequest, ModelCallResult } from '../language/model-port.js';
import { AnthropicProvider } from './anthropic-provider.js';
import type { LlmEvent } from './llm-event.js';
import { overrideFor, type ModelOverrides } from './model-overrides.js';
import type { ModelSettingsSource, ResolvedProvider } from './model-settings.js';
import { OpenAiProvider } from './openai-provider.js';
import { PriceTable } from './price-table.js';
import type { ModelProvider, ProviderConfig, ProviderKind } from './provider.js';

/** The model name of the deterministic engine inside actors/language (never routed here). */
const BUILTIN = 'builtin';
/** Longest model name accepted. */
const MAX_MODEL_LENGTH = 200;

/** Who is calling: the project whose settings apply, the deployment's overrides, and where events go. */
export interface ModelCallContext {
  tenantId: string;
  projectId: string;
  /** The deployment's modelOverrides, if any. */
  overrides?: ModelOverrides;
  /** Receives one `llm` event per call, success or error; a throwing listener is logged, not propagated. */
  onEvent?: (event: LlmEvent) => void;
  /** Aborts the call (e.g. the session is closing); the call fails with SERVICE_UNAVAILABLE. */
  signal?: AbortSignal;
}

/** Where a call goes, after settings and overrides. */
export interface ModelTarget {
  provider: ResolvedProvider;
  model: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
}

/** Options of a ModelRouter. */
export interface ModelRouterOptions {
  settings: ModelSettingsSource;
  /** Default: PriceTable.fromEnv() (defaults plus PARLEY_MODEL_PRICES). */
  prices?: PriceTable;
  /** One provider per wire format; default: the OpenAI-compatible and Anthropic providers. */
  providers?: Partial<Record<ProviderKind, ModelProvider>>;
  log?: Logger;
}

/** Routes model calls of agents whose MODEL is not builtin to the project's providers. */
export class ModelRouter {
  readonly #settings: ModelSettingsSource;
  readonly #prices: PriceTable;
  readonly #providers: Record<ProviderKind, ModelProvider>;
  readonly #log: Logger | undefined;

  constructor(options: ModelRouterOptions) {
    this.#settings = options.settings;
    this.#prices = options.prices ?? PriceTable.fromEnv();
    this.#providers = { openai: new OpenAiProvider(), anthropic: new AnthropicProvider(), ...options.providers };
    this.#log = options.log;
  }

  /** A TurnHost.complete bound to one caller's context. */
  bind(ctx: ModelCallContext): (req: ModelCallRequest) => Promise<ModelCallResult> {
    return (req) => this.complete(req, ctx);
  }

  /**
   * Which provider, model and temperature answer `req`. Rules: the agent's override (or "*")
   * applies first; "provider/model" names both; a bare "provider" uses that provider's
   * defaultModel; "builtin" and unknown providers are BAD_REQUEST.
   */
  resolve(req: ModelCallRequest, ctx: ModelCallContext): ModelTarget {
    const override = overrideFor(ctx.overrides, req.agentName);
    const spec = req.model.trim();
    const slash = spec.indexOf('/');
    let providerName = slash < 0 ? spec : spec.slice(0, slash);
    let model: string | undefined = slash < 0 ? undefined : spec.slice(slash + 1);
    if (override?.model !== undefined) {
      const o = override.model.trim();
      const i = o.indexOf('/');
      if (i < 0) model = o;
      else [providerName, model] = [o.slice(0, i), o.slice(i + 1)];
    }
    if (override?.provider !== undefined) providerName = override.provider;
    if (providerName === BUILTIN) {
      throw new ParleyError('BAD_REQUEST', 'The builtin model runs inside the turn engine, not through the model router', { model: spec });
    }
    if (providerName === '') throw new ParleyError('BAD_REQUEST', `Model "${spec}" must be written provider/model (e.g. openai/gpt-4o-mini)`, { model: spec });
    const provider = this.#settings.resolveProvider(ctx.tenantId, ctx.projectId, providerName);
    if (!provider) {
      throw new ParleyError('BAD_REQUEST', `Model provider "${providerName}" is not configured for this project: add it with PUT /api/projects/{projectId}/model-settings`, { provider: providerName });
    }
    model = model === undefined || model === '' ? provider.defaultModel : model;
    if (!model) throw new ParleyError('BAD_REQUEST', `Model "${spec}" names no model and provider "${providerName}" has no defaultModel`, { provider: providerName });
    if (model.length > MAX_MODEL_LENGTH) throw new ParleyError('BAD_REQUEST', `Model names are at most ${MAX_MODEL_LENGTH} characters`, { provider: providerName });
    if (provider.kind === 'anthropic' && !provider.apiKey) {
      throw new ParleyError('BAD_REQUEST', `Model provider "${providerName}" has no API key: set apiKey in the project's model settings`, { provider: providerName });
    }
    return { provider, model, temperature: override?.temperature ?? req.temperature, maxTokens: override?.maxTokens ?? provider.maxTokens };
  }

  /** Calls the model; always reports one llm event; throws ParleyError on any failure. */
  async complete(req: ModelCallRequest, ctx: ModelCallContext): Promise<ModelCallResult> {
    const startedAt = Date.now();
    const timestamp = new Date(startedAt).toISOString();
    let target: ModelTarget | undefined;
    try {
      target = this.resolve(req, ctx);
      const result = await this.#call(req, ctx, target);
      const usage = result.usage;
      const done: ModelCallResult = { ...result, provider: target.provider.name, model: target.model, costUsd: this.#prices.cost(target.provider.name, target.model, usage), durationMs: Date.now() - startedAt };
      this.#emit(ctx, {
        category: 'llm', event_type: 'llm_call', agent_name: req.agentName, timestamp, duration_ms: done.durationMs,
        metadata: { provider: done.provider, model: done.model, tokens_in: usage.inputTokens, tokens_out: usage.outputTokens, cost: done.costUsd },
      });
      return done;
    } catch (err) {
      const error = toErrorValue(err);
      this.#emit(ctx, {
        category: 'llm', event_type: 'llm_call', agent_name: req.agentName, timestamp, duration_ms: Date.now() - startedAt, error: error.message,
        metadata: { provider: target?.provider.name ?? '', model: target?.model ?? req.model, tokens_in: 0, tokens_out: 0, cost: 0, error_code: error.code },
      });
      throw err instanceof ParleyError ? err : new ParleyError(error.code, error.message, error.details);
    }
  }

  /** Runs the provider under the first-byte and total deadlines and the caller's signal. */
  async #call(req: ModelCallRequest, ctx: ModelCallContext, target: ModelTarget): Promise<ModelCallResult> {
    const { provider, model } = target;
    const { totalMs, firstByteMs } = provider.timeouts;
    const details = { provider: provider.name, model };
    if (ctx.signal?.aborted) throw new ParleyError('SERVICE_UNAVAILABLE', 'The model call was cancelled', details);

    const controller = new AbortController();
    let failure: ParleyError | undefined;
    let rejectStop: (err: ParleyError) => void = () => {};
    // Settles when a deadline passes or the caller aborts, even if the provider ignores its signal.
    const stopped = new Promise<never>((_, reject) => (rejectStop = reject));
    stopped.catch(() => {});
    const stop = (err: ParleyError): void => {
      if (failure) return;
      failure = err;
      controller.abort(err);
      rejectStop(err);
    };
    const timeout = (phase: string, ms: number): ParleyError =>
      new ParleyError('SERVICE_UNAVAILABLE', `Model provider "${provider.name}" did not answer in time (${phase} deadline of ${ms} ms)`, { ...details, timeoutMs: ms });
    const totalTimer = setTimeout(() => stop(timeout('total', totalMs)), totalMs);
    const firstByteTimer = firstByteMs < totalMs ? setTimeout(() => stop(timeout('first-byte', firstByteMs)), firstByteMs) : undefined;
    const onAbort = (): void => stop(new ParleyError('SERVICE_UNAVAILABLE', 'The model call was cancelled', details));
    ctx.signal?.addEventListener('abort', onAbort, { once: true });

    let settled = false;
    const onText = req.onText;
    const routed: ModelCallRequest = { ...req, onText: onText && ((delta) => void (!settled && !failure && onText(delta))) };
    const cfg: ProviderConfig = {
      name: provider.name, kind: provider.kind, baseUrl: provider.baseUrl, apiKey: provider.apiKey, model,
      temperature: target.temperature, maxTokens: target.maxTokens,
      onFirstByte: () => clearTimeout(firstByteTimer),
    };
    try {
      const running = this.#providers[provider.kind].complete(routed, cfg, controller.signal);
      // If a deadline wins the race, the provider's late rejection must not go unhandled.
      running.catch(() => {});
      return await Promise.race([running, stopped]);
    } catch (err) {
      if (failure) throw failure;
      if (isErrorValue(err)) throw err;
      throw unreachable(provider, model, err);
    } finally {
      settled = true;
      clearTimeout(totalTimer);
      clearTimeout(firstByteTimer);
      ctx.signal?.removeEventListener('abort', onAbort);
    }
  }

  #emit(ctx: ModelCallContext, event: LlmEvent): void {
    if (!ctx.onEvent) return;
    try {
      ctx.onEvent(event);
    } catch (err) {
      this.#log?.error('llm event listener threw', { err });
    }
  }
}

/** A transport failure (refused, reset, DNS...) as a clear error naming the host, never the key. */
function unreachable(provider: ResolvedProvider, model: string, err: unknown): ParleyError {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  let host = provider.baseUrl;
  try {
    host = new URL(provider.baseUrl).host;
  } catch {
    // keep the whole base URL: it holds no credentials (the settings refuse them)
  }
  return new ParleyError('SERVICE_UNAVAILABLE', `Could not reach model provider "${provider.name}" at ${host}${code ? ` (${code})` : ''}`, { provider: provider.name, model, ...(code ? { cause: code } : {}) }, err);
}
