import { MemoryBridges, MemoryService, MemoryStore, SandboxTokens } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';

// A memory body is a name and one value (at most 64 KB of JSON) plus the envelope around them.
const MEMORY_BODY_LIMIT = 80 * 1024;

/**
 * POST /api/v1/memory, authenticated by a sandbox JWT (not a user credential), so the route is
 * auth 'none' for the gateway and MemoryService checks the token itself.
 */
export const memoryRoutes: RouteModule = (deps) => {
  const tokens = new SandboxTokens(deps.store, deps.config);
  const service = new MemoryService({ tokens, bridges: new MemoryBridges(deps.sessions), memory: new MemoryStore(deps.store) });
  return [
    {
      method: 'POST',
      path: '/api/v1/memory',
      auth: 'none',
      bodyLimit: MEMORY_BODY_LIMIT,
      handler: async ({ req, body }) => {
        const answer = await service.handle(req.headers['authorization'], body);
        return answer.action === 'set' ? json({ success: true }) : json({ success: true, data: answer.data });
      },
    },
  ];
};
