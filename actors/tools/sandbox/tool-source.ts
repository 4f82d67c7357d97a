/** Turns a CODE tool's module text into a script the sandbox worker runs. */

/** Largest CODE tool source, in characters. */
export const MAX_TOOL_SOURCE_CHARS = 100_000;

/** Name the prepared script calls with a loader of the default export and the params (defined by the sandbox bootstrap). */
export const START_FUNCTION = '__parley_start';
const DEFAULT_BINDING = '__parley_default';

/**
 * Checks and rewrites `export default <expr>` into an assignment inside a strict function, so
 * the module runs as a classic script in a fresh vm context and hands its default export to
 * the sandbox's start function.
 *
 * The word `import` is refused anywhere in the code, even in strings and comments: a dynamic
 * `import()` inside node:vm rejects with an error object of the host realm, whose constructor
 * chain leads out of the sandbox. Keywords cannot be spelled with escapes and code cannot be
 * built from strings (code generation is off), so refusing the word closes that door for good.
 */
export function prepareToolSource(source: string, paramsJson: string): { ok: true; script: string } | { ok: false; error: string } {
  if (source.length > MAX_TOOL_SOURCE_CHARS) return { ok: false, error: `The code is longer than ${MAX_TOOL_SOURCE_CHARS} characters` };
  if (/\bimport\b/.test(source)) return { ok: false, error: 'import is not available in a CODE tool (the word "import" may not appear in its code): tools get only params and ctx' };
  const exports = source.match(/\bexport\b/g)?.length ?? 0;
  const defaults = source.match(/\bexport\s+default\b/g)?.length ?? 0;
  if (defaults !== 1 || exports !== 1) return { ok: false, error: 'The code must have exactly one export: export default async (params, ctx) => { … }' };
  const body = source.replace(/\bexport\s+default\b/, `${DEFAULT_BINDING} =`);
  // The wrapper's first line carries the user's first line, so error line numbers match the source.
  // The module body runs when the start function calls this loader, inside its try/catch, so no
  // value user code throws ever reaches the host.
  return { ok: true, script: `${START_FUNCTION}(function () {"use strict"; let ${DEFAULT_BINDING}; ${body}\n;return ${DEFAULT_BINDING};}, ${JSON.stringify(paramsJson)});` };
}
