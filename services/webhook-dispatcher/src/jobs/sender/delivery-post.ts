import { guardCall, type CallGuard, type SharedDeadline } from '@seller-api/service-kit';
import type { Dispatcher } from 'undici';

/** What a receiver answered to one POST: its status (null if none came), and what went wrong. */
interface PostAnswer {
  status: number | null;
  retryAfter: string | null;
  /** The first RESPONSE_EXCERPT_BYTES of the answer's body, as text without NUL characters. */
  excerpt: string | null;
  error: unknown;
}

const RESPONSE_EXCERPT_BYTES = 1024;

export interface PostTarget {
  origin: string;
  path: string;
}

/**
 * POSTs one delivery through undici's dispatcher interface: the answer's status, Retry-After and the
 * first KiB of its body are kept as they arrive, without the body stream and the promises that
 * `request` builds per response (they showed in the dispatcher's profile at thousands of deliveries a
 * second). A short body is read to its end, so the connection is kept for the next delivery; a long
 * one is cut off after its first KiB, with its connection, as `request`'s `body.destroy()` did.
 *
 * The promise never rejects: an error before the status is an answer without a status; one after it
 * (a body cut off at the deadline, say) keeps the status, which is what decides the outcome.
 */
export function postDelivery(
  dispatcher: Dispatcher,
  target: PostTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  deadline: SharedDeadline,
): Promise<PostAnswer> {
  return new Promise((resolve) => {
    let status: number | null = null;
    let retryAfter: string | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    // Null while guardCall runs: a deadline already past answers the attempt from inside it.
    let guard: CallGuard | null = null;
    function settle(error: unknown) {
      if (settled) return;
      settled = true;
      guard?.forget();
      const excerpt =
        status === null
          ? null
          : size === 0
            ? ''
            : // PostgreSQL text cannot hold NUL characters; a receiver's binary answer must not lose the attempt.
              Buffer.concat(chunks, Math.min(size, RESPONSE_EXCERPT_BYTES))
                .toString('utf8')
                .replaceAll('\u0000', '');
      resolve({ status, retryAfter, excerpt, error });
    }
    guard = guardCall(deadline, settle);
    if (settled) return;
    const call = guard;
    dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers,
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      {
        onRequestStart(c) {
          call.started(c);
        },
        onResponseStart(c, statusCode, responseHeaders) {
          // 1xx answers are interim: the final status comes after them.
          if (statusCode < 200) return;
          status = statusCode;
          const header = responseHeaders['retry-after'];
          retryAfter = Array.isArray(header) ? (header[0] ?? null) : (header ?? null);
        },
        onResponseData(c, chunk) {
          if (size >= RESPONSE_EXCERPT_BYTES) return;
          chunks.push(chunk);
          size += chunk.length;
          // A long answer is not read to its end: the excerpt is all that is kept of it.
          if (size >= RESPONSE_EXCERPT_BYTES) {
            settle(null);
            c.abort(new Error('response excerpt complete'));
          }
        },
        onResponseEnd() {
          settle(null);
        },
        onResponseError(c, err) {
          settle(err);
        },
      },
    );
  });
}
