import { ParleyError, verifyHmacSha256 } from '../../runtime/index.js';
import type { CallbackStore } from '../../actors/index.js';
import type { RouteModule } from '../app.js';
import { json } from '../http.js';

/** What the callback route needs beyond the common deps. */
export interface CallbackRouteDeps {
  callbacks: CallbackStore;
  /** Tells the session to run its resume jobs (fire and forget: the job is already durable). */
  wakeSession(sessionId: string): void;
}

/**
 * POST /api/v1/callbacks/{callbackId}: an external system finishes the work of an ASYNC tool.
 * No JWT: the unguessable id and, when the suspension has a secret, the HMAC of the raw body
 * authenticate it. The id is claimed and the resume job written in one transaction, so a second
 * delivery answers already_processed and nothing runs twice (docs/callbacks.md).
 */
export const callbackRoutes = (extra: CallbackRouteDeps): RouteModule => (deps) => [
  {
    method: 'POST',
    path: '/api/v1/callbacks/{callbackId}',
    auth: 'none',
    handler: async ({ params, req, body }) => {
      const contentType = req.headers['content-type'] ?? '';
      if (!/^application\/json\s*(;|$)/i.test(contentType)) throw new ParleyError('BAD_REQUEST', 'Content-Type must be application/json', { field: 'content-type' });
      const record = extra.callbacks.get(params['callbackId']!);
      if (!record) throw new ParleyError('NOT_FOUND', 'Callback not found');
      const secret = extra.callbacks.secretOf(record);
      if (secret !== null && !verifyHmacSha256(secret, req.body, req.headers['x-callback-signature'])) {
        throw new ParleyError('UNAUTHORIZED', 'Invalid callback signature');
      }
      let claim;
      try {
        claim = await extra.callbacks.claim(record.id, body);
      } catch (err) {
        deps.log.error('callback enqueue failed', { requestId: req.requestId, err });
        throw new ParleyError('SERVICE_UNAVAILABLE', 'Could not enqueue the resume job; nothing was processed, retry', { retryAfterMs: 1000 });
      }
      switch (claim.outcome) {
        case 'missing':
          throw new ParleyError('NOT_FOUND', 'Callback not found');
        case 'expired':
          throw new ParleyError('NOT_FOUND', 'Callback expired');
        case 'already_processed':
          return json({ ok: true, status: 'already_processed' });
        case 'claimed':
          extra.wakeSession(record.sessionId);
          return json({ ok: true });
      }
    },
  },
];
