/**
 * Verifies seller-api webhook deliveries. The dispatcher signs with `signatureFor` from this very module, so
 * sender and receiver share one implementation. No dependencies beyond `node:crypto`: copy this file into
 * your project or install the package.
 *
 * Signed content: `<X-Webhook-Event-Id>.<X-Webhook-Timestamp>.<raw body>`, HMAC-SHA256, lowercase hex,
 * sent as `X-Webhook-Signature: sha256=<hex>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header names of a delivery (HTTP header names are case-insensitive; these are the canonical forms). */
export const WEBHOOK_VERIFY_HEADERS = {
  EVENT: 'X-Webhook-Event',
  EVENT_ID: 'X-Webhook-Event-Id',
  TIMESTAMP: 'X-Webhook-Timestamp',
  SIGNATURE: 'X-Webhook-Signature',
} as const;

/** Receivers refuse a timestamp further than this from their clock, in either direction (5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SIGNATURE_PREFIX = 'sha256=';

export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_body';

/** Why a delivery was refused. Answer it with a 4xx (400 or 401); never process the body. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The `X-Webhook-Signature` value of a delivery: `sha256=` followed by the lowercase hex HMAC-SHA256 of
 * `"<eventId>.<timestamp>.<rawBody>"`.
 *
 * The key is the whole secret string as UTF-8 bytes, `whsec_` prefix included (it is not base64-decoded).
 * `rawBody` must be the exact bytes sent or received: pass a Buffer as read from the socket, not a body
 * that was parsed and re-serialised. A string body is taken as UTF-8.
 */
export function signatureFor(
  secret: string,
  eventId: string,
  timestamp: number | string,
  rawBody: string | Uint8Array,
): string {
  // An empty key would let anyone compute a valid signature: refuse it rather than fail open.
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('signatureFor: secret must be a non-empty string');
  }
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${eventId}.${String(timestamp)}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return SIGNATURE_PREFIX + hmac.digest('hex');
}

/**
 * The Standard Webhooks headers (standardwebhooks.com) every signed delivery also carries, so receivers
 * can verify with the `standardwebhooks` or `svix` packages. `webhook-id` is the event id (the same as
 * X-Webhook-Event-Id) and `webhook-timestamp` the same unix seconds as X-Webhook-Timestamp.
 */
export const STANDARD_WEBHOOK_HEADERS = {
  ID: 'webhook-id',
  TIMESTAMP: 'webhook-timestamp',
  SIGNATURE: 'webhook-signature',
} as const;

const SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of the Standard Webhooks signature: the secret's text after `whsec_`, base64-decoded.
 * Secrets are issued in standard base64; older ones in base64url, whose alphabet Node's decoder also
 * reads, so both give the same 32 random bytes.
 */
export function standardSigningKey(secret: string): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new TypeError('standardSigningKey: secret must be whsec_ followed by base64');
  }
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  // Text that decodes to no bytes (empty, or no base64 characters) would be an empty, forgeable key.
  if (key.length === 0) {
    throw new TypeError('standardSigningKey: secret must be whsec_ followed by base64');
  }
  return key;
}

/**
 * The `webhook-signature` value of a delivery: `v1,` followed by the standard-base64 HMAC-SHA256 of
 * `"<webhook-id>.<webhook-timestamp>.<rawBody>"`, keyed by `standardSigningKey(secret)`.
 */
export function standardSignatureFor(
  secret: string,
  messageId: string,
  timestamp: number | string,
  rawBody: string | Uint8Array,
): string {
  const hmac = createHmac('sha256', standardSigningKey(secret));
  hmac.update(`${messageId}.${String(timestamp)}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return `v1,${hmac.digest('base64')}`;
}

/** Incoming headers as Node, Express, Fastify and most frameworks give them (any header-name case). */
export type WebhookHeaders = Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The webhook's secret (`whsec_...`), or several while rotating: the delivery is valid if any matches. */
  secret: string | readonly string[];
  headers: WebhookHeaders;
  /** The exact request body received, before any JSON parsing (e.g. `express.raw({ type: 'application/json' })`). */
  rawBody: string | Uint8Array;
  /** Largest accepted distance between X-Webhook-Timestamp and `now`, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The receiver's clock, in milliseconds since the epoch (or a Date). Default `Date.now()`. */
  now?: number | Date;
}

export interface VerifiedWebhook<Data = Record<string, unknown>> {
  /** X-Webhook-Event-Id (`evt_...`): the same on every retry and resend; de-duplicate on it. */
  eventId: string;
  /** X-Webhook-Timestamp, unix seconds. */
  timestamp: number;
  /** `event` of the envelope, such as `order.paid`. */
  event: string;
  /** `occurred_at` of the envelope (ISO 8601 UTC). */
  occurredAt: string;
  /** `delivery_attempt` of the envelope (1 for the first attempt). */
  deliveryAttempt: number;
  /** `data` of the envelope: the event's payload. */
  data: Data;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value = headers[key];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first.trim() !== '') return first.trim();
  }
  return undefined;
}

function requireHeader(headers: WebhookHeaders, name: string): string {
  const value = header(headers, name);
  if (value === undefined) {
    throw new WebhookVerificationError('missing_header', `Missing ${name} header`);
  }
  return value;
}

/** Constant-time for equal lengths; a different length is a mismatch (the length of a signature is public). */
function sameSignature(expected: string, received: Buffer): boolean {
  const wanted = Buffer.from(expected, 'utf8');
  if (wanted.length !== received.length) return false;
  return timingSafeEqual(wanted, received);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a delivery and returns its envelope. In order: the three headers are present; X-Webhook-Timestamp
 * is unix seconds within `toleranceSeconds` of `now` (either way); X-Webhook-Signature matches one of the
 * secrets (constant-time comparison); the body is a JSON envelope. Throws `WebhookVerificationError`
 * otherwise, whose `code` says which check failed.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  options: VerifyWebhookOptions,
): VerifiedWebhook<Data> {
  const { headers, rawBody, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS } = options;
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret === '')) {
    throw new TypeError('verifyWebhook: secret must be a non-empty string or a non-empty array of them');
  }
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError(
      'verifyWebhook: rawBody must be the raw request body (string or Buffer), not a parsed object',
    );
  }

  const eventId = requireHeader(headers, WEBHOOK_VERIFY_HEADERS.EVENT_ID);
  const timestampText = requireHeader(headers, WEBHOOK_VERIFY_HEADERS.TIMESTAMP);
  const signature = requireHeader(headers, WEBHOOK_VERIFY_HEADERS.SIGNATURE);

  if (!/^\d{1,15}$/.test(timestampText)) {
    throw new WebhookVerificationError(
      'invalid_timestamp',
      `${WEBHOOK_VERIFY_HEADERS.TIMESTAMP} must be unix seconds`,
    );
  }
  const timestamp = Number(timestampText);
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  const skewSeconds = Math.abs(nowMs / 1000 - timestamp);
  if (!(skewSeconds <= toleranceSeconds)) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `${WEBHOOK_VERIFY_HEADERS.TIMESTAMP} is ${Math.round(skewSeconds)} s away from the receiver's clock ` +
        `(tolerance ${toleranceSeconds} s)`,
    );
  }

  // Hex is case-insensitive; the sender writes lowercase. Every secret is compared, with no early exit.
  const received = Buffer.from(signature.toLowerCase(), 'utf8');
  let matched = false;
  for (const secret of secrets) {
    const ok = sameSignature(signatureFor(secret, eventId, timestampText, rawBody), received);
    matched = ok || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'invalid_signature',
      `${WEBHOOK_VERIFY_HEADERS.SIGNATURE} does not match the body signed with the webhook secret`,
    );
  }

  const text =
    typeof rawBody === 'string'
      ? rawBody
      : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The body is not valid JSON');
  }
  if (
    !isRecord(body) ||
    typeof body.event !== 'string' ||
    typeof body.occurred_at !== 'string' ||
    typeof body.delivery_attempt !== 'number' ||
    !Number.isInteger(body.delivery_attempt) ||
    !isRecord(body.data)
  ) {
    throw new WebhookVerificationError(
      'invalid_body',
      'The body is not a webhook envelope {event, occurred_at, delivery_attempt, data}',
    );
  }
  return {
    eventId,
    timestamp,
    event: body.event,
    occurredAt: body.occurred_at,
    deliveryAttempt: body.delivery_attempt,
    data: body.data as Data,
  };
}
