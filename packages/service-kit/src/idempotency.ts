import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { MESSAGES, type Identity } from '@seller-api/contracts';
import type { Request, Response } from 'express';
import { HttpError } from './errors';
import { identityOf } from './identity';
import type { Logger } from './logger';
import { startPeriodicJob, type PeriodicJob } from './periodic-job';
import { deleteInBatches, sqlInTransaction, type Sql } from './sql';

/**
 * Idempotency-Key, kept by the service that makes the change, in its own schema and in the change's
 * own transaction (docs/idempotency.md):
 * - one transaction per keyed request: it takes a lock on (scope, key), looks for a stored answer,
 *   makes the change and stores the answer with it, then commits;
 * - a stored answer with the same request fingerprint is sent again, byte for byte, with
 *   `Idempotent-Replayed: true`; another fingerprint is a 409 `idempotency_conflict`;
 * - a duplicate that arrives while the first holds the lock is a 409 `idempotency_conflict` with
 *   `Retry-After: 1`; the lock ends with the first's transaction, so once the first has answered,
 *   failed or died (its connection closed, PostgreSQL rolls it back) a retry replays or runs again;
 * - only successful answers (2xx) are stored: a refusal changes nothing, so its retry runs again.
 *
 * The table, in each such service's schema (its migrations write it out):
 *   idempotency_keys (scope text, key text, fingerprint text, status smallint, body text,
 *                     created_at timestamptz(3) default now(), primary key (scope, key))
 * with an index on created_at for IdempotencyCleanup.
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
/**
 * Set by a service that forwards a keyed request to the service that makes the change (orders to
 * payments for a charge action): the public route and the fingerprint of the public body, so the key
 * keeps the scope and the body the client gave it.
 */
export const IDEMPOTENCY_ROUTE_HEADER = 'x-idempotency-route';
export const IDEMPOTENCY_FINGERPRINT_HEADER = 'x-idempotency-fingerprint';

/** How long an answer is kept for replay. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** 1 to 255 visible ASCII characters; anything else is a 400 naming the header. */
export function checkIdempotencyKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new HttpError(
      400,
      'validation_error',
      'Idempotency-Key must be 1 to 255 visible ASCII characters.',
      {
        'Idempotency-Key': [MESSAGES.idempotencyKey],
      },
    );
  }
}

export const requestFingerprint = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

/** One keyed request: whose, which route, which key, and what was asked. */
export interface IdempotentRequest {
  scope: string;
  /** The route the client called (`POST /sellers/orders/`), part of the scope. */
  route: string;
  key: string;
  fingerprint: string;
}

type Headers = Record<string, string | string[] | undefined>;

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The keyed request a call carries, or null without an Idempotency-Key. Scoped to the user in one
 * environment and to the route (a test key's answer is never replayed to a live key).
 */
export function idempotentRequestOf(
  identity: Identity,
  request: { method: string; path: string; headers: Headers; body: Buffer },
): IdempotentRequest | null {
  const key = header(request.headers, IDEMPOTENCY_KEY_HEADER);
  if (key === undefined) return null;
  checkIdempotencyKey(key);
  // `/sellers/orders` and `/sellers/orders/` are one resource, so one scope.
  const path = request.path.endsWith('/') ? request.path : `${request.path}/`;
  const route = header(request.headers, IDEMPOTENCY_ROUTE_HEADER) ?? `${request.method} ${path}`;
  return {
    scope: `${identity.user_id}/${identity.environment} ${route}`,
    route,
    key,
    fingerprint: header(request.headers, IDEMPOTENCY_FINGERPRINT_HEADER) ?? requestFingerprint(request.body),
  };
}

// The namespace of keyedId's name-based UUIDs (RFC 9562 version 5): a fixed random UUID of ours.
const KEYED_ID_NAMESPACE = Buffer.from('6c1f4e0a9b2d4c7e8f3a5b1d2e4f6a7c', 'hex');

/**
 * A UUID that is the same for every retry of one keyed request: the id of what the request creates
 * before its change commits elsewhere (an order's charge at payments), so a retry or a duplicate
 * racing it asks for the same thing again instead of a second one. Another body under the same key
 * never gets this far (409).
 */
export function keyedId(request: IdempotentRequest): string {
  const hash = createHash('sha1')
    .update(KEYED_ID_NAMESPACE)
    .update(`${request.scope}\n${request.key}\n${request.fingerprint}`)
    .digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The keyed request of an express request behind the identity check (its raw body kept by jsonParser). */
export function keyedRequest(req: Request): IdempotentRequest | null {
  return idempotentRequestOf(identityOf(req), {
    method: req.method,
    path: req.path,
    headers: req.headers,
    body: req.rawBody ?? Buffer.alloc(0),
  });
}

/** Sends an answer: a stored one as its bytes, any other as JSON. */
export function sendAnswer(res: Response, answer: Answer): void {
  if (answer.headers) res.set(answer.headers);
  res.status(answer.status);
  if (answer.body instanceof JsonText) res.type('application/json; charset=utf-8').send(answer.body.text);
  else res.json(answer.body);
}

/** The headers that carry a keyed request on to the service that makes the change. */
export function forwardedIdempotency(request: IdempotentRequest): Record<string, string> {
  return {
    [IDEMPOTENCY_KEY_HEADER]: request.key,
    [IDEMPOTENCY_ROUTE_HEADER]: request.route,
    [IDEMPOTENCY_FINGERPRINT_HEADER]: request.fingerprint,
  };
}

/** A JSON body already serialized: a stored answer is sent as it was stored. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** What a route answers: a status and a JSON body (an object, or JsonText), and extra headers. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const stillRunning = () =>
  new HttpError(
    409,
    'idempotency_conflict',
    'A request with this Idempotency-Key is still being processed; retry in a second.',
    undefined,
    { 'Retry-After': '1' },
  );

export const keyReused = () =>
  new HttpError(
    409,
    'idempotency_conflict',
    'This Idempotency-Key was already used with a different request body.',
  );

/**
 * How a route's answer is kept in `idempotency_keys.body` when it holds something that must not be
 * stored as it is (a webhook's new secret): `toStored` turns the answer's JSON text into what is
 * stored, `fromStored` turns that back into the very same text for a replay. Without one, the text is
 * stored as it is.
 */
export interface StoredAnswerCodec {
  toStored(text: string): string;
  fromStored(stored: string): string;
}

/** A stored answer sent again; a 409 when the key came with another body. */
function replayOf(
  stored: { fingerprint: string; status: number; body: string },
  request: IdempotentRequest,
  codec?: StoredAnswerCodec,
): Answer & { replayed: true } {
  if (stored.fingerprint !== request.fingerprint) throw keyReused();
  return {
    status: stored.status,
    body: new JsonText(codec ? codec.fromStored(stored.body) : stored.body),
    headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
    replayed: true,
  };
}

/** Runs keyed changes in one transaction with their record (see the module's comment). */
export class IdempotencyGuard {
  private readonly table: string;

  constructor(
    private readonly orm: MikroORM,
    private readonly sql: Sql,
    schema: string,
  ) {
    this.table = `"${schema}".idempotency_keys`;
  }

  /**
   * The stored answer of a keyed request that already finished, looked up without a lock: for a route
   * that does slow work (a call to another service) before its change, to answer a retry before it.
   * A 409 when the key was used with another body; null when nothing is stored (yet). `codec`: as
   * for `run`.
   */
  async find(
    request: IdempotentRequest | null,
    codec?: StoredAnswerCodec,
  ): Promise<(Answer & { replayed: true }) | null> {
    if (!request) return null;
    const [stored] = await this.sql.query<{ fingerprint: string; status: number; body: string }>(
      `select fingerprint, status, body from ${this.table} where scope = $1 and key = $2`,
      [request.scope, request.key],
    );
    return stored ? replayOf(stored, request, codec) : null;
  }

  /**
   * `work` once per keyed request. Without a key it runs on a fresh EntityManager and opens its own
   * transactions. With one it gets the keyed transaction's EntityManager: everything it writes must
   * go through it (nested `transactional` calls become savepoints; `sqlInTransaction` for raw SQL).
   * `replayed` says whether the answer is a stored one (nothing ran). `codec` changes what is stored
   * of the answer (StoredAnswerCodec); the answer sent, first or replayed, is the same text.
   */
  async run(
    request: IdempotentRequest | null,
    work: (em: EntityManager, sql: Sql) => Promise<Answer>,
    codec?: StoredAnswerCodec,
  ): Promise<Answer & { replayed: boolean }> {
    if (!request) return { ...(await work(this.orm.em.fork(), this.sql)), replayed: false };
    const run = this.orm.em.fork().transactional(async (tx) => {
      const sql = sqlInTransaction(this.sql, tx);
      const [lock] = await sql.query<{ locked: boolean }>(
        'select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as locked',
        [`${request.scope}\n${request.key}`],
      );
      if (!lock?.locked) throw stillRunning();
      const [stored] = await sql.query<{ fingerprint: string; status: number; body: string }>(
        `select fingerprint, status, body from ${this.table} where scope = $1 and key = $2`,
        [request.scope, request.key],
      );
      if (stored) return replayOf(stored, request, codec);
      const answer = await work(tx, sql);
      // A refusal is not kept, and whatever `work` wrote for it is rolled back with the transaction.
      if (answer.status < 200 || answer.status > 299) throw new Unkept(answer);
      const text = answer.body instanceof JsonText ? answer.body.text : JSON.stringify(answer.body);
      await sql.query(
        `insert into ${this.table} (scope, key, fingerprint, status, body) values ($1, $2, $3, $4, $5)`,
        [request.scope, request.key, request.fingerprint, answer.status, codec ? codec.toStored(text) : text],
      );
      return { ...answer, body: new JsonText(text), replayed: false };
    });
    return run.catch((err: unknown) => {
      if (err instanceof Unkept) return { ...err.answer, replayed: false };
      throw err;
    });
  }
}

/** Carries a non-2xx answer out of the keyed transaction, rolling it back. */
class Unkept extends Error {
  constructor(readonly answer: Answer) {
    super('answer not kept');
  }
}

/**
 * Deletes answers older than IDEMPOTENCY_RETENTION_HOURS, in batches, every `intervalMs`; any
 * replica may run it (a batch locks its rows, SKIP LOCKED lets two replicas share the work).
 */
export class IdempotencyCleanup {
  private job: PeriodicJob | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly schema: string,
    private readonly logger: Logger,
    private readonly intervalMs = 10 * 60_000,
  ) {}

  start(): void {
    this.job = startPeriodicJob({
      name: 'idempotency cleanup',
      intervalMs: this.intervalMs,
      run: () => this.sweep(),
      logger: this.logger,
      runAtStart: false,
    });
  }

  /** Deletes what has expired; answers how many records went. */
  async sweep(batch = 5_000): Promise<number> {
    return deleteInBatches(
      this.sql,
      `"${this.schema}".idempotency_keys`,
      'created_at < now() - make_interval(hours => $1)',
      [IDEMPOTENCY_RETENTION_HOURS],
      batch,
    );
  }

  async stop(): Promise<void> {
    await this.job?.stop();
  }
}
