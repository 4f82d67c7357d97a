import { ParleyError } from '../../runtime/index.js';

/** The three limits in force for one tenant (defaults from config, overridden per tenant). */
export interface EffectiveLimits {
  requestsPerSecond: number;
  sessionMessagesPerMinute: number;
  activeSessions: number;
}

/** How the limiter learns a tenant's overrides, and when they changed. */
export interface LimitsSource {
  /** The tenant's overrides (fields absent: the default). */
  overrides(tenantId: string): Partial<EffectiveLimits> | undefined;
  /** Bumped on every change of any tenant's overrides. */
  readonly version: number;
}

/** Options of a RateLimiter. */
export interface RateLimiterOptions {
  defaults: EffectiveLimits;
  source: LimitsSource;
  /** A session with no message for this long stops counting as active. */
  sessionIdleMs: number;
  /** Milliseconds since the epoch (tests pass a fake clock). */
  clock?: () => number;
  /** Tenants tracked before idle ones are swept (default 10,000). */
  maxTenants?: number;
}

const MINUTE_MS = 60_000;
const EPSILON = 1e-6;

/** The message count of one session over a sliding minute, and when it last spoke. */
interface SessionWindow {
  windowStart: number;
  previous: number;
  current: number;
  lastMessageAt: number;
}

/** Everything kept per tenant: its token bucket and its active sessions. */
class TenantState {
  limits: EffectiveLimits;
  version: number;
  tokens: number;
  refilledAt: number;
  /** Active sessions, oldest activity first (a message moves its session to the end). */
  readonly sessions = new Map<string, SessionWindow>();

  constructor(limits: EffectiveLimits, version: number, now: number) {
    this.limits = limits;
    this.version = version;
    this.tokens = limits.requestsPerSecond;
    this.refilledAt = now;
  }
}

/**
 * Per-tenant request rate (token bucket, burst of one second's worth), per-session message rate
 * (sliding one-minute window) and concurrent active sessions per tenant. Everything is refilled or
 * expired lazily when the tenant is next seen: no timers, and the hot path allocates nothing.
 */
export class RateLimiter {
  readonly #defaults: EffectiveLimits;
  readonly #source: LimitsSource;
  readonly #idleMs: number;
  readonly #retentionMs: number;
  readonly #clock: () => number;
  readonly #maxTenants: number;
  readonly #tenants = new Map<string, TenantState>();
  #sweepAt: number;

  /** Requests left in the bucket after the last take(), for X-RateLimit-Remaining. */
  remaining = 0;
  /** Unix time (seconds) at which the last take()'s bucket is full again, for X-RateLimit-Reset. */
  resetAt = 0;

  constructor(options: RateLimiterOptions) {
    this.#defaults = options.defaults;
    this.#source = options.source;
    this.#idleMs = options.sessionIdleMs;
    this.#retentionMs = Math.max(options.sessionIdleMs, 2 * MINUTE_MS);
    this.#clock = options.clock ?? Date.now;
    this.#maxTenants = options.maxTenants ?? 10_000;
    this.#sweepAt = this.#maxTenants;
  }

  /** The limits in force for a tenant now. */
  limitsOf(tenantId: string): EffectiveLimits {
    return this.#state(tenantId, this.#clock()).limits;
  }

  /**
   * Takes one request from the tenant's bucket and sets `remaining` and `resetAt`; throws
   * RATE_LIMIT_EXCEEDED with details.retryAfterMs when the bucket is empty.
   */
  take(tenantId: string): void {
    const now = this.#clock();
    const state = this.#state(tenantId, now);
    const rate = state.limits.requestsPerSecond;
    const elapsed = now - state.refilledAt;
    if (elapsed > 0) {
      state.tokens = Math.min(rate, state.tokens + (elapsed * rate) / 1000);
      state.refilledAt = now;
    }
    // EPSILON absorbs float error in the refill (0.2 + 0.8 tokens must make one).
    const allowed = state.tokens >= 1 - EPSILON;
    if (allowed) state.tokens = Math.max(0, state.tokens - 1);
    this.remaining = Math.floor(state.tokens + EPSILON);
    this.resetAt = Math.ceil((now + ((rate - state.tokens) * 1000) / rate) / 1000);
    if (!allowed) {
      const retryAfterMs = Math.max(1, Math.ceil(((1 - state.tokens) * 1000) / rate - EPSILON));
      throw new ParleyError('RATE_LIMIT_EXCEEDED', `Tenant request rate limit exceeded (${rate} per second)`, { limit: 'requestsPerSecond', retryAfterMs });
    }
  }

  /**
   * Admits one chat message to a session: refuses with RATE_LIMIT_EXCEEDED when the session sent
   * its messages-per-minute already, or when it is not active and the tenant has its maximum of
   * active sessions. An admitted message makes the session active for the idle window.
   */
  admitMessage(tenantId: string, sessionId: string): void {
    const now = this.#clock();
    const state = this.#state(tenantId, now);
    const sessions = state.sessions;
    this.#expireIdle(sessions, now);
    let session = sessions.get(sessionId);
    if (!session || now - session.lastMessageAt >= this.#idleMs) {
      // Entries idle less than the retention but more than the idle window sit at the front:
      // they keep their message window but hold no active slot.
      let idle = 0;
      let oldestActive: SessionWindow | undefined;
      for (const s of sessions.values()) {
        if (now - s.lastMessageAt < this.#idleMs) {
          oldestActive = s;
          break;
        }
        idle++;
      }
      const max = state.limits.activeSessions;
      if (sessions.size - idle >= max && oldestActive) {
        const retryAfterMs = Math.max(1, oldestActive.lastMessageAt + this.#idleMs - now);
        throw new ParleyError('RATE_LIMIT_EXCEEDED', `Too many active sessions for this tenant (${max})`, { limit: 'activeSessions', retryAfterMs });
      }
      session ??= { windowStart: now, previous: 0, current: 0, lastMessageAt: now };
    }
    const retryAfterMs = messageWait(session, state.limits.sessionMessagesPerMinute, now);
    if (retryAfterMs > 0) {
      throw new ParleyError('RATE_LIMIT_EXCEEDED', `Session message rate limit exceeded (${state.limits.sessionMessagesPerMinute} per minute)`, { limit: 'sessionMessagesPerMinute', retryAfterMs });
    }
    session.current++;
    session.lastMessageAt = now;
    sessions.delete(sessionId);
    sessions.set(sessionId, session);
  }

  /** Number of tenants tracked (for tests of the sweep). */
  get trackedTenants(): number {
    return this.#tenants.size;
  }

  #state(tenantId: string, now: number): TenantState {
    const version = this.#source.version;
    let state = this.#tenants.get(tenantId);
    if (state) {
      if (state.version !== version) {
        state.limits = this.#resolve(tenantId);
        state.version = version;
        state.tokens = Math.min(state.tokens, state.limits.requestsPerSecond);
      }
      return state;
    }
    if (this.#tenants.size >= this.#sweepAt) this.#sweep(now);
    state = new TenantState(this.#resolve(tenantId), version, now);
    this.#tenants.set(tenantId, state);
    return state;
  }

  /**
   * Drops sessions past the retention (the idle window, but at least the two minutes the message
   * window looks back). Sessions are ordered by last message, so those are at the front.
   */
  #expireIdle(sessions: Map<string, SessionWindow>, now: number): void {
    for (const [id, s] of sessions) {
      if (now - s.lastMessageAt < this.#retentionMs) break;
      sessions.delete(id);
    }
  }

  #resolve(tenantId: string): EffectiveLimits {
    const o = this.#source.overrides(tenantId);
    if (!o) return this.#defaults;
    return {
      requestsPerSecond: o.requestsPerSecond ?? this.#defaults.requestsPerSecond,
      sessionMessagesPerMinute: o.sessionMessagesPerMinute ?? this.#defaults.sessionMessagesPerMinute,
      activeSessions: o.activeSessions ?? this.#defaults.activeSessions,
    };
  }

  /** Drops tenants whose state equals a fresh one: a full bucket and no active session. */
  #sweep(now: number): void {
    for (const [id, state] of this.#tenants) {
      const full = state.tokens + ((now - state.refilledAt) * state.limits.requestsPerSecond) / 1000 >= state.limits.requestsPerSecond;
      this.#expireIdle(state.sessions, now);
      if (full && state.sessions.size === 0) this.#tenants.delete(id);
    }
    // Tenants are authenticated ids, so the map is bounded by the tenants that exist; sweeping
    // again only after it doubled keeps the cost amortised when most of them are busy.
    this.#sweepAt = Math.max(this.#maxTenants, this.#tenants.size * 2);
  }
}

/**
 * Milliseconds until one more message fits the sliding minute (0: it fits now). The estimate is
 * the classic two-window one: the previous minute's count weighted by how much of it still
 * overlaps the last 60 s, plus the current minute's count.
 */
function messageWait(s: SessionWindow, limit: number, now: number): number {
  const elapsedWindows = Math.floor((now - s.windowStart) / MINUTE_MS);
  if (elapsedWindows > 0) {
    s.previous = elapsedWindows === 1 ? s.current : 0;
    s.current = 0;
    s.windowStart += elapsedWindows * MINUTE_MS;
  }
  const into = now - s.windowStart;
  const room = limit - 1 - s.current;
  if (room >= 0 && s.previous * (1 - into / MINUTE_MS) <= room + EPSILON) return 0;
  if (room >= 0) {
    // Within this window, once the previous one's weight has decayed to `room`.
    return Math.max(1, Math.ceil(MINUTE_MS * (1 - room / s.previous) - into - EPSILON));
  }
  // Not before the next window, and then once this window's weight decays to limit - 1.
  const decay = MINUTE_MS * (1 - (limit - 1) / s.current);
  return Math.max(1, Math.ceil(MINUTE_MS - into + Math.max(0, decay) - EPSILON));
}
