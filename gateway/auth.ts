import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ParleyError, secretsEqual } from '../runtime/index.js';
import { API_KEY_PREFIX, ROLE_PERMISSIONS, isRole, type Principal, type TenancyStore, type User } from '../actors/index.js';

/** Issuer and audience of Parley's user JWTs; both are checked on every request. */
export const JWT_ISSUER = 'parley';
export const JWT_AUDIENCE = 'parley-api';
// Pinned: tokens signed with any other algorithm (including "none") are rejected.
const JWT_ALGORITHMS = ['HS256'];

// Authenticated API keys, by the presented key: skips a hash and two reads per request.
const KEY_CACHE_MAX = 10_000;
const KEY_CACHE_TTL_MS = 60_000;

const unauthorized = (message = 'Missing or invalid credentials'): ParleyError => new ParleyError('UNAUTHORIZED', message);

/** Turns the credentials of a request into a Principal, or rejects with UNAUTHORIZED. */
export class Authenticator {
  readonly #tenancy: TenancyStore;
  readonly #key: Uint8Array;
  readonly #ttlSeconds: number;
  readonly #adminToken: string | undefined;
  readonly #keyCache = new Map<string, { principal: Principal; expires: number }>();
  #keyCacheRevocations = 0;

  constructor(options: { tenancy: TenancyStore; jwtSecret: string; jwtTtlSeconds: number; adminToken: string | undefined }) {
    this.#tenancy = options.tenancy;
    this.#key = new TextEncoder().encode(options.jwtSecret);
    this.#ttlSeconds = options.jwtTtlSeconds;
    this.#adminToken = options.adminToken;
  }

  /** True when the operator API is enabled (PARLEY_ADMIN_TOKEN set). */
  get adminEnabled(): boolean {
    return this.#adminToken !== undefined;
  }

  /** Authenticates `Authorization: Bearer <JWT | prl_ key>` or `X-API-Key: prl_…`. */
  async authenticate(headers: Record<string, string>): Promise<Principal> {
    const apiKeyHeader = headers['x-api-key'];
    const authorization = headers['authorization'];
    if (apiKeyHeader !== undefined && authorization !== undefined) throw unauthorized('Send one credential, not both Authorization and X-API-Key');
    if (apiKeyHeader !== undefined) return this.#apiKey(apiKeyHeader);
    if (authorization === undefined) throw unauthorized('Missing credentials: send Authorization: Bearer <token> or X-API-Key');
    const match = /^Bearer +(\S+)$/i.exec(authorization);
    if (!match) throw unauthorized('Authorization must be "Bearer <token>"');
    const token = match[1]!;
    return token.startsWith(API_KEY_PREFIX) ? this.#apiKey(token) : this.#jwt(token);
  }

  /** Checks the operator token in constant time. */
  authenticateAdmin(headers: Record<string, string>): void {
    const match = /^Bearer +(\S+)$/i.exec(headers['authorization'] ?? '');
    if (!this.#adminToken || !match || !secretsEqual(match[1]!, this.#adminToken)) throw unauthorized();
  }

  /** Issues a login JWT for a user. */
  async issueToken(user: User): Promise<{ token: string; expiresAt: string }> {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + this.#ttlSeconds;
    const token = await new SignJWT({ tid: user.tenantId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .sign(this.#key);
    return { token, expiresAt: new Date(exp * 1000).toISOString() };
  }

  #apiKey(key: string): Principal {
    const now = Date.now();
    if (this.#keyCacheRevocations !== this.#tenancy.revocations) {
      this.#keyCache.clear();
      this.#keyCacheRevocations = this.#tenancy.revocations;
    }
    const hit = this.#keyCache.get(key);
    if (hit && hit.expires > now) return hit.principal;
    const record = this.#tenancy.apiKeyBySecret(key.trim());
    if (!record) throw unauthorized('Invalid API key');
    const principal: Principal = { tenantId: record.tenantId, subject: `apikey:${record.id}`, kind: 'apikey', role: record.role, permissions: new Set(record.permissions) };
    if (this.#keyCache.size >= KEY_CACHE_MAX) this.#keyCache.clear();
    this.#keyCache.set(key, { principal, expires: now + KEY_CACHE_TTL_MS });
    return principal;
  }

  async #jwt(token: string): Promise<Principal> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.#key, { algorithms: JWT_ALGORITHMS, issuer: JWT_ISSUER, audience: JWT_AUDIENCE, requiredClaims: ['exp', 'sub'] }));
    } catch (err) {
      throw unauthorized(err instanceof joseErrors.JWTExpired ? 'Token expired' : 'Invalid token');
    }
    const tenantId = payload['tid'];
    if (typeof tenantId !== 'string' || typeof payload.sub !== 'string') throw unauthorized('Invalid token');
    // Role and existence come from the store, not the token: a removed user loses access at once.
    const user = this.#tenancy.user(tenantId, payload.sub);
    if (!user || !isRole(user.role)) throw unauthorized('Invalid token');
    return { tenantId, subject: user.id, kind: 'user', role: user.role, permissions: new Set(ROLE_PERMISSIONS[user.role]) };
  }
}
