/**
 * Templates: text with `{{name}}` or `{{dotted.name}}` placeholders. No expressions, no code:
 * a placeholder is only a path of names, looked up in own properties of plain data.
 * Unknown names render as an empty string; `__proto__`, `constructor` and `prototype` never resolve.
 */
import type { Template, TemplatePart } from './program.js';

/** A template syntax problem at a character offset of the template text. */
export interface TemplateError {
  readonly offset: number;
  readonly message: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORBIDDEN: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A placeholder of a template and its character offset in the template text. */
export interface Placeholder {
  readonly path: readonly string[];
  readonly offset: number;
}

/** Parses template text into parts; errors and placeholders carry offsets into `text`. */
export function parseTemplate(text: string): { template: Template; errors: TemplateError[]; placeholders: Placeholder[] } {
  const parts: TemplatePart[] = [];
  const errors: TemplateError[] = [];
  const placeholders: Placeholder[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open < 0) {
      literal += text.slice(i);
      break;
    }
    literal += text.slice(i, open);
    const close = text.indexOf('}}', open + 2);
    if (close < 0) {
      errors.push({ offset: open, message: 'A {{ is never closed. Write placeholders like {{invoice_id}}.' });
      literal += text.slice(open);
      break;
    }
    const inner = text.slice(open + 2, close).trim();
    const path = inner.split('.');
    if (inner === '' || !path.every((p) => NAME.test(p))) {
      errors.push({ offset: open, message: `{{${inner}}} is not a name. Inside {{ }} write only a name such as {{invoice_id}} or {{session.id}}.` });
    } else {
      if (literal) parts.push(literal);
      literal = '';
      parts.push({ path });
      placeholders.push({ path, offset: open });
    }
    i = close + 2;
  }
  if (literal) parts.push(literal);
  return { template: parts, errors, placeholders };
}

/** Looks up a dotted path in plain data using own properties only; undefined when absent. */
export function resolvePath(scope: unknown, path: readonly string[]): unknown {
  let value: unknown = scope;
  for (const key of path) {
    if (FORBIDDEN.has(key)) return undefined;
    if (typeof value !== 'object' || value === null) return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Options of renderTemplate. */
export interface RenderOptions {
  /** Applied to each placeholder's value (never to the literal text), e.g. encodeURIComponent for a URL. */
  encode?: (value: string) => string;
}

/** Renders a template against a scope; only strings, numbers and booleans are shown, anything else is empty. */
export function renderTemplate(template: Template, scope: unknown, options: RenderOptions = {}): string {
  let out = '';
  for (const part of template) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = resolvePath(scope, part.path);
    let shown = '';
    if (typeof value === 'string') shown = value;
    else if (typeof value === 'number' && Number.isFinite(value)) shown = String(value);
    else if (typeof value === 'boolean') shown = value ? 'yes' : 'no';
    out += options.encode && shown !== '' ? options.encode(shown) : shown;
  }
  return out;
}

/**
 * Renders template text (a tool's URL, header or body) against plain data such as
 * `{ params, secrets }`. Invalid placeholders are kept as written (the compiler already refused them).
 * Booleans render as true/false here, since the text goes to a machine rather than a person.
 */
export function renderTemplateText(text: string, context: Record<string, unknown>, options: RenderOptions = {}): string {
  const { template } = parseTemplate(text);
  let out = '';
  for (const part of template) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = resolvePath(context, part.path);
    const shown = typeof value === 'boolean' ? String(value) : renderTemplate([part], context);
    out += options.encode && shown !== '' ? options.encode(shown) : shown;
  }
  return out;
}

/** The names x of every `{{secrets.x}}` in template text, without duplicates, in order of appearance. */
export function templateSecretNames(text: string): string[] {
  const { placeholders } = parseTemplate(text);
  return [...new Set(placeholders.filter((p) => p.path[0] === 'secrets' && p.path.length === 2).map((p) => p.path[1]!))];
}

/** The first name of every placeholder (for compile-time checks). */
export function templateNames(template: Template): string[] {
  return template.flatMap((p) => (typeof p === 'string' ? [] : [p.path[0]!]));
}
