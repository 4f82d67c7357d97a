/** The analytics-ready record of one model call (the analytics store consumes it). */
import type { ErrorCode } from '../../runtime/index.js';

/** One model call, successful or not; field names are the analytics store's columns. */
export interface LlmEvent {
  category: 'llm';
  event_type: 'llm_call';
  agent_name: string;
  /** ISO time the call started. */
  timestamp: string;
  duration_ms: number;
  /** The error message when the call failed (never contains the API key). */
  error?: string;
  metadata: {
    /** The provider name from the project's settings ("" when the model could not be resolved). */
    provider: string;
    model: string;
    tokens_in: number;
    tokens_out: number;
    /** In US dollars, from the price table. */
    cost: number;
    /** The ParleyError code when the call failed. */
    error_code?: ErrorCode;
  };
}
