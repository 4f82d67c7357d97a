import { isUtf8 } from 'node:buffer';
import { ParleyError } from '../runtime/index.js';

/** Standard request body limit (spec: 1 MB). */
export const BODY_LIMIT = 1024 * 1024;
/** Deepest JSON nesting accepted; deeper documents are an attack, not a request. */
export const MAX_JSON_DEPTH = 64;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Parses a JSON request body into a plain object. Rejects with 400 (never 500): a wrong content
 * type, malformed JSON, a non-object top level, nesting deeper than MAX_JSON_DEPTH, and keys
 * that poison prototypes (`__proto__`, `constructor`, `prototype`) anywhere in the document.
 */
export function parseJsonBody(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  if (body.length === 0) return {};
  if (!contentType || !/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)) {
    throw new ParleyError('BAD_REQUEST', 'Content-Type must be application/json', { field: 'content-type' });
  }
  // Decoding would silently turn invalid bytes into U+FFFD and store them: refuse instead.
  if (!isUtf8(body)) throw new ParleyError('BAD_REQUEST', 'Request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ParleyError('BAD_REQUEST', 'Request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ParleyError('BAD_REQUEST', 'Request body must be a JSON object');
  }
  checkShape(value, 0);
  return value as Record<string, unknown>;
}

function checkShape(value: unknown, depth: number): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_JSON_DEPTH) throw new ParleyError('BAD_REQUEST', `Request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const item of value) checkShape(item, depth + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw new ParleyError('BAD_REQUEST', `Request body may not contain the key "${key}"`);
    checkShape((value as Record<string, unknown>)[key], depth + 1);
  }
}
