// Internals exposed for tests only; other folders import from index.ts.
export { tokenize, stripComment } from './lexer.js';
export { parseTemplate, renderTemplate, resolvePath } from './template.js';
export { keywords, similarity, matchesIntent, estimateTokens, streamPieces, KNOWLEDGE_THRESHOLD } from './builtin-model.js';
export { parseSlotAnswer, extractSlot, DEFAULT_FALLBACK, RETRY_PREFIX, GIVE_UP_MESSAGE, FLOW_DONE_MESSAGE, MAX_SLOT_ATTEMPTS } from './interpreter.js';
export { editDistance, closest } from './source.js';
export { buildSafeRegExp, foldCase, unsafePatternReason } from './safe-pattern.js';
export { parseDuration } from './tools-parser.js';
