import {
  ChargeState,
  Environment,
  PaymentApprovedData,
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  PaymentRefundedData,
  uuid,
} from '@seller-api/contracts';
import {
  UnprocessableMessageError,
  batchedIdempotentHandler,
  readMessagePart,
  recordProcessedMessages,
  sqlInTransaction,
  type BatchedMessage,
  type IncomingMessage,
  type Logger,
  type MessageHandler,
  type Runtime,
} from '@seller-api/service-kit';
import { randomUUID } from 'node:crypto';
import type { OrderFundsRow } from '../db/entities';
import { lockSellers, positionsOf } from '../db/balances';
import { lockOrderRecords, writeLedgerBatch, type BatchEntry } from '../db/ledger-batches';
import { ownerKey, type FundsOwner } from '../domain/balance';
import { settleEntries } from '../domain/journal';
import { nextOrderRecord } from '../domain/order-ledger';
import { recordOrderMessage } from '../db/order-funds';
import { releaseFailedRefund } from '../db/refund-holds';
import type { OrderMessage } from '../domain/order-funds';
import { SCHEMA } from '../db/migrations';
import { LEDGER_QUEUE } from './topology';

const CHARGE_PREFIX = 'internal.charge.';

type Transaction = { gross_amount: number; fee_amount: number; net_amount: number };
const amountsOf = (t: Transaction) => ({ gross: t.gross_amount, fee: t.fee_amount, net: t.net_amount });

/**
 * The order and what the message says about its money. Every name the queue's bindings let in is one
 * the ledger uses; any other name, or a payload its contract refuses, can never be applied and is
 * parked (UnprocessableMessageError), never acked: it may carry money.
 */
export function readOrderMessage(message: IncomingMessage): {
  orderId: string;
  message: OrderMessage;
  /** A refund the PSP did not make: the newest hold its failure covers (releaseFailedRefund), or null. */
  releasesRefund: number | null;
} | null {
  const { name, payload } = message;
  if (name.startsWith(CHARGE_PREFIX)) {
    const state = readMessagePart(ChargeState, payload, name);
    const refund = state.refund;
    // The payment's amounts, once paid: a due-date charge's differ from the charge's (order-funds.ts).
    const { amount_paid: paid, fee_amount: fee, net_amount: net } = state;
    const amounts =
      paid && fee !== undefined && net !== undefined ? { gross: paid.amount, fee, net } : undefined;
    return {
      orderId: state.order_uuid,
      message: {
        kind: 'charge',
        status: state.status,
        version: state.version,
        ...(amounts ? { amounts } : {}),
      },
      releasesRefund: refund?.status === 'FAILED' ? refund.hold_seq : null,
    };
  }
  switch (name) {
    case PaymentEvents.PIX_QR_CODE_CREATED: {
      const data = readMessagePart(PaymentPixQrCodeCreatedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PENDING', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    case PaymentEvents.APPROVED: {
      const data = readMessagePart(PaymentApprovedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PAID', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    case PaymentEvents.REFUNDED: {
      const data = readMessagePart(PaymentRefundedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'REFUNDED', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    // For the seller: the hold of a failed refund is given back by the internal state that comes with it.
    case PaymentEvents.REFUND_FAILED:
      return null;
    default:
      throw new UnprocessableMessageError(`the ledger knows no message named ${name}`);
  }
}

/** A ledger message as read before it joins a batch: whose money, and what it says (null: nothing). */
export interface LedgerMessage {
  owner: FundsOwner;
  read: NonNullable<ReturnType<typeof readOrderMessage>>;
}

/** readOrderMessage plus its owner from the AMQP headers; what neither refuses is one to batch. */
export function readLedgerMessage(incoming: IncomingMessage): LedgerMessage | null {
  const read = readOrderMessage(incoming);
  if (!read) return null;
  // Ids as PostgreSQL answers them (lower case): the batch finds records and balances by these keys.
  const sellerId = readMessagePart(uuid, incoming.headers['x-seller-id'], 'x-seller-id header').toLowerCase();
  const environment = readMessagePart(Environment, incoming.headers['x-environment'], 'x-environment header');
  return { owner: { sellerId, environment }, read: { ...read, orderId: read.orderId.toLowerCase() } };
}

type Batch = Array<BatchedMessage<LedgerMessage | null>>;

/**
 * Feeds the ledger from payments (bound to `payment.*` and `internal.charge.*`), a batch of messages
 * at a time (the kit's batchedIdempotentHandler): the entries, the orders' records and the processed
 * message ids commit together, so each message is applied exactly once. A batch that fails (the
 * database restarting) is written again one message at a time; a message that fails alone goes
 * through the retry queue and comes back under its own name; one that can never be read is parked in
 * the dead queue for an operator (docs/messaging.md), never silently dropped, since it may carry money.
 */
export function ledgerHandler(runtime: Runtime): MessageHandler {
  const write = async (batch: Batch): Promise<ReadonlySet<string>> => {
    // A failed refund gives its hold back through db/refund-holds.ts, one message at a time.
    const releases = batch.some((item) => item.value?.read.releasesRefund != null);
    return releases ? writeOneByOne(runtime, batch) : writeTogether(runtime, batch);
  };
  // A failed batch is written again one message at a time on one connection, not all at once: the
  // pool is shared with the API and the payouts.
  return batchedIdempotentHandler(LEDGER_QUEUE, readLedgerMessage, write, {
    maxBatch: 100,
    retryOneAtATime: true,
  });
}

const ids = (batch: Batch) => batch.map((item) => item.message.id);

/** The batch's new messages that say something to the ledger, in order, and their sellers. */
function toApply(batch: Batch, fresh: ReadonlySet<string>) {
  const todo: Array<{ item: BatchedMessage<unknown>; owner: FundsOwner; read: LedgerMessage['read'] }> = [];
  const owners = new Map<string, FundsOwner>();
  for (const item of batch) {
    if (!item.value || !fresh.has(item.message.id)) continue;
    todo.push({ item, ...item.value });
    owners.set(ownerKey(item.value.owner), item.value.owner);
  }
  return { todo, owners: [...owners.values()] };
}
const causeOf = (item: BatchedMessage<unknown>) => `${item.message.name} ${item.message.id}`;

function logPosted(logger: Logger, item: BatchedMessage<unknown>, orderId: string, posted: string[]): void {
  if (posted.length === 0) return;
  logger.info({ order_uuid: orderId, message: item.message.name, entries: posted }, 'ledger entries posted');
}

/**
 * The usual batch: the sellers' locks, the orders' records and the balances are read once, the
 * messages applied in their order in memory (domain/order-ledger.ts, domain/journal.ts), and
 * everything written back in one statement (db/ledger-batches.ts).
 */
async function writeTogether(runtime: Runtime, batch: Batch): Promise<ReadonlySet<string>> {
  return runtime.sql.transaction('select 1', async (_rows, query) => {
    const fresh = await recordProcessedMessages(query, SCHEMA, LEDGER_QUEUE, ids(batch));
    const { todo, owners } = toApply(batch, fresh);
    if (todo.length === 0) return fresh;
    await lockSellers(query, owners);
    const records = await lockOrderRecords(query, [...new Set(todo.map(({ read }) => read.orderId))]);
    const existed = new Set(records.keys());
    const now = new Date();
    const decided = todo.map(({ item, owner, read }) => {
      const next = nextOrderRecord(records.get(read.orderId) ?? null, owner, read.orderId, read.message, now);
      records.set(read.orderId, next.row);
      return { item, owner, orderId: read.orderId, entries: next.entries };
    });
    const entries: BatchEntry[] = [];
    if (decided.some((d) => d.entries.length > 0)) {
      const positions = await positionsOf(query, owners);
      for (const d of decided) {
        if (d.entries.length === 0) continue;
        const key = ownerKey(d.owner);
        const settled = settleEntries(positions.get(key) ?? { available: 0, debt: 0 }, d.entries);
        positions.set(key, settled.position);
        for (const entry of settled.entries)
          entries.push({
            id: randomUUID(),
            owner: d.owner,
            orderId: d.orderId,
            cause: causeOf(d.item),
            entry,
          });
      }
    }
    const touched = new Set(decided.map((d) => d.orderId));
    const rows = [...touched].map((orderId) => records.get(orderId) as OrderFundsRow);
    await writeLedgerBatch(runtime.sql, query, {
      created: rows.filter((row) => !existed.has(row.orderId)),
      changed: rows.filter((row) => existed.has(row.orderId)),
      entries,
    });
    for (const d of decided)
      logPosted(
        runtime.logger,
        d.item,
        d.orderId,
        d.entries.map((e) => e.kind),
      );
    return fresh;
  });
}

/** A batch with a failed refund in it: each message through the ORM's path, in one transaction. */
async function writeOneByOne(runtime: Runtime, batch: Batch): Promise<ReadonlySet<string>> {
  return runtime.orm.em.fork().transactional(async (em) => {
    const sql = sqlInTransaction(runtime.sql, em);
    const { query } = sql;
    const fresh = await recordProcessedMessages(query, SCHEMA, LEDGER_QUEUE, ids(batch));
    const { todo, owners } = toApply(batch, fresh);
    // Every seller's lock first, in the order the usual batches take them (no row is locked yet).
    await lockSellers(query, owners);
    for (const { item, owner, read } of todo) {
      const posted: string[] = await recordOrderMessage(
        em,
        sql,
        owner,
        read.orderId,
        read.message,
        causeOf(item),
      );
      await em.flush();
      if (
        read.releasesRefund !== null &&
        (await releaseFailedRefund(em, sql, owner, read.orderId, read.releasesRefund))
      )
        posted.push('refund_released');
      await em.flush();
      logPosted(runtime.logger, item, read.orderId, posted);
    }
    return fresh;
  });
}
