import { ParleyError } from '../../runtime/index.js';
import type { MemoryBridges } from './memory-bridges.js';
import { MAX_MEMORY_NAME_LENGTH, type MemoryStore } from './memory-store.js';
import type { SandboxTokens } from './sandbox-tokens.js';

/** The memory endpoint's actions. */
export const MEMORY_ACTIONS = ['get', 'set', 'delete'] as const;

/** The answer of one memory request, shaped for the endpoint's envelope. */
export type MemoryAnswer = { action: 'get'; data: unknown } | { action: 'set' } | { action: 'delete'; data: { deleted: boolean } };

const BODY_FIELDS: ReadonlySet<string> = new Set(['action', 'memoryStoreName', 'payload']);
const BEARER = /^Bearer +(\S+)$/i;

/**
 * The logic of POST /api/v1/memory, shared by the route and by ctx.memory inside the sandbox
 * (which calls it in-process with its own sandbox JWT), so both pass the same checks in the
 * same order: 503 auth off, 401 token, 400 body, 400 token lacks sessionId, 400 action, 404 bridge.
 */
export class MemoryService {
  readonly #tokens: SandboxTokens;
  readonly #memory: MemoryStore;
  readonly #bridges: MemoryBridges;

  constructor(options: { tokens: SandboxTokens; memory: MemoryStore; bridges: MemoryBridges }) {
    this.#tokens = options.tokens;
    this.#memory = options.memory;
    this.#bridges = options.bridges;
  }

  /** Handles a request given its Authorization header value and parsed JSON body; throws ParleyError. */
  async handle(authorization: string | undefined, body: Record<string, unknown>): Promise<MemoryAnswer> {
    if (!this.#tokens.enabled) throw new ParleyError('SERVICE_UNAVAILABLE', 'Sandbox auth is not configured');
    const match = BEARER.exec(authorization ?? '');
    if (!match) throw new ParleyError('UNAUTHORIZED', 'Missing sandbox token: send Authorization: Bearer <sandbox JWT>');
    return this.handleToken(match[1]!, body);
  }

  /** Same as handle, with the token itself (ctx.memory's path). */
  async handleToken(token: string, body: Record<string, unknown>): Promise<MemoryAnswer> {
    if (!this.#tokens.enabled) throw new ParleyError('SERVICE_UNAVAILABLE', 'Sandbox auth is not configured');
    const claims = await this.#tokens.verify(token);
    const { action, memoryStoreName, payload } = body;
    if (typeof action !== 'string' || action === '' || typeof memoryStoreName !== 'string' || memoryStoreName === '') {
      const field = typeof action !== 'string' || action === '' ? 'action' : 'memoryStoreName';
      throw new ParleyError('VALIDATION_ERROR', 'action and memoryStoreName are required', { field });
    }
    for (const field of Object.keys(body)) {
      if (!BODY_FIELDS.has(field)) throw new ParleyError('VALIDATION_ERROR', `Unknown field "${field}"`, { field });
    }
    if (memoryStoreName.length > MAX_MEMORY_NAME_LENGTH) {
      throw new ParleyError('VALIDATION_ERROR', `memoryStoreName is longer than ${MAX_MEMORY_NAME_LENGTH} characters`, { field: 'memoryStoreName' });
    }
    if (claims.sessionId === undefined) throw new ParleyError('BAD_REQUEST', 'The sandbox token lacks a sessionId claim');
    if (!(MEMORY_ACTIONS as readonly string[]).includes(action)) {
      throw new ParleyError('VALIDATION_ERROR', `Unknown action "${action.slice(0, 50)}": use get, set or delete`, { field: 'action' });
    }
    if (!this.#bridges.isActive(claims.tenantId, claims.projectId, claims.sessionId)) {
      throw new ParleyError('NOT_FOUND', 'No active memory bridge for this session');
    }
    const { tenantId, sessionId } = claims;
    switch (action as (typeof MEMORY_ACTIONS)[number]) {
      case 'get':
        return { action: 'get', data: this.#memory.get(tenantId, sessionId, memoryStoreName) ?? null };
      case 'set': {
        if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || !Object.prototype.hasOwnProperty.call(payload, 'content')) {
          throw new ParleyError('VALIDATION_ERROR', 'set needs payload.content (the value to store)', { field: 'payload.content' });
        }
        await this.#memory.set(tenantId, sessionId, memoryStoreName, (payload as { content: unknown }).content);
        return { action: 'set' };
      }
      case 'delete':
        return { action: 'delete', data: { deleted: await this.#memory.delete(tenantId, sessionId, memoryStoreName) } };
    }
  }
}
