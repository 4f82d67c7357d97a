/** Records and views of a project's model settings (stored by ModelSettingsStore). */
import type { SealedSecret } from '../../runtime/index.js';
import type { ProviderKind } from './provider.js';

/** Deadlines of a model call, in ms; unset fields fall back to the project's, then to the defaults. */
export interface ModelTimeouts {
  /** The whole call, from request to the last streamed byte. */
  totalMs?: number;
  /** From request to the first byte of the response. */
  firstByteMs?: number;
}

/** Deadlines when nobody set any: 60 s in total, 15 s to the first byte. */
export const DEFAULT_MODEL_TIMEOUTS: Readonly<Required<ModelTimeouts>> = { totalMs: 60_000, firstByteMs: 15_000 };

/** Base URL of each kind when the settings give none. */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** One provider as stored: the key sealed, plus its last 4 characters for display. */
export interface StoredProvider {
  kind: ProviderKind;
  baseUrl: string;
  apiKey?: SealedSecret;
  /** Last 4 characters of the key, kept only for keys of 16 characters or more. */
  apiKeyLast4?: string;
  defaultModel?: string;
  maxTokens?: number;
  timeouts?: ModelTimeouts;
}

/** A project's model settings, keyed [tenantId, projectId]. */
export interface ModelSettingsRecord {
  tenantId: string;
  projectId: string;
  /** Provider name (the part before "/" in MODEL: name/model) -> its settings. */
  providers: Record<string, StoredProvider>;
  /** Project-wide deadlines (a provider's own win). */
  timeouts?: ModelTimeouts;
  updatedAt: string;
}

/** What PUT accepts for one provider. `apiKey` omitted keeps the stored key, null removes it. */
export interface ProviderSettingsInput {
  kind: ProviderKind;
  baseUrl?: string;
  apiKey?: string | null;
  defaultModel?: string;
  maxTokens?: number;
  timeouts?: ModelTimeouts;
}

/** What PUT accepts: the whole settings (providers not listed are removed). */
export interface ModelSettingsInput {
  providers: Record<string, ProviderSettingsInput>;
  timeouts?: ModelTimeouts;
}

/** A provider as the API shows it: never the key, only whether there is one and its last 4 characters. */
export interface ProviderSettingsView {
  kind: ProviderKind;
  baseUrl: string;
  hasApiKey: boolean;
  apiKeyLast4?: string;
  defaultModel?: string;
  maxTokens?: number;
  timeouts?: ModelTimeouts;
}

/** The settings as the API shows them. */
export interface ModelSettingsView {
  projectId: string;
  providers: Record<string, ProviderSettingsView>;
  timeouts?: ModelTimeouts;
  /** The deadlines that apply to providers without their own. */
  effectiveTimeouts: Required<ModelTimeouts>;
  updatedAt: string | null;
}

/** A provider ready to call: key decrypted, deadlines merged (provider, project, defaults). */
export interface ResolvedProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey: string | undefined;
  defaultModel: string | undefined;
  maxTokens: number | undefined;
  timeouts: Required<ModelTimeouts>;
}

/** Where the router finds a project's providers (ModelSettingsStore, or a fixed table in tests). */
export interface ModelSettingsSource {
  /** The named provider of a project, or undefined when the project has none by that name. */
  resolveProvider(tenantId: string, projectId: string, name: string): ResolvedProvider | undefined;
}
