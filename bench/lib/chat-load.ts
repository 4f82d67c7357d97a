import { runLoad, type LoadResult } from './http-load.js';

/** Options of a chat load: who chats, where, and what each client says. */
export interface ChatLoadOptions {
  port: number;
  connections: number;
  durationMs: number;
  /** Per-client state kept across runs, so each client keeps its session over several rounds. */
  states: Record<string, unknown>[];
  headers: Record<string, string>;
  /** Body fields of a client's first message (projectId, agentName...). */
  start: Record<string, unknown>;
  message: string;
  /** Sees each 200 reply (e.g. to count wrong answers). */
  onReply?(reply: { sessionId: string; response: string }): void;
}

/**
 * Closed-loop POST /api/v1/chat/agent load in which every client keeps one session going, as a
 * user in a conversation would: the first message starts it, the next ones continue it.
 */
export function runChatLoad(o: ChatLoadOptions): Promise<{ result: LoadResult; samples: number[] }> {
  return runLoad({
    port: o.port,
    connections: o.connections,
    durationMs: o.durationMs,
    states: o.states,
    request: (_c, state) => ({
      method: 'POST',
      path: '/api/v1/chat/agent',
      headers: o.headers,
      body: JSON.stringify(state['sessionId'] ? { projectId: o.start['projectId'], sessionId: state['sessionId'], message: o.message } : { ...o.start, message: o.message }),
    }),
    onResponse: (_c, state, status, body) => {
      if (status !== 200) return;
      const reply = JSON.parse(body) as { sessionId: string; response: string };
      state['sessionId'] ??= reply.sessionId;
      o.onReply?.(reply);
    },
  });
}
