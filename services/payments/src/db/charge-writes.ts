import {
  OutboxMessageSchema,
  insertBatch,
  rowsOf,
  type WriteBatch,
  type OutboxMessage,
  type Sql,
} from '@seller-api/service-kit';
import { TransactionSchema, type Transaction } from './entities';

interface NewCharge {
  transaction: Transaction;
  event: OutboxMessage;
}

/**
 * New charges' transactions and their `payment.pix_qr_code_created` events, written in one statement
 * per batch of concurrent requests (WriteBatch). A batch that fails (an order's charge already made,
 * say) is written again one charge at a time, so only that charge's caller sees the unique violation.
 */
export class ChargeWrites {
  private readonly batch: WriteBatch<NewCharge, void>;

  constructor(sql: Sql) {
    this.batch = insertBatch(sql, (charges) => [
      rowsOf(
        TransactionSchema,
        charges.map((c) => c.transaction),
      ),
      rowsOf(
        OutboxMessageSchema,
        charges.map((c) => c.event),
      ),
    ]);
  }

  insert(transaction: Transaction, event: OutboxMessage): Promise<void> {
    return this.batch.submit({ transaction, event });
  }
}
