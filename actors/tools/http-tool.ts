import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../runtime/index.js';
import { renderTemplateText, templateSecretNames, type HttpToolSpec } from '../language/index.js';
import { BLOCKED_ADDRESS_CODE, guardedLookup, isBlockedAddress } from './network-guard.js';
import type { ToolSecretResolver } from './tool-secrets-port.js';
import { toolError, type ToolResult } from './tool-result.js';

/** Largest response body an HTTP tool may read by default (1 MB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** How an HTTP tool call runs. */
export interface HttpToolOptions {
  /** Secrets of the calling tenant, project and environment. */
  secrets: ToolSecretResolver;
  /** Allow private, loopback and link-local addresses (PARLEY_TOOLS_ALLOW_PRIVATE; tests, local development). */
  allowPrivateNetwork: boolean;
  /** Response size limit in bytes (default 1 MB), counted while reading. */
  maxResponseBytes?: number;
  log?: Logger;
}

const FORBIDDEN_HEADER_CHARS = /[\r\n\0]/;
const jsonEscape = (s: string): string => JSON.stringify(s).slice(1, -1);

/**
 * Runs an HTTP tool: renders URL, headers and body with `{ params, secrets }`, refuses
 * non-http(s) URLs and (unless allowed) private addresses, enforces the timeout and the size
 * limit, and answers `{ status, body }` (JSON when the API says so, else text). A non-2xx status
 * is an error carrying the status. Secret values never reach a log line or an error message.
 */
export async function runHttpTool(spec: HttpToolSpec, params: Record<string, unknown>, options: HttpToolOptions): Promise<ToolResult> {
  const started = performance.now();
  const secrets: Record<string, string> = {};
  const texts = [spec.url, ...Object.values(spec.headers), ...(spec.body === undefined ? [] : [spec.body])];
  for (const name of new Set(texts.flatMap((t) => templateSecretNames(t)))) {
    const value = options.secrets.resolve(spec.name, name);
    if (value === undefined) return toolError(`The secret "${name}" of tool ${spec.name} is not set`);
    secrets[name] = value;
  }
  const outcome = await send(spec, { params, secrets }, options);
  const redacted = outcome.ok ? outcome : { ...outcome, error: redact(outcome.error, Object.values(secrets)) };
  options.log?.debug('http tool call', { tool: spec.name, method: spec.method, ok: redacted.ok, status: redacted.ok ? (redacted.result as { status: number }).status : redacted.status, durationMs: Math.round(performance.now() - started) });
  return redacted;
}

async function send(spec: HttpToolSpec, scope: { params: Record<string, unknown>; secrets: Record<string, string> }, options: HttpToolOptions): Promise<ToolResult> {
  // Placeholders in the URL are percent-encoded: a value can never add a path segment, a query
  // parameter or change the host.
  let url: URL;
  try {
    url = new URL(renderTemplateText(spec.url, scope, { encode: encodeURIComponent }));
  } catch {
    return toolError(`The URL of tool ${spec.name} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return toolError(`Tool ${spec.name} may only call http or https URLs`);
  if (url.username || url.password) return toolError(`The URL of tool ${spec.name} may not carry a user name or password; use a header`);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!options.allowPrivateNetwork && isIP(host) !== 0 && isBlockedAddress(host)) return refusedAddress(spec);

  const headers: Record<string, string> = { 'user-agent': 'Parley-Tools/1', accept: 'application/json, text/plain;q=0.9, */*;q=0.5' };
  for (const [name, text] of Object.entries(spec.headers)) {
    const value = renderTemplateText(text, scope);
    if (FORBIDDEN_HEADER_CHARS.test(value)) return toolError(`The header ${name} of tool ${spec.name} rendered to a value with a line break`);
    headers[name.toLowerCase()] = value;
  }
  let body: Buffer | undefined;
  if (spec.body !== undefined) {
    const contentType = headers['content-type'];
    const isJson = contentType === undefined || /json/i.test(contentType);
    const text = renderTemplateText(spec.body, scope, isJson ? { encode: jsonEscape } : {});
    if (isJson) {
      try {
        JSON.parse(text);
      } catch {
        return toolError(`The body of tool ${spec.name} did not render to valid JSON`);
      }
      headers['content-type'] ??= 'application/json';
    }
    body = Buffer.from(text, 'utf8');
  }

  const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const signal = AbortSignal.timeout(spec.timeoutMs);
  return new Promise<ToolResult>((resolve) => {
    let settled = false;
    const finish = (result: ToolResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, {
      method: spec.method,
      headers,
      signal,
      // A fresh connection per call: every connection goes through the address check.
      agent: false,
      ...(options.allowPrivateNetwork ? {} : { lookup: guardedLookup as never }),
    }, (res) => readResponse(res, limit, spec, (r) => {
      if (!r.ok) req.destroy();
      finish(r);
    }));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (signal.aborted) return finish(toolError(`Tool ${spec.name} did not answer within ${spec.timeoutMs} ms`));
      if (err.code === BLOCKED_ADDRESS_CODE) return finish(refusedAddress(spec));
      finish(toolError(`Tool ${spec.name} could not reach its API${err.code ? ` (${err.code})` : ''}`));
    });
    req.end(body);
  });
}

function readResponse(res: IncomingMessage, limit: number, spec: HttpToolSpec, done: (r: ToolResult) => void): void {
  const status = res.statusCode ?? 0;
  const tooLarge = (): ToolResult => toolError(`The response of tool ${spec.name} is larger than ${limit} bytes`);
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return done(tooLarge());
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) return done(tooLarge());
    chunks.push(chunk);
  });
  res.on('error', () => done(toolError(`Tool ${spec.name} did not answer within ${spec.timeoutMs} ms`)));
  res.on('end', () => {
    if (size > limit) return;
    if (status < 200 || status > 299) return done(toolError(`Tool ${spec.name} answered HTTP ${status}`, status));
    const text = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = text;
    if (/\bjson\b/i.test(res.headers['content-type'] ?? '') && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    done({ ok: true, result: { status, body: parsed } });
  });
}

function refusedAddress(spec: HttpToolSpec): ToolResult {
  return toolError(`Tool ${spec.name} may not call a private, loopback or link-local address (set PARLEY_TOOLS_ALLOW_PRIVATE=true only for local development)`);
}

/** Replaces every secret value in `text` (defence in depth: messages are built without them). */
function redact(text: string, values: string[]): string {
  let out = text;
  for (const v of values) if (v.length >= 4) out = out.split(v).join('[secret]');
  return out;
}
