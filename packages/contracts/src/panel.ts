import { z } from 'zod';
import { MESSAGES } from './messages';
import { Environment, Role, dataResponse, datetime, listResponse, unlessMissing } from './common';
import { strictInput } from './strict';
import { ReviewReason, Withdrawal } from './finance';

// The seller panel's own routes (`/panel/api/`): sessions and API keys, which only a logged-in person
// may manage. Everything else the panel shows goes through the public API's routes and contracts.

/** Session cookies are only as good as the CSRF token that comes with them (`X-CSRF-Token`). */
export const CSRF_HEADER = 'x-csrf-token';

export const PanelLoginRequest = strictInput(
  z.object({
    email: z.email({ error: unlessMissing(MESSAGES.email) }).max(320),
    password: z.string().min(1).max(1024),
  }),
);
export type PanelLoginRequest = z.infer<typeof PanelLoginRequest>;

/** Who is logged in, which environment the panel shows, and the token every change must carry. */
export const PanelSession = z.object({
  email: z.string(),
  role: Role,
  seller_name: z.string().nullable(),
  environment: Environment,
  csrf_token: z.string(),
  expires_at: datetime,
});
export type PanelSession = z.infer<typeof PanelSession>;
export const PanelSessionResponse = dataResponse(PanelSession);
export type PanelSessionResponse = z.infer<typeof PanelSessionResponse>;
/** `GET /panel/api/session`: null when nobody is logged in (not a 401: the login page is normal). */
export const CurrentSessionResponse = dataResponse(PanelSession.nullable());
export type CurrentSessionResponse = z.infer<typeof CurrentSessionResponse>;

export const PanelEnvironmentRequest = strictInput(z.object({ environment: Environment }));
export type PanelEnvironmentRequest = z.infer<typeof PanelEnvironmentRequest>;

/** The active key of one environment, as Settings > API Keys shows it: never the key itself. */
export const ApiKeySummary = z.object({
  environment: Environment,
  label: z.string().nullable(),
  prefix: z.string(),
  last4: z.string(),
  created_at: datetime,
});
export type ApiKeySummary = z.infer<typeof ApiKeySummary>;
export const ApiKeyListResponse = dataResponse(z.object({ results: z.array(ApiKeySummary) }));
export type ApiKeyListResponse = z.infer<typeof ApiKeyListResponse>;

export const CreateApiKeyRequest = strictInput(
  z.object({
    environment: Environment,
    label: z.string().trim().max(100).nullable().optional(),
  }),
);
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** The 201 answer: the only time the plain key is shown. */
export const CreatedApiKey = ApiKeySummary.extend({ key: z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;
export const CreatedApiKeyResponse = dataResponse(CreatedApiKey);
export type CreatedApiKeyResponse = z.infer<typeof CreatedApiKeyResponse>;

/**
 * An entry of `GET /ops/withdrawals/` as the withdrawals service presents it: a withdrawal plus the
 * environment and the seller it belongs to (the panel's operator queue shows both), why it waits for
 * an operator (`review_reasons`, empty when it was cleared for the automatic approval) and the seller's
 * withdrawal suspension in force, if any (docs/finance.md, "Payout controls").
 */
export const OperatorWithdrawal = Withdrawal.extend({
  environment: Environment,
  seller: z.object({
    id: z.string(),
    name: z.string(),
    suspension: z.object({ reason: z.string(), suspended_at: datetime, suspended_by: z.string() }).nullable(),
  }),
  review_reasons: z.array(ReviewReason),
});
export const OperatorWithdrawalResponse = dataResponse(OperatorWithdrawal);
export type OperatorWithdrawalResponse = z.infer<typeof OperatorWithdrawalResponse>;
export type OperatorWithdrawal = z.infer<typeof OperatorWithdrawal>;
export const OperatorWithdrawalListResponse = dataResponse(listResponse(OperatorWithdrawal));
export type OperatorWithdrawalListResponse = z.infer<typeof OperatorWithdrawalListResponse>;
