import { z } from 'zod';
import { MESSAGES, message } from './messages';
import { strictInput } from './strict';
import {
  ListQuery,
  MAX_AMOUNT,
  PixKeyType,
  cents,
  dataResponse,
  datetime,
  listResponse,
  Environment,
  uuid,
} from './common';
import { cleanTaxId, isValidCpf } from './taxid';

/** Withdrawal statuses and their events (docs/finance.md, "State machine"). */
export const WithdrawalStatus = z.enum([
  'PENDING',
  'APPROVED',
  'DENIED',
  'PROCESSING',
  'PAID',
  'FAILED',
  'CANCELED',
]);
export type WithdrawalStatus = z.infer<typeof WithdrawalStatus>;

/**
 * `GET /finance/balance/` data. `available_amount` is never below zero: a refund or chargeback of money
 * the seller already withdrew becomes a debt in the ledger, repaid by the next sales (docs/finance.md).
 * `pending_amount` sums withdrawals in flight.
 */
export const Balance = z.object({
  available_amount: cents,
  pending_amount: cents,
  currency: z.literal('BRL'),
});
export type Balance = z.infer<typeof Balance>;
export const BalanceResponse = dataResponse(Balance);
export type BalanceResponse = z.infer<typeof BalanceResponse>;

const PHONE_KEY = /^\+55\d{10,11}$/;
const UUID_KEY = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const emailKey = z.email();

/** Why `key` is not a valid PIX key of `type`, or null when it is (docs/finance-api.md). */
export function pixKeyProblem(key: string, type: PixKeyType): string | null {
  switch (type) {
    case 'email':
      return emailKey.safeParse(key).success ? null : MESSAGES.email;
    case 'cpf':
      return isValidCpf(cleanTaxId(key)) ? null : MESSAGES.pixKeyCpf;
    case 'phone':
      return PHONE_KEY.test(key) ? null : MESSAGES.pixKeyPhone;
    case 'random':
      return UUID_KEY.test(key) ? null : MESSAGES.uuid;
  }
}

/** Stored form of a key: a CPF keeps its 11 digits only; a random key is lowercased as the DICT has it. */
export function normalizePixKey(key: string, type: PixKeyType): string {
  if (type === 'cpf') return cleanTaxId(key);
  if (type === 'random') return key.toLowerCase();
  return key;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `POST /finance/withdrawals/` body. The minimum (`WITHDRAWAL_MIN_AMOUNT`) and the available balance
 * are configuration and state, so the domain checks them (a 400 on `amount`).
 */
export const CreateWithdrawalRequest = strictInput(
  z
    .object({
      amount: z.int().min(1).max(MAX_AMOUNT),
      // 77 characters is the DICT's longest key (an e-mail).
      pix_key: z.string().trim().min(1).max(77),
      pix_key_type: PixKeyType,
    })
    .superRefine(
      (body, ctx) => {
        const problem = pixKeyProblem(body.pix_key, body.pix_key_type);
        if (problem !== null) ctx.addIssue({ code: 'custom', path: ['pix_key'], message: problem });
      },
      // Runs when the key and its type are readable even if `amount` failed, to report both at once.
      {
        when: (payload) =>
          isRecord(payload.value) &&
          typeof payload.value.pix_key === 'string' &&
          PixKeyType.safeParse(payload.value.pix_key_type).success,
      },
    )
    .transform((body) => ({ ...body, pix_key: normalizePixKey(body.pix_key, body.pix_key_type) })),
);
export type CreateWithdrawalRequest = z.infer<typeof CreateWithdrawalRequest>;
export type CreateWithdrawalInput = z.input<typeof CreateWithdrawalRequest>;

/**
 * Why a PENDING withdrawal waits for an operator instead of the automatic approval (docs/finance.md,
 * "Payout controls"): automatic approval is off, the amount is not below `WITHDRAWAL_AUTO_APPROVE_BELOW`,
 * the seller's rolling 24 h count or amount of automatic approvals would go over its cap, or the PIX key
 * was never paid to by this seller before (`WITHDRAWAL_NEW_PIX_KEY_REVIEW`), or the seller was suspended
 * while it waited (an operator decides it after the suspension is lifted).
 */
export const ReviewReason = z.enum([
  'auto_approval_off',
  'amount_over_auto_limit',
  'daily_count_cap',
  'daily_amount_cap',
  'new_pix_key',
  'seller_suspended',
]);
export type ReviewReason = z.infer<typeof ReviewReason>;

/** A withdrawal as every finance and ops route shows it; `pix_key` is always masked. */
export const Withdrawal = z.object({
  uuid,
  status: WithdrawalStatus,
  amount: cents,
  pix_key: z.string().meta({ description: 'Masked according to pix_key_type' }),
  pix_key_type: PixKeyType,
  requested_at: datetime,
  decided_at: datetime.nullable(),
  paid_at: datetime.nullable(),
  failure_reason: z.string().nullable(),
  deny_reason: z.string().nullable(),
  canceled_at: datetime.nullable(),
  cancel_reason: z.string().nullable(),
});
export type Withdrawal = z.infer<typeof Withdrawal>;
export const WithdrawalResponse = dataResponse(Withdrawal);
export type WithdrawalResponse = z.infer<typeof WithdrawalResponse>;

export const WithdrawalList = listResponse(Withdrawal);
export type WithdrawalList = z.infer<typeof WithdrawalList>;
export const WithdrawalListResponse = dataResponse(WithdrawalList);
export type WithdrawalListResponse = z.infer<typeof WithdrawalListResponse>;

/** Statuses not final yet: the money is still on its way (docs/finance.md, "State machine"). */
export const WITHDRAWAL_STATUSES_UNDER_WAY: readonly WithdrawalStatus[] = [
  'PENDING',
  'APPROVED',
  'PROCESSING',
];

/**
 * `status` of the seller's list: one status or several separated by commas (`PENDING,PROCESSING`),
 * read as a set of statuses any of which a withdrawal may have.
 */
export const WithdrawalStatusFilter = z
  .string()
  .meta({
    description: `One or more of ${WithdrawalStatus.options.join(', ')}, separated by commas`,
    example: 'PENDING,APPROVED,PROCESSING',
  })
  .transform((value, ctx) => {
    const names = value.split(',').map((name) => name.trim());
    const unknown = names.filter((name) => !WithdrawalStatus.safeParse(name).success);
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: message('withdrawalStatuses', { values: WithdrawalStatus.options.join(', ') }),
      });
      return z.NEVER;
    }
    return [...new Set(names)] as WithdrawalStatus[];
  });

export const WithdrawalListQuery = strictInput(
  ListQuery.extend({ status: WithdrawalStatusFilter.optional() }),
);
export type WithdrawalListQuery = z.infer<typeof WithdrawalListQuery>;

/** `GET /ops/withdrawals/`: the pending queue across sellers by default; `environment` narrows it. */
export const OpsWithdrawalListQuery = strictInput(
  ListQuery.extend({
    status: WithdrawalStatus.default('PENDING'),
    environment: Environment.optional(),
  }),
);
export type OpsWithdrawalListQuery = z.infer<typeof OpsWithdrawalListQuery>;

export const WithdrawalPathParams = z.object({ uuid });
export type WithdrawalPathParams = z.infer<typeof WithdrawalPathParams>;

/**
 * `POST /ops/withdrawals/{uuid}/deny/` body. `reason` is optional because action routes accept an
 * empty body (docs/api.md, "Requests"); it becomes `deny_reason`.
 */
export const DenyWithdrawalRequest = strictInput(
  z.object({
    reason: z.string().trim().min(1).max(500).optional(),
  }),
);
export type DenyWithdrawalRequest = z.infer<typeof DenyWithdrawalRequest>;

/** `POST /ops/withdrawals/{uuid}/cancel/` body: an action route, so the body may be empty. */
export const CancelWithdrawalRequest = strictInput(
  z.object({
    reason: z.string().trim().min(1).max(500).optional(),
  }),
);
export type CancelWithdrawalRequest = z.infer<typeof CancelWithdrawalRequest>;

// ---------------------------------------------------------------------------------------------------
// Withdrawal suspensions of a seller (docs/finance.md, "Payout controls")
// ---------------------------------------------------------------------------------------------------

export const SellerPathParams = z.object({ seller_id: uuid });
export type SellerPathParams = z.infer<typeof SellerPathParams>;

/** Suspending and lifting a suspension both need a reason: it is kept with who and when. */
export const SuspensionRequest = strictInput(z.object({ reason: z.string().trim().min(1).max(500) }));
export type SuspensionRequest = z.infer<typeof SuspensionRequest>;

/**
 * One suspension of a seller's withdrawals in one environment: in force while `lifted_at` is null.
 * `suspended_by` and `lifted_by` are the operators' user ids.
 */
export const WithdrawalSuspension = z.object({
  id: uuid,
  seller: z.object({ id: uuid, name: z.string().nullable() }),
  environment: Environment,
  reason: z.string(),
  suspended_at: datetime,
  suspended_by: z.string(),
  lifted_at: datetime.nullable(),
  lifted_by: z.string().nullable(),
  lift_reason: z.string().nullable(),
});
export type WithdrawalSuspension = z.infer<typeof WithdrawalSuspension>;
export const WithdrawalSuspensionResponse = dataResponse(WithdrawalSuspension);
export type WithdrawalSuspensionResponse = z.infer<typeof WithdrawalSuspensionResponse>;
export const WithdrawalSuspensionListResponse = dataResponse(listResponse(WithdrawalSuspension));
export type WithdrawalSuspensionListResponse = z.infer<typeof WithdrawalSuspensionListResponse>;

/** `GET /ops/withdrawals/suspensions/`: those in force by default; `seller_id` for one seller's history. */
export const SuspensionListQuery = strictInput(
  ListQuery.extend({
    active: z
      .enum(['true', 'false'])
      .default('true')
      .transform((value) => value === 'true')
      .meta({ description: 'true (default): suspensions in force only; false: every one, lifted included' }),
    seller_id: uuid.optional(),
  }),
);
export type SuspensionListQuery = z.infer<typeof SuspensionListQuery>;
