import type { Config } from '../../runtime/index.js';
import type { TenancyStore } from '../../actors/index.js';
import type { HttpResult } from '../http.js';
import { RateLimiter } from './rate-limiter.js';

// One limiter per server, found from its tenancy store: the gateway and the chat routes share it
// without a new field in GatewayDeps.
const limiters = new WeakMap<TenancyStore, RateLimiter>();

/** The server's rate limiter (created on first use from config defaults and tenant overrides). */
export function rateLimiterOf(deps: { config: Config; tenancy: TenancyStore }): RateLimiter {
  let limiter = limiters.get(deps.tenancy);
  if (!limiter) {
    const tenancy = deps.tenancy;
    limiter = new RateLimiter({
      defaults: {
        requestsPerSecond: deps.config.tenantRequestsPerSecond,
        sessionMessagesPerMinute: deps.config.sessionMessagesPerMinute,
        activeSessions: deps.config.tenantActiveSessions,
      },
      source: {
        overrides: (tenantId) => tenancy.tenant(tenantId)?.limits,
        get version() {
          return tenancy.limitsVersion;
        },
      },
      // A session stops counting as active once idle (PARLEY_SESSION_IDLE_MS, default 30 min).
      sessionIdleMs: deps.config.sessionIdleMs,
    });
    limiters.set(deps.tenancy, limiter);
  }
  return limiter;
}

/**
 * Admits one chat message to a session (the session's message rate and the tenant's active
 * sessions); throws RATE_LIMIT_EXCEEDED (429 with retryAfterMs) otherwise. Called by the chat
 * routes once the session id is known.
 */
export function admitChat(deps: { config: Config; tenancy: TenancyStore }, tenantId: string, sessionId: string): void {
  rateLimiterOf(deps).admitMessage(tenantId, sessionId);
}

/** Adds X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds) to an authenticated response. */
export function withRateLimitHeaders(result: HttpResult, remaining: number, resetAt: number): HttpResult {
  // A copy, not a write: a route may return a shared headers object.
  result.headers = { ...result.headers, 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(resetAt) };
  return result;
}
