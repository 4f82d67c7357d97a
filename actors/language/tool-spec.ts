/**
 * Compiled TOOLS: what the tools executor needs to run a tool, as plain JSON data. URL, headers
 * and body are template text rendered by the executor with renderTemplateText({ params, secrets }).
 */

/** Type of a tool parameter, as written in PARAMS. */
export type ParamType = 'string' | 'number' | 'boolean';

/** An HTTP tool; `async: true` is an ASYNC tool whose answer arrives later on a callback. */
export interface HttpToolSpec {
  readonly kind: 'http';
  readonly name: string;
  readonly description?: string;
  readonly params: Readonly<Record<string, ParamType>>;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Template text, e.g. "https://billing.example.com/invoices/{{params.invoice_id}}". */
  readonly url: string;
  /** Header name → template text. */
  readonly headers: Readonly<Record<string, string>>;
  /** Template text; absent means no request body. */
  readonly body?: string;
  readonly timeoutMs: number;
  readonly async: boolean;
  /** ASYNC tools only: how long the callback stays valid. */
  readonly ttlMs?: number;
}

/** A CODE tool: a JavaScript module whose default export is `async (params, ctx) => result`. */
export interface CodeToolSpec {
  readonly kind: 'code';
  readonly name: string;
  readonly description?: string;
  readonly params: Readonly<Record<string, ParamType>>;
  readonly source: string;
  readonly timeoutMs: number;
  readonly memoryMb: number;
}

/** Any compiled tool. */
export type ToolSpec = HttpToolSpec | CodeToolSpec;

/** What host.callTool answers: a result, an error, or (ASYNC tools) a suspension until the callback. */
export type ToolCallOutcome =
  | { ok: true; result: unknown; suspended?: undefined }
  | { ok: true; suspended: { callbackId: string }; result?: undefined }
  | { ok: false; error: string };

/** What the engine asks the host to run. */
export interface ToolCallRequest {
  tool: ToolSpec;
  params: Record<string, unknown>;
  /** The agent whose TOOLS declare the tool. */
  agentName: string;
}

/** Default TIMEOUT of HTTP and CODE tools. */
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;
/** Longest TIMEOUT a tool may ask for. */
export const MAX_TOOL_TIMEOUT_MS = 60_000;
/** Default TTL of an ASYNC tool's callback. */
export const DEFAULT_ASYNC_TTL_MS = 10 * 60_000;
/** Longest TTL an ASYNC tool may ask for. */
export const MAX_ASYNC_TTL_MS = 7 * 24 * 3_600_000;
/** Default and largest memory limit of a CODE tool, in MB. */
export const DEFAULT_CODE_MEMORY_MB = 64;
export const MAX_CODE_MEMORY_MB = 256;

/** JSON Schema of a tool's PARAMS (all required), for language models. */
export function paramsJsonSchema(params: Readonly<Record<string, ParamType>>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(params)) properties[name] = { type };
  return { type: 'object', properties, required: Object.keys(params), additionalProperties: false };
}

/**
 * Checks and converts call arguments to the declared PARAMS types ("42" → 42 for a number).
 * Returns an error message in plain words when an argument is missing or has the wrong type.
 */
export function coerceParams(params: Readonly<Record<string, ParamType>>, args: Record<string, unknown>): { ok: true; params: Record<string, unknown> } | { ok: false; error: string } {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(params)) {
    const v = Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined;
    if (v === undefined || v === null || v === '') return { ok: false, error: `${name} is missing` };
    if (type === 'string') {
      if (typeof v === 'object') return { ok: false, error: `${name} must be text` };
      out[name] = String(v);
    } else if (type === 'number') {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
      if (!Number.isFinite(n)) return { ok: false, error: `${name} must be a number` };
      out[name] = n;
    } else {
      const b = typeof v === 'boolean' ? v : v === 'true' || v === 'yes' ? true : v === 'false' || v === 'no' ? false : undefined;
      if (b === undefined) return { ok: false, error: `${name} must be true or false` };
      out[name] = b;
    }
  }
  return { ok: true, params: out };
}
