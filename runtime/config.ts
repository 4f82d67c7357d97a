import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

/** Validated configuration, read once from `PARLEY_*` environment variables. */
export interface Config {
  /** TCP port of the HTTP gateway. */
  port: number;
  /** Interface the gateway listens on. */
  host: string;
  /** Folder of the LMDB environment. */
  dataDir: string;
  /** Worker threads hosting actors; 0 hosts them on the main thread. */
  workers: number;
  /** Fixed number of shards actors are hashed into. */
  shards: number;
  logLevel: LogLevel;
  /** HS256 secret for user JWTs; generated and persisted on first start when absent. */
  jwtSecret: string | undefined;
  /** Lifetime of a login JWT, in seconds. */
  jwtTtlSeconds: number;
  /** API key to create on first start instead of a random one (must start with prl_). */
  bootstrapApiKey: string | undefined;
  /** Operator token for /api/admin/*; the admin API is off when unset. */
  adminToken: string | undefined;
  /** Default deadline of an ask between threads, in ms. */
  askTimeoutMs: number;
  /** An actor idle this long is passivated (dropped from memory; its state stays in LMDB). */
  actorIdleMs: number;
  /** Messages an actor may have waiting before new ones are refused with QUEUE_FULL. */
  mailboxLimit: number;
  /** `commit`: an acknowledged write survives a crash of the process; `flush`: also a crash of the machine. */
  durability: 'commit' | 'flush';
  /** Interval of the `: heartbeat` comment on SSE streams, in ms. */
  sseHeartbeatMs: number;
  /** Log one line per HTTP request. */
  accessLog: boolean;
  /**
   * AES-256-GCM keys for secrets at rest, from PARLEY_ENCRYPTION_KEYS = "kid:base64key,…": the
   * first encrypts, all decrypt (so the master key can rotate). Empty: encrypted features answer 503.
   */
  encryptionKeys: { id: string; key: Buffer }[];
  /** Default requests per second per tenant (overridable per tenant). */
  tenantRequestsPerSecond: number;
  /** Default messages per minute per session (overridable per tenant). */
  sessionMessagesPerMinute: number;
  /** Default concurrent active sessions per tenant (overridable per tenant). */
  tenantActiveSessions: number;
  /** A session with no message for this long is idle: on a retired deployment it may not continue. */
  sessionIdleMs: number;
  /** Address external systems use to reach this server (callback URLs of ASYNC tools). */
  publicUrl: string;
  /** HTTP tools may call private, loopback and link-local addresses (local development and tests only). */
  toolsAllowPrivateNetwork: boolean;
  /** HS256 secret of sandbox JWTs (memory endpoint); unset: generated and persisted; 'off': sandbox auth disabled (503). */
  sandboxJwtSecret: string | undefined;
  /** Analytics events older than this many days are deleted (PARLEY_ANALYTICS_RETENTION_DAYS). */
  analyticsRetentionDays: number;
}

/** Log levels from most to least verbose. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Thrown by loadConfig with every problem found, one per line. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration; throws ConfigError naming each bad variable and its rule. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  };
  const str = (name: string): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  };

  const bootstrapApiKey = str('PARLEY_BOOTSTRAP_API_KEY');
  if (bootstrapApiKey !== undefined && !/^prl_[A-Za-z0-9_-]{16,200}$/.test(bootstrapApiKey)) {
    problems.push('PARLEY_BOOTSTRAP_API_KEY must start with prl_ followed by 16 to 200 letters, digits, _ or -');
  }
  const jwtSecret = str('PARLEY_JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    problems.push('PARLEY_JWT_SECRET must be at least 32 characters long');
  }
  const sandboxJwtSecret = str('PARLEY_SANDBOX_JWT_SECRET');
  if (sandboxJwtSecret !== undefined && sandboxJwtSecret !== 'off' && sandboxJwtSecret.length < 32) {
    problems.push('PARLEY_SANDBOX_JWT_SECRET must be "off" or at least 32 characters long');
  }
  const adminToken = str('PARLEY_ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push('PARLEY_ADMIN_TOKEN must be at least 16 characters long');
  }

  const encryptionKeys: { id: string; key: Buffer }[] = [];
  const keysText = str('PARLEY_ENCRYPTION_KEYS');
  if (keysText !== undefined) {
    for (const item of keysText.split(',')) {
      const m = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=_-]+)$/.exec(item.trim());
      const key = m ? Buffer.from(m[2]!, 'base64') : undefined;
      if (!m || !key || key.length !== 32) {
        problems.push('PARLEY_ENCRYPTION_KEYS must be a comma list of kid:base64key, each key 32 bytes (e.g. k1:$(openssl rand -base64 32))');
        break;
      }
      if (encryptionKeys.some((k) => k.id === m[1])) problems.push(`PARLEY_ENCRYPTION_KEYS names the key id ${m[1]} twice`);
      encryptionKeys.push({ id: m[1]!, key });
    }
  }

  const publicUrl = str('PARLEY_PUBLIC_URL');
  if (publicUrl !== undefined && !/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(publicUrl)) {
    problems.push('PARLEY_PUBLIC_URL must be an http(s) URL without query or fragment, e.g. https://parley.example.com');
  }

  const config: Config = {
    port: int('PARLEY_PORT', 8080, 0, 65535),
    host: str('PARLEY_HOST') ?? '127.0.0.1',
    dataDir: resolve(str('PARLEY_DATA_DIR') ?? './data'),
    workers: int('PARLEY_WORKERS', availableParallelism(), 0, 256),
    shards: int('PARLEY_SHARDS', 256, 1, 65536),
    logLevel: oneOf<LogLevel>('PARLEY_LOG_LEVEL', 'info', ['debug', 'info', 'warn', 'error', 'silent']),
    jwtSecret,
    jwtTtlSeconds: int('PARLEY_JWT_TTL_SECONDS', 3600, 60, 30 * 86400),
    bootstrapApiKey,
    adminToken,
    askTimeoutMs: int('PARLEY_ASK_TIMEOUT_MS', 10_000, 10, 600_000),
    actorIdleMs: int('PARLEY_ACTOR_IDLE_MS', 300_000, 10, 86_400_000),
    mailboxLimit: int('PARLEY_MAILBOX_LIMIT', 1000, 1, 1_000_000),
    durability: oneOf('PARLEY_DURABILITY', 'commit', ['commit', 'flush'] as const),
    sseHeartbeatMs: int('PARLEY_SSE_HEARTBEAT_MS', 15_000, 10, 600_000),
    accessLog: oneOf('PARLEY_ACCESS_LOG', 'false', ['true', 'false'] as const) === 'true',
    encryptionKeys,
    tenantRequestsPerSecond: int('PARLEY_TENANT_RPS', 200, 1, 1_000_000),
    sessionMessagesPerMinute: int('PARLEY_SESSION_MESSAGES_PER_MINUTE', 60, 1, 1_000_000),
    tenantActiveSessions: int('PARLEY_TENANT_ACTIVE_SESSIONS', 1000, 1, 10_000_000),
    sessionIdleMs: int('PARLEY_SESSION_IDLE_MS', 1_800_000, 10, 30 * 86_400_000),
    publicUrl: (publicUrl ?? `http://${str('PARLEY_HOST') ?? '127.0.0.1'}:${env['PARLEY_PORT'] || 8080}`).replace(/\/+$/, ''),
    toolsAllowPrivateNetwork: oneOf('PARLEY_TOOLS_ALLOW_PRIVATE', 'false', ['true', 'false'] as const) === 'true',
    sandboxJwtSecret,
    analyticsRetentionDays: int('PARLEY_ANALYTICS_RETENTION_DAYS', 30, 1, 3650),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
