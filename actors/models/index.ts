// Public surface of the model providers: the router, project model settings, overrides, prices.
export type { ModelProvider, ProviderConfig, ProviderKind } from './provider.js';
export { PROVIDER_KINDS } from './provider.js';
export { OpenAiProvider } from './openai-provider.js';
export { AnthropicProvider, ANTHROPIC_VERSION } from './anthropic-provider.js';
export { ModelRouter, type ModelCallContext, type ModelRouterOptions, type ModelTarget } from './model-router.js';
export type { LlmEvent } from './llm-event.js';
export { ModelOverridesSchema, overrideFor, type AgentModelOverride, type ModelOverrides } from './model-overrides.js';
export { PriceTable, DEFAULT_MODEL_PRICES, type ModelPrice } from './price-table.js';
export * from './model-settings.js';
export { ModelSettingsStore, PROVIDER_NAME, MAX_PROVIDERS, normalizeBaseUrl, mergeTimeouts } from './model-settings-store.js';
