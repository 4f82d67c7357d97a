import { Type } from '@sinclair/typebox';
import { SecretBox } from '../../runtime/index.js';
import { ModelSettingsStore } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';
import { compileValidator } from '../validate.js';

const Timeouts = Type.Object(
  {
    totalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
    firstByteMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
  },
  { additionalProperties: false },
);
const Provider = Type.Object(
  {
    kind: Type.Union([Type.Literal('openai'), Type.Literal('anthropic')]),
    baseUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    apiKey: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4000 }), Type.Null()])),
    defaultModel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    timeouts: Type.Optional(Timeouts),
  },
  { additionalProperties: false },
);
const PutModelSettingsBody = compileValidator(
  Type.Object(
    {
      providers: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), Provider, { additionalProperties: false }),
      timeouts: Type.Optional(Timeouts),
    },
    { additionalProperties: false },
  ),
);

/** A project's model providers (docs/models.md). Keys go in, never out. */
export const modelSettingsRoutes: RouteModule = (deps) => {
  const settings = new ModelSettingsStore(deps.store, new SecretBox(deps.config.encryptionKeys));
  return [
    {
      method: 'GET',
      path: '/api/projects/{projectId}/model-settings',
      auth: 'principal',
      permission: 'agent:read',
      handler: ({ principal, params }) => {
        const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
        return json({ success: true, modelSettings: settings.view(project.tenantId, project.id) });
      },
    },
    {
      method: 'PUT',
      path: '/api/projects/{projectId}/model-settings',
      auth: 'principal',
      permission: 'agent:write',
      bodyLimit: 64 * 1024,
      handler: async ({ principal, params, body }) => {
        const project = deps.tenancy.requireProject(principal.tenantId, params['projectId']!);
        const input = PutModelSettingsBody(body);
        return json({ success: true, modelSettings: await settings.put(project.tenantId, project.id, input) });
      },
    },
  ];
};
