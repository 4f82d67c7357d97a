/**
 * The port between the turn engine and language models other than `builtin`. The engine builds a
 * ModelCallRequest; the session actor answers it through actors/models (providers configured per
 * project, overridden per deployment). Plain data both ways, so it can cross threads.
 */

/** One message of the conversation as the model sees it. */
export interface ModelMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  /** For role 'tool': the id of the call this answers. */
  toolCallId?: string;
  /** For role 'assistant': the tool calls it made. */
  toolCalls?: ModelToolCall[];
}

/** A tool the model may call, described by a JSON Schema of its parameters. */
export interface ModelTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** A tool call the model asked for. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What the engine asks of a model. */
export interface ModelCallRequest {
  /** As written after MODEL:, e.g. "openai/gpt-4o-mini" or "anthropic/claude-sonnet-4"; "provider/model". */
  model: string;
  temperature?: number;
  /** Persona, knowledge and instructions, built by the engine. */
  system: string;
  messages: ModelMessage[];
  tools?: ModelTool[];
  /** Receives the text as it streams. */
  onText?: (delta: string) => void;
  /** The agent making the call (for analytics events). */
  agentName: string;
}

/** What a model answered. */
export interface ModelCallResult {
  text: string;
  toolCalls: ModelToolCall[];
  usage: { inputTokens: number; outputTokens: number };
  /** In US dollars, from the operator's price table; 0 when the model has no price. */
  costUsd: number;
  provider: string;
  model: string;
  durationMs: number;
}
