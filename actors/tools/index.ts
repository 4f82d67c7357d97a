// Public surface of the tools: HTTP and CODE tool execution, the sandbox, and the memory store.
export type { ToolSecretResolver } from './tool-secrets-port.js';
export type { ToolResult } from './tool-result.js';
export { runHttpTool, DEFAULT_MAX_RESPONSE_BYTES, type HttpToolOptions } from './http-tool.js';
export { isBlockedAddress } from './network-guard.js';
export { CodeSandbox, type CodeSandboxOptions, type CodeToolResult, type SandboxMemoryBridge } from './sandbox/code-sandbox.js';
export { MemoryStore, MAX_MEMORY_NAME_LENGTH, MAX_MEMORY_CONTENT_CHARS, MAX_MEMORY_STORES_PER_SESSION } from './memory-store.js';
export { MemoryBridges, type SessionLookup } from './memory-bridges.js';
export { MemoryService, MEMORY_ACTIONS, type MemoryAnswer } from './memory-service.js';
export { SandboxTokens, SANDBOX_AUDIENCE, SANDBOX_ISSUER, SANDBOX_TOKEN_TTL_SECONDS, type SandboxClaims } from './sandbox-tokens.js';
export { ToolExecutor, type ToolScope, type ToolExecutorParts } from './tool-executor.js';
