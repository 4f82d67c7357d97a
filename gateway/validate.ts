import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ParleyError } from '../runtime/index.js';

/** A compiled body validator: returns the typed body or throws VALIDATION_ERROR naming the field. */
export type Validator<T> = (value: unknown) => T;

/** Compiles a TypeBox schema once, at module load; use the result on every request. */
export function compileValidator<S extends TSchema>(schema: S): Validator<Static<S>> {
  const checker = TypeCompiler.Compile(schema);
  return (value: unknown): Static<S> => {
    if (checker.Check(value)) return value;
    const errors = [...checker.Errors(value)].slice(0, 10).map((e) => ({ field: fieldName(e.path), message: e.message }));
    const first = errors[0]!;
    const message = first.message === 'Unexpected property' ? `Unknown field "${first.field}"` : `${first.field}: ${first.message}`;
    throw new ParleyError('VALIDATION_ERROR', message, { field: first.field, errors });
  };
}

function fieldName(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.') || '(body)';
}

/** Reads a pagination pair from the query: limit default 50, max 200; offset default 0. */
export function pagination(query: URLSearchParams, defaults = { limit: 50, max: 200 }): { limit: number; offset: number } {
  const limit = intParam(query, 'limit', defaults.limit, 1, defaults.max);
  const offset = intParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  return { limit, offset };
}

/** An integer query parameter within bounds, or VALIDATION_ERROR. */
export function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ParleyError('VALIDATION_ERROR', `${name} must be an integer from ${min} to ${max}`, { field: name });
  }
  return n;
}
