import { ParleyError, type Collection, type SecretBox, type Store } from '../../runtime/index.js';
import {
  DEFAULT_BASE_URLS, DEFAULT_MODEL_TIMEOUTS,
  type ModelSettingsInput, type ModelSettingsRecord, type ModelSettingsSource, type ModelSettingsView, type ModelTimeouts,
  type ProviderSettingsView, type ResolvedProvider, type StoredProvider,
} from './model-settings.js';

/** Provider names: what may stand before "/" in MODEL: (never "builtin", the engine's own model). */
export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
/** Most providers one project may configure. */
export const MAX_PROVIDERS = 16;
/** Keys shorter than this show no last-4 hint (it would give away too much of them). */
const HINT_MIN_KEY_LENGTH = 16;

/** The additional data binding a sealed key to its project and provider (a key copied elsewhere does not open). */
function keyAad(tenantId: string, projectId: string, name: string): string {
  return `model-settings:${tenantId}:${projectId}:${name}`;
}

/** Normalises a base URL: http(s) only, no credentials, query or fragment, no trailing slash. */
export function normalizeBaseUrl(raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ParleyError('VALIDATION_ERROR', `${field} must be an absolute http or https URL`, { field });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ParleyError('VALIDATION_ERROR', `${field} must use http or https (got ${url.protocol.replace(/:$/, '')})`, { field });
  if (url.username !== '' || url.password !== '') throw new ParleyError('VALIDATION_ERROR', `${field} must not contain credentials: put the key in apiKey`, { field });
  if (url.search !== '' || url.hash !== '') throw new ParleyError('VALIDATION_ERROR', `${field} must not have a query or fragment`, { field });
  return url.href.replace(/\/+$/, '');
}

/**
 * Each project's model providers, keyed [tenantId, projectId]. API keys are sealed with the
 * SecretBox (AES-256-GCM over PARLEY_ENCRYPTION_KEYS) and bound to their project and provider;
 * saving a key without encryption configured is SERVICE_UNAVAILABLE.
 */
export class ModelSettingsStore implements ModelSettingsSource {
  readonly #store: Store;
  readonly #settings: Collection<ModelSettingsRecord>;
  readonly #box: SecretBox;

  constructor(store: Store, box: SecretBox) {
    this.#store = store;
    this.#settings = store.collection('modelSettings');
    this.#box = box;
  }

  /** The stored record, or undefined. */
  get(tenantId: string, projectId: string): ModelSettingsRecord | undefined {
    return this.#settings.get([tenantId, projectId]);
  }

  /** The settings as the API shows them (empty settings when none were saved). */
  view(tenantId: string, projectId: string): ModelSettingsView {
    const record = this.get(tenantId, projectId);
    const providers: Record<string, ProviderSettingsView> = {};
    for (const [name, p] of Object.entries(record?.providers ?? {})) {
      const view: ProviderSettingsView = { kind: p.kind, baseUrl: p.baseUrl, hasApiKey: p.apiKey !== undefined };
      if (p.apiKeyLast4 !== undefined) view.apiKeyLast4 = p.apiKeyLast4;
      if (p.defaultModel !== undefined) view.defaultModel = p.defaultModel;
      if (p.maxTokens !== undefined) view.maxTokens = p.maxTokens;
      if (p.timeouts !== undefined) view.timeouts = p.timeouts;
      providers[name] = view;
    }
    const out: ModelSettingsView = { projectId, providers, effectiveTimeouts: mergeTimeouts(record?.timeouts), updatedAt: record?.updatedAt ?? null };
    if (record?.timeouts !== undefined) out.timeouts = record.timeouts;
    return out;
  }

  /**
   * Replaces a project's settings. Per provider, `apiKey` omitted keeps the key already stored
   * under that name, null removes it, a string is sealed (503 without encryption keys).
   */
  async put(tenantId: string, projectId: string, input: ModelSettingsInput): Promise<ModelSettingsView> {
    const names = Object.keys(input.providers);
    if (names.length > MAX_PROVIDERS) throw new ParleyError('VALIDATION_ERROR', `providers: at most ${MAX_PROVIDERS} providers per project`, { field: 'providers' });
    const prepared = new Map<string, Omit<StoredProvider, 'apiKey' | 'apiKeyLast4'> & { newKey?: string | null }>();
    for (const name of names) {
      const p = input.providers[name]!;
      if (!PROVIDER_NAME.test(name) || name === 'builtin') {
        throw new ParleyError('VALIDATION_ERROR', `providers.${name}: a provider name is 1 to 32 lower-case letters, digits, _ or -, starting with a letter, and not "builtin"`, { field: `providers.${name}` });
      }
      const entry: Omit<StoredProvider, 'apiKey' | 'apiKeyLast4'> & { newKey?: string | null } = {
        kind: p.kind,
        baseUrl: normalizeBaseUrl(p.baseUrl ?? DEFAULT_BASE_URLS[p.kind], `providers.${name}.baseUrl`),
      };
      if (p.defaultModel !== undefined) entry.defaultModel = p.defaultModel;
      if (p.maxTokens !== undefined) entry.maxTokens = p.maxTokens;
      if (p.timeouts !== undefined) entry.timeouts = { ...p.timeouts };
      if (p.apiKey !== undefined) entry.newKey = p.apiKey;
      prepared.set(name, entry);
    }
    // Seal outside the transaction: it can fail (no keys configured) and needs no store access.
    const sealed = new Map<string, Pick<StoredProvider, 'apiKey' | 'apiKeyLast4'>>();
    for (const [name, entry] of prepared) {
      if (typeof entry.newKey !== 'string') continue;
      const hint = entry.newKey.length >= HINT_MIN_KEY_LENGTH ? { apiKeyLast4: entry.newKey.slice(-4) } : {};
      sealed.set(name, { apiKey: this.#box.seal(entry.newKey, keyAad(tenantId, projectId, name)), ...hint });
    }
    await this.#store.transaction(() => {
      const previous = this.#settings.get([tenantId, projectId]);
      const providers: Record<string, StoredProvider> = {};
      for (const [name, { newKey, ...entry }] of prepared) {
        const stored: StoredProvider = { ...entry };
        const before = previous && Object.hasOwn(previous.providers, name) ? previous.providers[name] : undefined;
        // A stored key only ever goes to the server it was given for: moving it needs the key again.
        if (newKey === undefined && before?.apiKey && (before.baseUrl !== entry.baseUrl || before.kind !== entry.kind)) {
          throw new ParleyError('VALIDATION_ERROR', `providers.${name}.apiKey: the base URL or kind changed, so send the key again (or null to drop it)`, { field: `providers.${name}.apiKey` });
        }
        const key = newKey === undefined ? keyOf(before) : newKey === null ? {} : sealed.get(name)!;
        Object.assign(stored, key);
        providers[name] = stored;
      }
      const record: ModelSettingsRecord = { tenantId, projectId, providers, updatedAt: new Date().toISOString() };
      if (input.timeouts !== undefined) record.timeouts = { ...input.timeouts };
      this.#settings.putSync([tenantId, projectId], record);
    });
    return this.view(tenantId, projectId);
  }

  /** The named provider ready to call (key decrypted; SERVICE_UNAVAILABLE when the key can no longer be opened). */
  resolveProvider(tenantId: string, projectId: string, name: string): ResolvedProvider | undefined {
    const record = this.get(tenantId, projectId);
    const p = record && Object.hasOwn(record.providers, name) ? record.providers[name] : undefined;
    if (!record || !p) return undefined;
    return {
      name, kind: p.kind, baseUrl: p.baseUrl,
      apiKey: p.apiKey ? this.#box.open(p.apiKey, keyAad(tenantId, projectId, name)) : undefined,
      defaultModel: p.defaultModel, maxTokens: p.maxTokens,
      timeouts: mergeTimeouts(p.timeouts, record.timeouts),
    };
  }
}

/** The key fields of a stored provider (kept across a PUT that omits apiKey). */
function keyOf(p: StoredProvider | undefined): Pick<StoredProvider, 'apiKey' | 'apiKeyLast4'> {
  if (!p?.apiKey) return {};
  return p.apiKeyLast4 === undefined ? { apiKey: p.apiKey } : { apiKey: p.apiKey, apiKeyLast4: p.apiKeyLast4 };
}

/** Deadlines: the first layer that sets a field wins, then the defaults. */
export function mergeTimeouts(...layers: (ModelTimeouts | undefined)[]): Required<ModelTimeouts> {
  const pick = (field: keyof ModelTimeouts): number => layers.find((l) => l?.[field] !== undefined)?.[field] ?? DEFAULT_MODEL_TIMEOUTS[field];
  return { totalMs: pick('totalMs'), firstByteMs: pick('firstByteMs') };
}
