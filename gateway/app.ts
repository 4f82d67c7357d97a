import { ParleyError, toErrorValue, type ActorRef, type AskOptions, type Config, type Logger, type Store } from '../runtime/index.js';
import type { AgentStore, EventSink, SessionStore, TenancyStore } from '../actors/index.js';
import type { Authenticator } from './auth.js';
import { errorResult } from './error-status.js';
import type { HttpRequest, HttpResult, RouteContext } from './http.js';
import { parseJsonBody } from './json-body.js';
import { rateLimiterOf, withRateLimitHeaders } from './limits/gateway-limits.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import { Router, type Route, type RouteMatch } from './router.js';

/** What the gateway needs of the actor system. */
export interface ActorGateway {
  ask<T>(ref: ActorRef, message: unknown, options?: AskOptions): Promise<T>;
  readonly ready: boolean;
}

/** Everything route modules may use. */
export interface GatewayDeps {
  config: Config;
  log: Logger;
  store: Store;
  tenancy: TenancyStore;
  agents: AgentStore;
  sessions: SessionStore;
  actors: ActorGateway;
  auth: Authenticator;
  /** Analytics of the gateway thread (deployment changes...); written by a writer thread. */
  events: EventSink;
  /** The analytics environment (actors/analytics/analytics-store.ts), where analytics are read. */
  analytics: Store;
}

/** A route module: a function from the deps to its routes. */
export type RouteModule = (deps: GatewayDeps) => Route[];

/** Longest path parameter accepted (ids are 25 characters, names at most 64). */
const MAX_PARAM_LENGTH = 512;

const EMPTY_BODY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * The transport-neutral core: routing, authentication, permission checks, body parsing and the
 * mapping of every thrown error to the envelope. The uWS and node:http adapters only move bytes.
 */
export class GatewayApp {
  readonly router = new Router();
  readonly #deps: GatewayDeps;
  readonly #limiter: RateLimiter;

  constructor(deps: GatewayDeps, modules: RouteModule[]) {
    this.#deps = deps;
    this.#limiter = rateLimiterOf(deps);
    for (const module of modules) this.router.add(...module(deps));
  }

  /** The route for a request (adapters call this before reading the body, to know its limit). */
  match(method: string, path: string): RouteMatch | undefined {
    return this.router.match(method, path);
  }

  /** Runs a request to completion; never throws. */
  async dispatch(req: HttpRequest, match: RouteMatch | undefined): Promise<HttpResult> {
    if (!match) return errorResult({ code: 'NOT_FOUND', message: `No route for ${req.method} ${req.path}` }, req.requestId);
    const { route, params } = match;
    // No id or name is this long; refusing here keeps giant values away from store keys.
    for (const name in params) {
      if (params[name]!.length > MAX_PARAM_LENGTH) return errorResult({ code: 'NOT_FOUND', message: `No route for ${req.method} ${req.path.slice(0, 200)}` }, req.requestId);
    }
    // Rate-limit headers of an authenticated request (remaining < 0: not authenticated yet).
    let remaining = -1;
    let resetAt = 0;
    try {
      let principal = undefined as unknown as RouteContext['principal'];
      if (route.auth === 'principal') {
        principal = await this.#deps.auth.authenticate(req.headers);
        try {
          this.#limiter.take(principal.tenantId);
        } finally {
          remaining = this.#limiter.remaining;
          resetAt = this.#limiter.resetAt;
        }
        if (route.permission && !principal.permissions.has(route.permission)) {
          throw new ParleyError('FORBIDDEN', `This credential lacks the permission ${route.permission}`, { permission: route.permission });
        }
      } else if (route.auth === 'admin') {
        // A disabled operator API looks exactly like a missing route.
        if (!this.#deps.auth.adminEnabled) return errorResult({ code: 'NOT_FOUND', message: `No route for ${req.method} ${req.path}` }, req.requestId);
        this.#deps.auth.authenticateAdmin(req.headers);
      }
      const body = req.body.length === 0 || route.body === 'raw' ? EMPTY_BODY : parseJsonBody(req.body, req.headers['content-type']);
      if (route.body === 'none') {
        const field = Object.keys(body)[0];
        if (field !== undefined) throw new ParleyError('VALIDATION_ERROR', `Unknown field "${field}": this endpoint takes no body`, { field });
      }
      const result = await route.handler({ req, params, principal, body });
      return remaining < 0 ? result : withRateLimitHeaders(result, remaining, resetAt);
    } catch (err) {
      const result = this.errorOf(err, req);
      return remaining < 0 ? result : withRateLimitHeaders(result, remaining, resetAt);
    }
  }

  /** The envelope for anything thrown; unexpected errors are logged with the request id, never echoed. */
  errorOf(err: unknown, req: HttpRequest): HttpResult {
    const value = toErrorValue(err);
    if (value.code === 'INTERNAL_ERROR' && !(err instanceof ParleyError)) {
      this.#deps.log.error('unhandled error', { requestId: req.requestId, method: req.method, path: req.path, err });
    }
    return errorResult(value, req.requestId);
  }
}
