import type { Permission } from '../actors/index.js';
import type { HttpResult, RouteContext } from './http.js';

/** How a route authenticates its caller. */
export type RouteAuth = 'none' | 'principal' | 'admin';

/** One route: method, path template with `{param}` segments, auth, permission and handler. */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  auth: RouteAuth;
  /** Permission the principal must hold (routes with auth 'principal'). */
  permission?: Permission;
  /** Body limit in bytes; default BODY_LIMIT. */
  bodyLimit?: number;
  /** 'none': the route takes no body, and a body with any field is refused (mass-assignment guard). 'raw': not parsed; the handler reads req.body. */
  body?: 'json' | 'none' | 'raw';
  handler(ctx: RouteContext): Promise<HttpResult> | HttpResult;
}

/** A matched route and its decoded path parameters. */
export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

interface Node {
  literal: Map<string, Node>;
  param: { name: string; node: Node } | undefined;
  routes: Map<string, Route>;
}

const newNode = (): Node => ({ literal: new Map(), param: undefined, routes: new Map() });

/** A segment trie: literal segments win over parameters, so /sessions/export beats /sessions/{id}. */
export class Router {
  readonly #root = newNode();
  readonly #all: Route[] = [];

  /** Adds routes; throws on a duplicate or a conflicting parameter name (a programming error). */
  add(...routes: Route[]): this {
    for (const route of routes) {
      let node = this.#root;
      for (const segment of split(route.path)) {
        const param = /^\{([A-Za-z][A-Za-z0-9_]*)\}$/.exec(segment);
        if (param) {
          const name = param[1]!;
          if (node.param && node.param.name !== name) throw new Error(`Route ${route.path}: parameter {${name}} conflicts with {${node.param.name}}`);
          node.param ??= { name, node: newNode() };
          node = node.param.node;
        } else {
          let next = node.literal.get(segment);
          if (!next) node.literal.set(segment, (next = newNode()));
          node = next;
        }
      }
      if (node.routes.has(route.method)) throw new Error(`Duplicate route ${route.method} ${route.path}`);
      node.routes.set(route.method, route);
      this.#all.push(route);
    }
    return this;
  }

  /** The route for a method and path, or undefined. Parameters are URI-decoded; a bad encoding matches nothing. */
  match(method: string, path: string): RouteMatch | undefined {
    const params: Record<string, string> = {};
    const node = this.#walk(this.#root, split(path), 0, params);
    const route = node?.routes.get(method);
    return route ? { route, params } : undefined;
  }

  /** Every route, for documentation and the security test's walk. */
  routes(): readonly Route[] {
    return this.#all;
  }

  #walk(node: Node, segments: string[], i: number, params: Record<string, string>): Node | undefined {
    if (i === segments.length) return node;
    const segment = segments[i]!;
    const literal = node.literal.get(segment);
    if (literal) {
      const found = this.#walk(literal, segments, i + 1, params);
      if (found && found.routes.size > 0) return found;
    }
    if (node.param && segment !== '') {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
      const found = this.#walk(node.param.node, segments, i + 1, params);
      if (found) {
        params[node.param.name] = value;
        return found;
      }
    }
    return undefined;
  }
}

function split(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}
