import {
  Charge,
  ChargeState,
  CreateChargesResponse,
  MAX_CHARGES_PER_BATCH,
  type ChargeAction,
  type CreateChargeRequest,
  type CreateChargesRequest,
  type ErrorCode,
  type Identity,
} from '@seller-api/contracts';
import {
  DeadlineWindow,
  HttpError,
  IDEMPOTENT_REPLAYED_HEADER,
  WriteBatch,
  forwardedIdempotency,
  identityHeaders,
  injectTraceContext,
  serviceUnavailable,
  signIdentity,
  signedIdentity,
  type IdempotentRequest,
  type CallKey,
} from '@seller-api/service-kit';
import { Pool } from 'undici';
import { z } from 'zod';

const PATH = '/internal/charges/';
const BATCH_PATH = '/internal/charges/batch/';
/** How long a payments build without the batch route is called one charge at a time before asking again. */
const BATCH_ROUTE_RECHECK_MS = 60_000;

type ChargeCall = CreateChargesRequest['charges'][number];
/** A charge to send, with the identity it was signed for (the batch call itself is signed with the first's). */
interface Queued {
  identity: Identity;
  call: ChargeCall;
}
type ChargeOutcome = { charge: Charge } | { error: HttpError };

/**
 * Internal HTTP to the payments service, bounded by a deadline: when payments cannot answer, the
 * create-order call fails with 503 and stores nothing (see docs/architecture.md). The charges of
 * concurrent creates go together in one `POST /internal/charges/batch/` (WriteBatch), each with the
 * signed identity its own call would have carried.
 */
export class PaymentsClient {
  private readonly pool: Pool;
  private readonly charges: WriteBatch<Queued, ChargeOutcome>;
  private readonly deadlines: DeadlineWindow;
  /** Until when payments is taken to lack the batch route (a build before it, mid-deploy). */
  private singleUntil = 0;

  constructor(
    origin: string,
    private readonly callKey: CallKey,
    private readonly timeoutMs: number,
  ) {
    this.deadlines = new DeadlineWindow(timeoutMs);
    this.pool = new Pool(origin, {
      connections: 64,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(timeoutMs, 2_000),
    });
    this.charges = new WriteBatch((calls) => this.postCharges(calls), {
      maxInFlight: 4,
      maxBatch: MAX_CHARGES_PER_BATCH,
    });
  }

  async createCharge(identity: Identity, request: CreateChargeRequest): Promise<Charge> {
    // Signed over the body its own call would send (postOne): a batch carries it for each charge.
    const signed = signedIdentity(this.callKey, identity, 'POST', PATH, JSON.stringify(request));
    // The deadline covers the wait for a place in a batch too; the creates of the same few
    // milliseconds share its timer (kit deadline.ts).
    let forget: () => void = () => undefined;
    const deadline = new Promise<never>((_, reject) => {
      forget = this.deadlines.deadline().watch(() => reject(unavailable()));
    });
    try {
      const outcome = await Promise.race([
        this.charges.submit({ identity, call: { signed, charge: request } }),
        deadline,
      ]);
      if ('error' in outcome) throw outcome.error;
      return outcome.charge;
    } finally {
      forget();
    }
  }

  /** One call for the batch; whatever goes wrong with it is every charge's 503. */
  private async postCharges(queued: Queued[]): Promise<ChargeOutcome[]> {
    const calls = queued.map((q) => q.call);
    if (Date.now() < this.singleUntil) return Promise.all(calls.map((call) => this.postOne(call)));
    const body = JSON.stringify({ charges: calls } satisfies CreateChargesRequest);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...signIdentity(this.callKey, (queued[0] as Queued).identity, 'POST', BATCH_PATH, body),
    };
    injectTraceContext(headers);
    const answer = await this.post(BATCH_PATH, headers, body);
    if (answer?.status === 404) {
      this.singleUntil = Date.now() + BATCH_ROUTE_RECHECK_MS;
      return Promise.all(calls.map((call) => this.postOne(call)));
    }
    const parsed = answer?.status === 200 ? CreateChargesResponse.safeParse(dataOf(answer.text)) : null;
    const results = parsed?.success ? parsed.data.data.results : null;
    if (!results || results.length !== calls.length) return calls.map(() => ({ error: unavailable() }));
    return results.map((result, i) =>
      'charge' in result ? { charge: result.charge } : { error: refusalOr503(result, calls[i]?.charge) },
    );
  }

  /** A charge alone, through `POST /internal/charges/` (payments builds before the batch route). */
  private async postOne(call: ChargeCall): Promise<ChargeOutcome> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...identityHeaders(call.signed),
    };
    injectTraceContext(headers);
    // The very bytes its signed identity was made for (createCharge).
    const answer = await this.post(PATH, headers, JSON.stringify(call.charge));
    if (answer && answer.status >= 400 && answer.status < 500)
      return { error: refusalOr503({ status: answer.status, ...dataOf(answer.text) }, call.charge) };
    if (answer?.status !== 200 && answer?.status !== 201) return { error: unavailable() };
    const parsed = Charge.safeParse(dataOf(answer.text)?.data);
    return parsed.success ? { charge: parsed.data } : { error: unavailable() };
  }

  /** Status and text of a POST, or null when payments did not answer in time. */
  private async post(
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; text: string } | null> {
    try {
      const res = await this.pool.request({
        path,
        method: 'POST',
        headers,
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch {
      return null;
    }
  }

  /**
   * An action on the order's charge (cancel, refund, a sandbox simulation). Payments' refusals (409,
   * 404, 403) reach the client as they are; anything else is a 503. A refusal, payments' or the PSP's
   * (payments' 502), is an ActionNotApplied: the action was certainly not made. Without an answer, or
   * with a failure that may have reached the PSP (a timeout there), it may have been.
   */
  async act(
    identity: Identity,
    orderId: string,
    action: ChargeAction,
    keyed: IdempotentRequest | null = null,
    /** A refund's ledger hold (withdrawals' hold_seq), for payments to record with the ask. */
    holdSeq?: number,
    /** The action's JSON body (a sandbox payment's date and amount); none when absent. */
    payload?: object,
  ): Promise<{ message: string; state: ChargeState | null; replayed: boolean }> {
    const path = `/internal/charges/${orderId}/${action}/${holdSeq === undefined ? '' : `?hold_seq=${holdSeq}`}`;
    let status: number;
    let text: string;
    let replayed: boolean;
    let retryAfter: string | undefined;
    // Payments keeps the key with the change, scoped to the public route and body; the signature
    // covers it, so a captured call cannot be replayed under another key.
    const forwarded = keyed ? forwardedIdempotency(keyed) : {};
    const sent = payload === undefined ? null : JSON.stringify(payload);
    const headers: Record<string, string> = {
      ...signIdentity(this.callKey, identity, 'POST', path, sent, forwarded),
      ...forwarded,
      ...(sent === null ? {} : { 'content-type': 'application/json' }),
    };
    injectTraceContext(headers);
    try {
      const res = await this.pool.request({
        path,
        method: 'POST',
        headers,
        ...(sent === null ? {} : { body: sent }),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      replayed = res.headers[IDEMPOTENT_REPLAYED_HEADER] === 'true';
      const after = res.headers['retry-after'];
      retryAfter = typeof after === 'string' ? after : undefined;
      text = await res.body.text();
    } catch {
      // The outcome is unknown (the action may have been applied): retrying is safe, every action
      // answers 409 when it was already done.
      throw serviceUnavailable('The payments service did not answer in time. Retry the request.');
    }
    // A proxy's HTML error page or a truncated answer is the service's trouble, not the client's.
    const envelope = dataOf(text);
    const body = envelope ?? {};
    if (status === 409 && body.code === 'idempotency_conflict') {
      throw new ActionNotApplied(
        409,
        'idempotency_conflict',
        body.message ?? 'Idempotency-Key conflict.',
        retryAfter ? { 'Retry-After': retryAfter } : undefined,
      );
    }
    if (status === 409 || status === 404 || status === 403) {
      throw new ActionNotApplied(
        status,
        status === 409 ? 'conflict' : status === 404 ? 'not_found' : 'forbidden',
        body.message ?? 'Refused.',
      );
    }
    // The PSP refused (a refund): payments rolled back, and nothing was made anywhere.
    if (status === 502 && body.code === 'bad_gateway')
      throw new ActionNotApplied(503, 'service_unavailable', body.message ?? 'The PSP refused the action.');
    if (status !== 200)
      throw serviceUnavailable('The payments service could not complete the action; retry the request.');
    if (!envelope) {
      throw serviceUnavailable(
        'The payments service gave an answer that could not be read; retry the request.',
      );
    }
    if (body.data === null || body.data === undefined)
      return { message: body.message ?? '', state: null, replayed };
    const state = ChargeState.safeParse(body.data);
    if (!state.success) {
      throw serviceUnavailable(
        'The payments service gave an answer that could not be read; retry the request.',
      );
    }
    return { message: body.message ?? '', state: state.data, replayed };
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

/** Payments answered that it did not make the action (a refusal, or a failure it rolled back). */
export class ActionNotApplied extends HttpError {
  constructor(status: number, code: ErrorCode, message: string, headers?: Record<string, string>) {
    super(status, code, message, undefined, headers);
    this.name = 'ActionNotApplied';
  }
}

/**
 * Payments refused to make the charge for what the request asked (a due-date charge its PSP does not
 * take): the client gets that 400 with its message, and nothing was made. Any other answer (a 409 for
 * an order id another seller holds, a signature refused...) is the platform's trouble: a 503.
 */
function refusalOr503(
  result: { status: number; code?: unknown; message?: unknown; data?: unknown },
  request: CreateChargeRequest | undefined,
): HttpError {
  if (result.status !== 400 || result.code !== 'validation_error' || typeof result.message !== 'string')
    return unavailable();
  // A 400 names its fields (docs/errors.md); a batch's result carries none, and the one rule payments
  // checks of a well-formed request is whether it takes due-date charges.
  const fields = FieldErrorsOf.safeParse(result.data);
  const data = fields.success
    ? fields.data
    : request?.due_date
      ? { 'payment.due_date': [result.message] }
      : undefined;
  return new HttpError(400, 'validation_error', result.message, data);
}

const FieldErrorsOf = z.record(z.string(), z.array(z.string()).min(1));

const unavailable = () =>
  serviceUnavailable(
    'The payments service could not create the PIX charge; the order was not created. Retry the request.',
  );

/** The JSON envelope of an answer, or null when the text is not JSON. */
function dataOf(text: string): { message?: string; code?: string; data?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}
