import { Type } from '@sinclair/typebox';
import { ParleyError, SecretBox } from '../../runtime/index.js';
import { SECRET_ENVIRONMENTS, TOOL_SECRET_LIMITS, ToolSecretStore, type SecretEnvironment } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator, intParam } from '../validate.js';

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const expiresAtSchema = Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()]));
const value = Type.String({ minLength: 1, maxLength: TOOL_SECRET_LIMITS.value });

const CreateSecretBody = compileValidator(
  Type.Object(
    {
      projectId: Type.String({ minLength: 1, maxLength: 128 }),
      toolName: Type.String({ minLength: 1, maxLength: TOOL_SECRET_LIMITS.toolName }),
      secretKey: Type.String({ minLength: 1, maxLength: TOOL_SECRET_LIMITS.secretKey }),
      value,
      environment: Type.Optional(Type.Union(SECRET_ENVIRONMENTS.map((e) => Type.Literal(e)))),
      expiresAt: expiresAtSchema,
    },
    { additionalProperties: false },
  ),
);
const RotateSecretBody = compileValidator(Type.Object({ value, expiresAt: expiresAtSchema }, { additionalProperties: false }));

/** An ISO 8601 date-time with a zone, normalised to UTC; null stays null (no expiry). */
function expiry(raw: string | null | undefined): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const ms = Date.parse(raw);
  if (!ISO_DATE_TIME.test(raw) || Number.isNaN(ms)) {
    throw new ParleyError('VALIDATION_ERROR', 'expiresAt: must be an ISO 8601 date-time with a time zone, e.g. 2030-01-31T00:00:00Z', { field: 'expiresAt' });
  }
  return new Date(ms).toISOString();
}

function environmentParam(query: URLSearchParams): SecretEnvironment | undefined {
  const raw = query.get('environment');
  if (raw === null || raw === '') return undefined;
  if (!(SECRET_ENVIRONMENTS as readonly string[]).includes(raw)) {
    throw new ParleyError('VALIDATION_ERROR', `environment must be one of ${SECRET_ENVIRONMENTS.join(', ')}`, { field: 'environment' });
  }
  return raw as SecretEnvironment;
}

/** Tool secrets: create, list, rotate, delete, and the operator's re-seal (docs/tool-secrets.md). */
export const toolSecretRoutes: RouteModule = (deps) => {
  const secrets = new ToolSecretStore(deps.store, new SecretBox(deps.config.encryptionKeys));
  /** The secret of the caller's tenant whose project still belongs to it, or NOT_FOUND. */
  const requireSecret = (tenantId: string, secretId: string): void => {
    const record = secrets.record(tenantId, secretId);
    if (!record || !deps.tenancy.project(tenantId, record.projectId)) throw new ParleyError('NOT_FOUND', 'Tool secret not found');
  };
  return [
    {
      method: 'POST',
      path: '/api/tool-secrets',
      auth: 'principal',
      permission: 'credential:write',
      handler: async ({ principal, body }) => {
        const input = CreateSecretBody(body);
        const project = deps.tenancy.requireProject(principal.tenantId, input.projectId);
        const secret = await secrets.create(project.tenantId, project.id, {
          toolName: input.toolName, secretKey: input.secretKey, value: input.value,
          environment: input.environment ?? 'dev', expiresAt: expiry(input.expiresAt) ?? null, createdBy: principal.subject,
        });
        return json({ success: true, secret }, 201);
      },
    },
    {
      method: 'GET',
      path: '/api/tool-secrets',
      auth: 'principal',
      permission: 'credential:read',
      handler: ({ principal, req }) => {
        const projectId = req.query.get('projectId');
        if (!projectId) throw new ParleyError('VALIDATION_ERROR', 'projectId: required', { field: 'projectId' });
        const project = deps.tenancy.requireProject(principal.tenantId, projectId);
        const page = intParam(req.query, 'page', 1, 1, 1_000_000);
        const limit = intParam(req.query, 'limit', 50, 1, 200);
        const toolName = req.query.get('toolName') || undefined;
        const result = secrets.list(project.tenantId, project.id, { toolName, environment: environmentParam(req.query), page, limit });
        return json({ success: true, secrets: result.secrets, total: result.total, page, limit });
      },
    },
    {
      method: 'PUT',
      path: '/api/tool-secrets/{secretId}',
      auth: 'principal',
      permission: 'credential:write',
      handler: async ({ principal, params, body }) => {
        // A missing secret is a 404 before the body is judged.
        requireSecret(principal.tenantId, params['secretId']!);
        const input = RotateSecretBody(body);
        const secret = await secrets.rotate(principal.tenantId, params['secretId']!, { value: input.value, expiresAt: expiry(input.expiresAt) });
        return json({ success: true, secret });
      },
    },
    {
      method: 'DELETE',
      path: '/api/tool-secrets/{secretId}',
      auth: 'principal',
      permission: 'credential:write',
      body: 'none',
      handler: async ({ principal, params }) => {
        requireSecret(principal.tenantId, params['secretId']!);
        await secrets.remove(principal.tenantId, params['secretId']!);
        return json({ success: true });
      },
    },
    {
      method: 'POST',
      path: '/api/admin/tool-secrets/reseal',
      auth: 'admin',
      body: 'none',
      handler: async () => {
        const report = await secrets.resealAll();
        deps.log.info('tool secrets re-sealed', { resealed: report.resealed, unchanged: report.unchanged, failed: report.failed.length });
        return json({ success: true, ...report });
      },
    },
  ];
};
