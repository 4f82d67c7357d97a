/**
 * What running a tool answers: a JSON-serialisable result, or an error in plain words for the
 * agent (never a secret, a rendered header or a stack). HTTP errors also carry the status.
 */
export type ToolResult = { ok: true; result: unknown } | { ok: false; error: string; status?: number };

/** Shorthand for a failed tool call. */
export const toolError = (error: string, status?: number): ToolResult => (status === undefined ? { ok: false, error } : { ok: false, error, status });
