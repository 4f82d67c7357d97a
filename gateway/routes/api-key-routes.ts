import { Type } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import { PERMISSIONS, ROLES, ROLE_PERMISSIONS, type ApiKey, type Permission, type Role } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const CreateKeyBody = compileValidator(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
      permissions: Type.Optional(Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p))), { maxItems: PERMISSIONS.length, uniqueItems: true })),
    },
    { additionalProperties: false },
  ),
);

/** The API form of a key record: never the hash, never the key. */
function keyView(k: ApiKey): Record<string, unknown> {
  return { id: k.id, name: k.name, prefix: k.prefix, role: k.role, permissions: k.permissions, createdAt: k.createdAt, createdBy: k.createdBy };
}

/** API keys of the caller's tenant; the key is shown once, at creation (docs/auth.md). */
export const apiKeyRoutes: RouteModule = (deps) => [
  {
    method: 'GET',
    path: '/api/api-keys',
    auth: 'principal',
    permission: 'apikey:manage',
    handler: ({ principal }) => json({ success: true, apiKeys: deps.tenancy.listApiKeys(principal.tenantId).map(keyView) }),
  },
  {
    method: 'POST',
    path: '/api/api-keys',
    auth: 'principal',
    permission: 'apikey:manage',
    handler: async ({ principal, body }) => {
      const input = CreateKeyBody(body);
      const role: Role = input.role ?? 'developer';
      const requested = (input.permissions ?? [...ROLE_PERMISSIONS[role]]) as Permission[];
      // A key can never hold more than its role, nor more than the caller who creates it.
      const beyond = requested.filter((p) => !ROLE_PERMISSIONS[role].includes(p) || !principal.permissions.has(p));
      if (beyond.length > 0) {
        throw new ParleyError('FORBIDDEN', `Cannot grant ${beyond.join(', ')} with role ${role} from this credential`, { permissions: beyond });
      }
      const created = await deps.tenancy.createApiKey(principal.tenantId, input.name, role, requested, principal.subject);
      return json({ success: true, apiKey: keyView(created.record), key: created.key }, 201);
    },
  },
  {
    method: 'DELETE',
    path: '/api/api-keys/{keyId}',
    auth: 'principal',
    permission: 'apikey:manage',
    body: 'none',
    handler: async ({ principal, params }) => {
      if (!(await deps.tenancy.deleteApiKey(principal.tenantId, params['keyId']!))) throw new ParleyError('NOT_FOUND', 'API key not found');
      return json({ success: true });
    },
  },
];
