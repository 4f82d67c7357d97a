import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ParleyError, randomToken, type Config, type Store } from '../../runtime/index.js';

/** Audience of sandbox JWTs: user JWTs (audience parley-api) are refused here, and these there. */
export const SANDBOX_AUDIENCE = 'parley-sandbox';
/** Issuer of sandbox JWTs. */
export const SANDBOX_ISSUER = 'parley';
/** Lifetime of a sandbox JWT, in seconds: longer than any CODE tool call may run. */
export const SANDBOX_TOKEN_TTL_SECONDS = 300;

/** What a sandbox JWT says: its session (spec: "carries sessionId"), tenant and project. */
export interface SandboxClaims {
  tenantId: string;
  projectId: string;
  sessionId: string;
}

/** A verified token's claims; sessionId may be absent (the memory endpoint answers 400 then). */
export type VerifiedSandboxClaims = { tenantId: string; projectId: string | undefined; sessionId: string | undefined };

const ALGORITHMS = ['HS256'];
const SECRET_KEY = ['secret', 'sandbox-jwt'] as const;

/**
 * Issues and verifies sandbox JWTs (HS256, a secret separate from user JWTs: configured with
 * PARLEY_SANDBOX_JWT_SECRET, or generated once and kept in the store). With the secret set to
 * "off" sandbox auth is disabled: the memory endpoint answers 503 and ctx.memory fails.
 */
export class SandboxTokens {
  readonly #store: Store;
  readonly #configured: string | undefined;
  #key: Promise<Uint8Array> | undefined;

  constructor(store: Store, config: Pick<Config, 'sandboxJwtSecret'>) {
    this.#store = store;
    this.#configured = config.sandboxJwtSecret;
  }

  /** False when sandbox auth is turned off. */
  get enabled(): boolean {
    return this.#configured !== 'off';
  }

  /** A short-lived token for one session's sandboxed code. */
  async issue(claims: SandboxClaims): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ tenantId: claims.tenantId, projectId: claims.projectId, sessionId: claims.sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(SANDBOX_ISSUER)
      .setAudience(SANDBOX_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + SANDBOX_TOKEN_TTL_SECONDS)
      .sign(await this.#secret());
  }

  /** The claims of a valid token; UNAUTHORIZED when invalid or expired, SERVICE_UNAVAILABLE when auth is off. */
  async verify(token: string): Promise<VerifiedSandboxClaims> {
    const key = await this.#secret();
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, { algorithms: ALGORITHMS, issuer: SANDBOX_ISSUER, audience: SANDBOX_AUDIENCE, requiredClaims: ['exp'] }));
    } catch (err) {
      throw new ParleyError('UNAUTHORIZED', err instanceof joseErrors.JWTExpired ? 'Sandbox token expired' : 'Invalid sandbox token');
    }
    const { tenantId, projectId, sessionId } = payload as Record<string, unknown>;
    if (typeof tenantId !== 'string' || tenantId === '') throw new ParleyError('UNAUTHORIZED', 'Invalid sandbox token');
    return {
      tenantId,
      projectId: typeof projectId === 'string' ? projectId : undefined,
      sessionId: typeof sessionId === 'string' && sessionId !== '' ? sessionId : undefined,
    };
  }

  #secret(): Promise<Uint8Array> {
    if (!this.enabled) return Promise.reject(new ParleyError('SERVICE_UNAVAILABLE', 'Sandbox auth is not configured'));
    this.#key ??= (this.#configured !== undefined ? Promise.resolve(this.#configured) : storedSecret(this.#store)).then((s) => new TextEncoder().encode(s));
    return this.#key;
  }
}

// Get-or-create in one write transaction: every thread opening the store at once agrees on one secret.
async function storedSecret(store: Store): Promise<string> {
  const system = store.collection<string>('system');
  const existing = system.get(SECRET_KEY);
  if (existing !== undefined) return existing;
  return store.transaction(() => {
    const again = system.get(SECRET_KEY);
    if (again !== undefined) return again;
    const generated = randomToken(48);
    system.putSync(SECRET_KEY, generated);
    return generated;
  });
}
