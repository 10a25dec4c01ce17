import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { HttpError, serviceUnavailable } from '@seller-api/service-kit';
import type { UpstreamResponse } from './proxy';

export interface StoredResponse {
  status: number;
  contentType: string | null;
  body: string; // base64
}

type Entry =
  { state: 'running'; fingerprint: string } | ({ state: 'done'; fingerprint: string } & StoredResponse);

export type Claim =
  | { kind: 'new'; release(): Promise<void>; complete(response: StoredResponse): Promise<void> }
  | { kind: 'replay'; response: StoredResponse };

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// Long enough for any request to finish (the upstream timeout is shorter); a crashed gateway's claim
// then expires instead of blocking the key for a day.
const RUNNING_TTL_MS = 120_000;

/**
 * `Idempotency-Key` for every POST, in Redis: the same key and body replays the first answer for 24 h;
 * another body, or a duplicate while the first is running, is a 409. Keys are scoped to the user in one
 * environment and the route. 5xx answers are not kept, so a retry after an outage runs again; after a
 * 502 or 504 from the gateway (the outcome is unknown) the key stays claimed until the claim expires.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  static validateKey(key: string): void {
    if (!KEY_PATTERN.test(key)) {
      throw new HttpError(
        400,
        'validation_error',
        'Idempotency-Key must be 1 to 255 visible ASCII characters.',
        {
          'Idempotency-Key': ['Must be 1 to 255 visible ASCII characters.'],
        },
      );
    }
  }

  static fingerprint(body: Buffer): string {
    return createHash('sha256').update(body).digest('hex');
  }

  async claim(owner: string, method: string, path: string, key: string, body: Buffer): Promise<Claim> {
    const redisKey = `${this.prefix}idem:${owner}:${method} ${path}:${key}`;
    const fingerprint = IdempotencyStore.fingerprint(body);
    const running: Entry = { state: 'running', fingerprint };
    let claimed: string | null;
    try {
      claimed = await this.redis.set(redisKey, JSON.stringify(running), 'PX', RUNNING_TTL_MS, 'NX');
    } catch {
      // Without Redis the promise "at most once" cannot be kept: refuse rather than risk a double charge.
      throw serviceUnavailable('Idempotency store unavailable; retry the request shortly.');
    }
    if (claimed === 'OK') {
      return {
        kind: 'new',
        release: async () => {
          await this.redis.del(redisKey).catch(() => undefined);
        },
        complete: async (response) => {
          const done: Entry = { state: 'done', fingerprint, ...response };
          await this.redis.set(redisKey, JSON.stringify(done), 'EX', this.ttlSeconds).catch(() => undefined);
        },
      };
    }
    const raw = await this.redis.get(redisKey).catch(() => null);
    if (!raw) {
      // The first request ended without keeping an answer (5xx) just now: claim again.
      return this.claim(owner, method, path, key, body);
    }
    const entry = parseEntry(raw);
    if (entry.fingerprint !== fingerprint) {
      throw new HttpError(
        409,
        'idempotency_conflict',
        'This Idempotency-Key was already used with a different request body.',
      );
    }
    if (entry.state === 'running') {
      throw new HttpError(
        409,
        'idempotency_conflict',
        'A request with this Idempotency-Key is still being processed.',
      );
    }
    return {
      kind: 'replay',
      response: { status: entry.status, contentType: entry.contentType, body: entry.body },
    };
  }
}

/**
 * A POST with an `Idempotency-Key`, as the public API and the panel's `/v1` routes both apply it: the
 * first answer under 500 is kept and replayed (with `Idempotent-Replayed: true`) for the same owner,
 * route, key and body; `forward` runs at most once per key. The owner is a user in one environment
 * (`idempotencyOwner`): a key used with a test key never replays a live answer.
 */
export async function forwardIdempotently(
  store: IdempotencyStore,
  request: { owner: string; method: string; path: string; key: string; body: Buffer },
  forward: () => Promise<UpstreamResponse>,
): Promise<UpstreamResponse> {
  IdempotencyStore.validateKey(request.key);
  const claim = await store.claim(request.owner, request.method, request.path, request.key, request.body);
  if (claim.kind === 'replay') {
    const headers: Record<string, string> = { 'idempotent-replayed': 'true' };
    if (claim.response.contentType) headers['content-type'] = claim.response.contentType;
    return { status: claim.response.status, headers, body: Buffer.from(claim.response.body, 'base64') };
  }
  let answer: UpstreamResponse;
  try {
    answer = await forward();
  } catch (err) {
    // The service did not answer in time (504) or its answer was lost (502): it may have done the
    // work. The claim is left running until it expires, so a prompt retry is a 409, not a second
    // order. Anything else (503: the service was never reached) frees the key at once.
    if (!(err instanceof HttpError && (err.status === 504 || err.status === 502))) await claim.release();
    throw err;
  }
  if (answer.status >= 500) await claim.release();
  else
    await claim.complete({
      status: answer.status,
      contentType: answer.headers['content-type'] ?? null,
      body: answer.body.toString('base64'),
    });
  return answer;
}

/** Whose keys: one user in one environment (the user's test and live keys never share answers). */
export function idempotencyOwner(identity: { user_id: string; environment: string }): string {
  return `${identity.user_id}/${identity.environment}`;
}

/** A stored entry; one that cannot be read (written by something else) is refused rather than replayed. */
function parseEntry(raw: string): Entry {
  try {
    const entry = JSON.parse(raw) as Entry;
    if (typeof entry === 'object' && entry !== null && typeof entry.fingerprint === 'string') return entry;
  } catch {
    // fall through
  }
  throw serviceUnavailable('The idempotency record of this key cannot be read; retry with a new key.');
}
