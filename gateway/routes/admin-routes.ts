import { Type } from '@sinclair/typebox';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const CreateTenantBody = compileValidator(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      adminEmail: Type.Optional(Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$' })),
      adminPassword: Type.Optional(Type.String({ minLength: 12, maxLength: 1024 })),
    },
    { additionalProperties: false },
  ),
);

/** Operator API (Authorization: Bearer PARLEY_ADMIN_TOKEN; answers 404 when that is unset). */
export const adminRoutes: RouteModule = (deps) => [
  {
    method: 'POST',
    path: '/api/admin/tenants',
    auth: 'admin',
    handler: async ({ body }) => {
      const input = CreateTenantBody(body);
      const { tenant, project, apiKey } = await deps.tenancy.createTenant(input.name);
      let admin: { id: string; email: string } | undefined;
      if (input.adminEmail && input.adminPassword) {
        const user = await deps.tenancy.createUser(tenant.id, input.adminEmail, input.adminPassword, 'admin');
        admin = { id: user.id, email: user.email };
      }
      deps.log.info('tenant created', { tenantId: tenant.id });
      return json({ success: true, tenant, project, apiKey: { id: apiKey.record.id, key: apiKey.key, role: apiKey.record.role }, admin }, 201);
    },
  },
];
