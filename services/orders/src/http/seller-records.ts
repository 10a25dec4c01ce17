import type { EntityManager } from '@mikro-orm/postgresql';
import {
  keyedRequest,
  parseOrThrow,
  parseQueryOrThrow,
  route,
  sellerScope,
  sendAnswer,
  type Runtime,
  type Scope,
} from '@seller-api/service-kit';
import type { RequestHandler } from 'express';
import type { z } from 'zod';

/** A record of the seller's (a product, an affiliate) created from a request body. */
export interface CreateRecord<S extends z.ZodType, R> {
  schema: S;
  /** The message of the 400 for a body the schema refuses. */
  invalid: string;
  create(tx: EntityManager, scope: Scope, input: z.output<S>): Promise<R>;
  present(row: R): unknown;
  /** The answer's message. */
  created: string;
}

/** `POST`: creates the record under the request's Idempotency-Key and answers 201 with it. */
export function createRecordRoute<S extends z.ZodType, R>(
  runtime: Runtime,
  spec: CreateRecord<S, R>,
): RequestHandler {
  return route(async (req, res) => {
    const scope = sellerScope(req);
    const input = parseOrThrow(spec.schema, req.body, spec.invalid);
    const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
      const row = await spec.create(tx, scope, input);
      return { status: 201, body: { message: spec.created, data: spec.present(row) } };
    });
    sendAnswer(res, answer);
  });
}

/** A page of the seller's records, filtered by a query string. */
export interface ListRecords<Q extends z.ZodType, R> {
  query: Q;
  list(em: EntityManager, scope: Scope, query: z.output<Q>): Promise<{ rows: R[]; next: string | null }>;
  present(row: R): unknown;
  /** The answer's message. */
  listed: string;
}

/** `GET`: one page of the seller's records and the cursor of the next. */
export function listRecordsRoute<Q extends z.ZodType, R>(
  runtime: Runtime,
  spec: ListRecords<Q, R>,
): RequestHandler {
  return route(async (req, res) => {
    const { rows, next } = await spec.list(
      runtime.orm.em.fork(),
      sellerScope(req),
      parseQueryOrThrow(spec.query, req.query, 'Invalid query.'),
    );
    res.json({ message: spec.listed, data: { results: rows.map(spec.present), next_cursor: next } });
  });
}
