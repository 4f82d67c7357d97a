/** Every permission Parley checks. The spec names the first eleven; the rest are ours (docs/permissions.md). */
export const PERMISSIONS = [
  'session:read',
  'agent:read',
  'agent:write',
  'deployment:create',
  'credential:write',
  'credential:read',
  'project:export',
  'channel:read',
  'channel:create',
  'channel:update',
  'channel:delete',
  'project:read',
  'project:write',
  'deployment:read',
  'contact:read',
  'contact:write',
  'chat:write',
  'apikey:manage',
  'user:manage',
  'analytics:write',
] as const;

/** One permission name. */
export type Permission = (typeof PERMISSIONS)[number];

/** Roles a user or API key can hold. */
export const ROLES = ['admin', 'developer', 'viewer', 'chat'] as const;

/** One role name. */
export type Role = (typeof ROLES)[number];

const ALL: readonly Permission[] = PERMISSIONS;

/** The permission set of each role; the table in docs/permissions.md mirrors this. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  admin: ALL,
  developer: ALL.filter((p) => p !== 'apikey:manage' && p !== 'user:manage'),
  viewer: ['session:read', 'agent:read', 'project:read', 'deployment:read', 'channel:read', 'contact:read'],
  chat: ['chat:write', 'agent:read', 'project:read'],
};

const PERMISSION_SET: ReadonlySet<string> = new Set(PERMISSIONS);

/** True for a known permission name. */
export function isPermission(x: unknown): x is Permission {
  return typeof x === 'string' && PERMISSION_SET.has(x);
}

/** True for a known role name. */
export function isRole(x: unknown): x is Role {
  return typeof x === 'string' && (ROLES as readonly string[]).includes(x);
}
