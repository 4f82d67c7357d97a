import { Type } from '@sinclair/typebox';
import { ROLES, type User } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const CreateUserBody = compileValidator(
  Type.Object(
    {
      email: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' }),
      password: Type.String({ minLength: 12, maxLength: 1024 }),
      role: Type.Union(ROLES.map((r) => Type.Literal(r))),
    },
    { additionalProperties: false },
  ),
);

const userView = (u: User): Record<string, unknown> => ({ id: u.id, email: u.email, role: u.role, createdAt: u.createdAt });

/** Users of the caller's tenant (docs/auth.md). */
export const userRoutes: RouteModule = (deps) => [
  {
    method: 'GET',
    path: '/api/users',
    auth: 'principal',
    permission: 'user:manage',
    handler: ({ principal }) => json({ success: true, users: deps.tenancy.listUsers(principal.tenantId).map(userView) }),
  },
  {
    method: 'POST',
    path: '/api/users',
    auth: 'principal',
    permission: 'user:manage',
    handler: async ({ principal, body }) => {
      const input = CreateUserBody(body);
      const user = await deps.tenancy.createUser(principal.tenantId, input.email, input.password, input.role);
      return json({ success: true, user: userView(user) }, 201);
    },
  },
];
