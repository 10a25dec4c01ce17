import { z } from 'zod';
import { MAX_AMOUNT, datetimeInput, uuid } from './common';
import { OrderStatus } from './order-status';
import { AmountPaid, DueDateTermsRecord } from './due-date';

/** Payment transaction statuses (docs/pix.md, "The money status of an order"). */
export const TransactionStatus = z.enum(['CREATED', 'APPROVED', 'REFUNDED']);
export type TransactionStatus = z.infer<typeof TransactionStatus>;

/** How an order was or will be paid; PIX is the only method offered today. */
export const PaymentMethod = z.enum(['PIX', 'CARD', 'BOLETO']);
export type PaymentMethod = z.infer<typeof PaymentMethod>;

/**
 * PIX charge data in the create-order response (docs/pix.md). `qr_code_image_base64` is a bare
 * base64 PNG (no `data:` prefix), null only when `copy_and_paste` is unavailable.
 */
export const PixCharge = z.object({
  qr_code_id: z.string(),
  copy_and_paste: z.string(),
  qr_code_image_base64: z.string().nullable(),
  transaction_uuid: uuid.nullable(),
});
export type PixCharge = z.infer<typeof PixCharge>;

/**
 * `horario` of API Pix: RFC 3339 date-time, whose `T` and `Z` may be written in lower case (RFC 3339
 * section 5.6); read as the same instant.
 */
const pspDatetime = z.string().transform((value, ctx) => {
  const upper = value.replace(/^(\d{4}-\d{2}-\d{2})t/, '$1T').replace(/z$/, 'Z');
  const parsed = datetimeInput.safeParse(upper);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: 'Must be an RFC 3339 date-time' });
    return z.NEVER;
  }
  return upper;
});

/** API Pix `EndToEndId`: exactly 32 letters and digits. */
export const PspEndToEndId = z
  .string()
  .regex(/^[A-Za-z0-9]{32}$/, { error: 'Must be 32 letters and digits' });

/** A txid as a payment carries it back: 1 to 35 letters and digits (26 to 35 for a dynamic charge). */
export const PspTxid = z
  .string()
  .regex(/^[A-Za-z0-9]{1,35}$/, { error: 'Must be 1 to 35 letters and digits' });

/** Reais with two decimals, as API Pix writes amounts ("150.00"). */
const pspValor = z.string().regex(/^\d{1,10}\.\d{2}$/, { error: 'Must be a decimal amount with 2 places' });

/** API Pix `Devolucao.status`. */
export const PspRefundOutcome = z.enum(['EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO']);
export type PspRefundOutcome = z.infer<typeof PspRefundOutcome>;

/**
 * A refund of a received payment as API Pix reports it (`Devolucao`), in a notification's
 * `pix[].devolucoes` or the answer of `GET /pix/{e2eid}/devolucao/{id}`. `id` is ours (the refund id we
 * asked with). Loose: PSPs add fields.
 */
export const PspRefundReport = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9]{1,35}$/, { error: 'Must be 1 to 35 letters and digits' }),
  rtrId: z.string().optional(),
  valor: pspValor,
  status: PspRefundOutcome,
  motivo: z.string().optional(),
  horario: z
    .looseObject({ solicitacao: z.string().optional(), liquidacao: z.string().optional() })
    .optional(),
});
export type PspRefundReport = z.infer<typeof PspRefundReport>;

/**
 * One payment in a notification of the Central Bank's standard "API Pix" (`POST /psp/webhook/pix`,
 * docs/pix.md). `valor` is a decimal string in reais, as the standard has it. `txid` is optional (a PIX
 * paid to the key without a charge has none). `devolucoes`, when present, reports the refunds of that
 * payment: a notification may come only for them. Loose: PSPs add fields.
 */
export const PspPixPayment = z.looseObject({
  endToEndId: PspEndToEndId,
  txid: PspTxid.optional(),
  valor: pspValor,
  horario: pspDatetime,
  // An array in the schema; the spec's own example (pixWebhook1) sends one object: read as one refund.
  devolucoes: z.union([z.array(PspRefundReport), PspRefundReport.transform((one) => [one])]).optional(),
});
export type PspPixPayment = z.infer<typeof PspPixPayment>;

/**
 * The notification's envelope. Each item is read on its own (PspPixPayment): one item the standard's
 * schema refuses does not refuse the others.
 */
export const PspPixNotification = z.looseObject({ pix: z.array(z.unknown()).max(1000) });
export type PspPixNotification = z.infer<typeof PspPixNotification>;

/**
 * What became of each payment of a notification, in its order: `applied` (the order is PAID now),
 * `duplicate` (seen before), `late` or `duplicate_charge` (the order was not payable or already paid:
 * the payer is refunded), `unknown_txid` (no txid, or none of ours) and `amount_mismatch` (nothing
 * changed; kept for an operator), `invalid` (not a payment the standard allows). An item that only
 * reports refunds (`devolucoes`) of a payment seen before answers `duplicate`; its refunds are applied.
 */
export const PspPaymentOutcome = z.enum([
  'applied',
  'duplicate',
  'late',
  'unknown_txid',
  'amount_mismatch',
  'duplicate_charge',
  // The item does not follow the standard's schema (logged for an operator; the others are applied).
  'invalid',
]);
export type PspPaymentOutcome = z.infer<typeof PspPaymentOutcome>;

export const PspPixNotificationResponse = z.object({
  message: z.string(),
  data: z.object({ outcomes: z.array(PspPaymentOutcome) }),
});
export type PspPixNotificationResponse = z.infer<typeof PspPixNotificationResponse>;

/**
 * Internal: orders asks payments for the PIX charge of a new order (`POST /internal/charges/`, never
 * routed by the gateway). Idempotent on `order_uuid`: asking again returns the same charge.
 */
export const CreateChargeRequest = z.object({
  order_uuid: uuid,
  gross_amount: z.number().int().min(1).max(MAX_AMOUNT),
  expires_at: z.iso.datetime(),
  seller_name: z.string().nullable(),
  debtor_name: z.string().nullable(),
  debtor_document: z.string().nullable(),
  /**
   * The terms of a due-date charge (API Pix `cobv`); null or absent for an immediate one. `expires_at`
   * is then the end of the last payable date in São Paulo.
   */
  due_date: DueDateTermsRecord.nullable().optional(),
});
export type CreateChargeRequest = z.infer<typeof CreateChargeRequest>;

/**
 * Where the latest refund of a charge stands at the PSP (docs/payments.md, "Refunds"): PROCESSING
 * (accepted, `EM_PROCESSAMENTO`), REFUNDED (`DEVOLVIDO`) or FAILED (`NAO_REALIZADO`, with the PSP's
 * reason when it gave one).
 */
export const RefundStatus = z.enum(['PROCESSING', 'REFUNDED', 'FAILED']);
export type RefundStatus = z.infer<typeof RefundStatus>;

/** Internal: the latest refund of a charge, carried by ChargeState and Charge. */
export const ChargeRefund = z.object({
  status: RefundStatus,
  /** 1 for the first refund asked of the PSP; a refund asked again after a FAILED one is the next. */
  attempt: z.int().min(1),
  amount: z.int().min(1),
  requested_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  failure_reason: z.string().nullable(),
  /**
   * The newest refund hold (withdrawals' `hold_seq`) payments had heard of when it recorded this
   * state: a FAILED refund gives the order's hold back unless a newer hold exists, which may be a
   * refund asked since (docs/finance.md, "Refunds"). 0: none heard of (an orders of an earlier release).
   */
  hold_seq: z.int().min(0),
});
export type ChargeRefund = z.infer<typeof ChargeRefund>;

/** Internal: the charge as payments made it; orders copies what the order detail and response show. */
export const Charge = z.object({
  transaction_uuid: uuid,
  order_uuid: uuid,
  status: TransactionStatus,
  method: PaymentMethod,
  txid: z.string(),
  copy_and_paste: z.string(),
  qr_code_image_base64: z.string().nullable(),
  gross_amount: z.number().int(),
  fee_amount: z.number().int(),
  net_amount: z.number().int(),
  expires_at: z.iso.datetime(),
  created_at: z.iso.datetime(),
  /**
   * When a seller's refund was last asked of the PSP (recorded before the call), null when never: a
   * charge not REFUNDED with this set may have been refunded at the PSP, its answer lost, so the ledger
   * keeps the refund's hold (docs/finance.md "Refunds"). Absent from a payments of an earlier release.
   */
  refund_asked_at: z.iso.datetime().nullable().optional(),
  /** The latest refund's state at the PSP; null when none has an outcome yet (absent: an earlier release). */
  refund: ChargeRefund.nullable().optional(),
});
export type Charge = z.infer<typeof Charge>;

/**
 * Internal: the charges of several new orders in one call (`POST /internal/charges/batch/`), as orders
 * sends the requests of concurrent creates together. Each carries the signed identity headers its own
 * `POST /internal/charges/` would have had (service-kit identity.ts), so payments checks every owner
 * exactly as it checks a single call's.
 */
export const SignedIdentity = z.object({
  /** The service that signed (absent from a signer of the previous release). */
  caller: z.string().min(1).optional(),
  identity: z.string().min(1),
  ts: z.string().min(1),
  /** The signature with the caller's key (absent from a signer of the previous release). */
  sig3: z.string().min(1).optional(),
  /** The previous release's forms, sent while a deployment is being upgraded. */
  sig: z.string().min(1).optional(),
  sig2: z.string().min(1).optional(),
});
export type SignedIdentity = z.infer<typeof SignedIdentity>;

export const MAX_CHARGES_PER_BATCH = 100;

export const CreateChargesRequest = z.object({
  charges: z
    .array(z.object({ signed: SignedIdentity, charge: CreateChargeRequest }))
    .min(1)
    .max(MAX_CHARGES_PER_BATCH),
});
export type CreateChargesRequest = z.infer<typeof CreateChargesRequest>;

/** One result per requested charge, in order: the answer its own call would have had. */
export const ChargeResult = z.union([
  z.object({ status: z.union([z.literal(200), z.literal(201)]), charge: Charge }),
  z.object({ status: z.int().min(400).max(599), code: z.string(), message: z.string() }),
]);
export type ChargeResult = z.infer<typeof ChargeResult>;

export const CreateChargesResponse = z.object({
  message: z.string(),
  data: z.object({ results: z.array(ChargeResult) }),
});
export type CreateChargesResponse = z.infer<typeof CreateChargesResponse>;

/**
 * Internal (never a webhook): the money state of an order as payments decided it, published on
 * `payments.events` with routing keys `internal.charge.<status>` and returned by the internal action
 * routes. `version` grows with every change, so a consumer can ignore a late, older message.
 */
export const ChargeState = z.object({
  order_uuid: uuid,
  status: OrderStatus,
  previous_status: OrderStatus.nullable(),
  version: z.int().min(0),
  paid_at: z.iso.datetime().nullable(),
  changed_at: z.iso.datetime(),
  /**
   * The latest refund's state. A change of it alone (PROCESSING, FAILED) is a new version with the same
   * status, published as `internal.charge.<status>`. Absent from a payments of an earlier release.
   */
  refund: ChargeRefund.nullable().optional(),
  /**
   * What the payment paid and its components, set with PAID; fee_amount and net_amount are of it
   * (for a due-date charge the amount paid is not the order's). Absent from a payments of an earlier
   * release, and null before payment.
   */
  amount_paid: AmountPaid.nullable().optional(),
  fee_amount: z.int().min(0).optional(),
  net_amount: z.int().optional(),
});
export type ChargeState = z.infer<typeof ChargeState>;

/** Internal action routes of payments: `POST /internal/charges/{order_uuid}/{action}/`. */
export const CHARGE_ACTIONS = [
  'cancel',
  'refund',
  'sandbox-pay',
  'sandbox-expire',
  'sandbox-med',
  'sandbox-med-refunded',
  'sandbox-med-rejected',
  'sandbox-chargeback',
] as const;
export type ChargeAction = (typeof CHARGE_ACTIONS)[number];
