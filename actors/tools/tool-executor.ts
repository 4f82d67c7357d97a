import type { Config, Logger, Store } from '../../runtime/index.js';
import type { CodeToolSpec, ToolCallRequest } from '../language/index.js';
import { SessionStore } from '../session/session-store.js';
import { runHttpTool } from './http-tool.js';
import { MemoryBridges } from './memory-bridges.js';
import { MemoryService } from './memory-service.js';
import { MemoryStore } from './memory-store.js';
import { CodeSandbox, type CodeToolResult, type SandboxMemoryBridge } from './sandbox/code-sandbox.js';
import { SandboxTokens } from './sandbox-tokens.js';
import type { ToolSecretResolver } from './tool-secrets-port.js';
import { toolError, type ToolResult } from './tool-result.js';

/** Who is calling a tool: the session it runs for, and that session's secrets. */
export interface ToolScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
  /** Secrets of the session's tenant, project and environment. */
  secrets: ToolSecretResolver;
}

/** Parts of a ToolExecutor; `ToolExecutor.create` builds them from a store and the config. */
export interface ToolExecutorParts {
  sandbox: CodeSandbox;
  memory: MemoryService;
  tokens: SandboxTokens;
  bridges: MemoryBridges;
  allowPrivateNetwork: boolean;
  /** HTTP response size limit in bytes (default 1 MB). */
  maxResponseBytes?: number;
  log: Logger;
}

/**
 * Runs tools for the turn engine (`host.callTool`): HTTP tools directly, CODE tools in the
 * sandbox with a short-lived sandbox JWT for the session behind ctx.memory. One per thread.
 */
export class ToolExecutor {
  readonly #parts: ToolExecutorParts;

  constructor(parts: ToolExecutorParts) {
    this.#parts = parts;
  }

  /** An executor over a thread's store: memory in LMDB, sandbox JWT secret from config or store. */
  static create(options: { store: Store; config: Pick<Config, 'toolsAllowPrivateNetwork' | 'sandboxJwtSecret'>; log: Logger; sessions?: SessionStore; sandbox?: CodeSandbox }): ToolExecutor {
    const tokens = new SandboxTokens(options.store, options.config);
    const bridges = new MemoryBridges(options.sessions ?? new SessionStore(options.store));
    return new ToolExecutor({
      tokens, bridges,
      sandbox: options.sandbox ?? new CodeSandbox({ log: options.log }),
      memory: new MemoryService({ tokens, bridges, memory: new MemoryStore(options.store) }),
      allowPrivateNetwork: options.config.toolsAllowPrivateNetwork,
      log: options.log,
    });
  }

  /** Runs one tool call; never throws. CODE calls also answer the lines they logged (`logs`). */
  async callTool(request: ToolCallRequest, scope: ToolScope): Promise<ToolResult | CodeToolResult> {
    const { tool } = request;
    const params = typeof request.params === 'object' && request.params !== null ? request.params : {};
    try {
      if (tool.kind === 'http') {
        return await runHttpTool(tool, params, { secrets: scope.secrets, allowPrivateNetwork: this.#parts.allowPrivateNetwork, maxResponseBytes: this.#parts.maxResponseBytes, log: this.#parts.log });
      }
      return await this.#runCode(tool, params, scope);
    } catch (err) {
      this.#parts.log.error('tool call failed', { tool: tool.name, sessionId: scope.sessionId, err });
      return toolError(`Tool ${tool.name} failed`);
    }
  }

  /** Stops the sandbox workers; safe to call twice. */
  close(): Promise<void> {
    return this.#parts.sandbox.close();
  }

  async #runCode(tool: CodeToolSpec, params: Record<string, unknown>, scope: ToolScope): Promise<CodeToolResult> {
    const { tokens, memory, bridges, sandbox, log } = this.#parts;
    // The token stays on this side of the bridge: sandboxed code never sees it, but each of its
    // memory calls is checked with it exactly as the HTTP endpoint checks a presented token.
    const token = tokens.enabled ? await tokens.issue({ tenantId: scope.tenantId, projectId: scope.projectId, sessionId: scope.sessionId }) : '';
    const bridge: SandboxMemoryBridge = async (action, key, content) => {
      try {
        const answer = await memory.handleToken(token, action === 'set' ? { action, memoryStoreName: key, payload: { content } } : { action, memoryStoreName: key });
        return { ok: true, value: answer.action === 'set' ? null : answer.data };
      } catch (err) {
        const message = typeof (err as { message?: unknown })?.message === 'string' ? (err as Error).message : 'ctx.memory failed';
        return { ok: false, error: message };
      }
    };
    const release = bridges.open(scope);
    try {
      const result = await sandbox.run(tool, params, bridge);
      for (const line of result.logs) log.debug('tool log', { tool: tool.name, sessionId: scope.sessionId, line });
      return result;
    } finally {
      release();
    }
  }
}
