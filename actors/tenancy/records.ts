import type { Permission, Role } from './permissions.js';

/** A tenant: the unit of isolation. Every other record carries its id. */
export interface Tenant {
  id: string;
  name: string;
  createdAt: string;
  /** Operator overrides of the PARLEY_* rate-limit defaults (docs/limits.md); absent fields use the default. */
  limits?: TenantLimits;
}

/** Per-tenant rate-limit overrides, set through PUT /api/admin/tenants/{tenantId}/limits. */
export interface TenantLimits {
  requestsPerSecond?: number;
  sessionMessagesPerMinute?: number;
  activeSessions?: number;
}

/** A project groups agents, sessions and deployments of one tenant. */
export interface Project {
  id: string;
  tenantId: string;
  name: string;
  slug: string;
  /** Agent that answers chats that name no agent (see docs/chat.md). */
  defaultAgent: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A person who logs in with email and password. */
export interface User {
  id: string;
  tenantId: string;
  email: string;
  /** scrypt hash (runtime/crypto.ts); never returned. */
  passwordHash: string;
  role: Role;
  createdAt: string;
}

/** A long-lived API key. Only its SHA-256 is stored; the key itself is shown once. */
export interface ApiKey {
  id: string;
  tenantId: string;
  name: string;
  /** First characters of the key, to recognise it in lists. */
  prefix: string;
  hash: string;
  role: Role;
  /** Effective permissions: the role's, narrowed to a subset when the key was created with one. */
  permissions: Permission[];
  createdAt: string;
  createdBy: string | null;
}

/** Who is calling, after authentication. */
export interface Principal {
  tenantId: string;
  /** User id (JWT) or `apikey:<id>`. */
  subject: string;
  kind: 'user' | 'apikey';
  role: Role;
  permissions: ReadonlySet<Permission>;
}
