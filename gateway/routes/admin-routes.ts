import { Type } from '@sinclair/typebox';
import { ParleyError } from '../../runtime/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { rateLimiterOf } from '../limits/gateway-limits.js';
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

const LimitsBody = compileValidator(
  Type.Object(
    {
      requestsPerSecond: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      sessionMessagesPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      activeSessions: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
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
  {
    method: 'GET',
    path: '/api/admin/tenants/{tenantId}/limits',
    auth: 'admin',
    body: 'none',
    handler: ({ params }) => {
      const tenant = deps.tenancy.tenant(params['tenantId']!);
      if (!tenant) throw new ParleyError('NOT_FOUND', 'Tenant not found');
      return json({ success: true, tenantId: tenant.id, limits: tenant.limits ?? {}, effective: rateLimiterOf(deps).limitsOf(tenant.id) });
    },
  },
  {
    // Replaces the tenant's overrides (absent fields fall back to the PARLEY_* defaults); the
    // limiter sees the change on the tenant's next request.
    method: 'PUT',
    path: '/api/admin/tenants/{tenantId}/limits',
    auth: 'admin',
    handler: async ({ params, body }) => {
      const limits = LimitsBody(body);
      const tenant = await deps.tenancy.setTenantLimits(params['tenantId']!, limits);
      if (!tenant) throw new ParleyError('NOT_FOUND', 'Tenant not found');
      deps.log.info('tenant limits set', { tenantId: tenant.id, limits });
      return json({ success: true, tenantId: tenant.id, limits, effective: rateLimiterOf(deps).limitsOf(tenant.id) });
    },
  },
];
