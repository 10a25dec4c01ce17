import { STANDARD_WEBHOOK_HEADERS, WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from '@seller-api/contracts';
import { signatureFor, standardSignatureFor } from '@seller-api/webhook-verify';

/** What a delivery's request is made of (events/sender.ts gets it from a claim). */
export interface DeliveryToSend {
  event: string;
  event_id: string;
  url: string;
  signed: boolean;
  /** The webhook's secret; null for a postback. */
  secret: string | null;
  /** The event's data as JSON text, spliced into the envelope as it is. */
  payload: string;
  occurred_at_ms: number;
  /** Attempts made before this one. */
  attempts: number;
}

/** One attempt's POST: where to, its headers (trace headers aside) and its body as sent. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The request of the next attempt of `delivery` at `now` (ms since the epoch): the envelope
 * (docs/webhooks.md, "Envelope") with the event's data spliced in as stored, and, for a signed delivery
 * with a secret, its timestamp and signatures over the body exactly as sent: X-Webhook-Signature, and the
 * Standard Webhooks headers so that receivers can verify with the `standardwebhooks` or `svix` packages.
 * Postbacks are unsigned and carry neither.
 */
export function buildRequest(delivery: DeliveryToSend, now: number): DeliveryRequest {
  const body =
    `{"event":${JSON.stringify(delivery.event)},` +
    `"occurred_at":"${new Date(delivery.occurred_at_ms).toISOString()}",` +
    `"delivery_attempt":${delivery.attempts + 1},"data":${delivery.payload}}`;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    [WEBHOOK_HEADERS.EVENT]: delivery.event,
    [WEBHOOK_HEADERS.EVENT_ID]: delivery.event_id,
  };
  if (delivery.signed && delivery.secret) {
    const timestamp = Math.floor(now / 1000);
    headers[WEBHOOK_HEADERS.TIMESTAMP] = String(timestamp);
    headers[WEBHOOK_HEADERS.SIGNATURE] = signatureFor(delivery.secret, delivery.event_id, timestamp, body);
    headers[STANDARD_WEBHOOK_HEADERS.ID] = delivery.event_id;
    headers[STANDARD_WEBHOOK_HEADERS.TIMESTAMP] = String(timestamp);
    headers[STANDARD_WEBHOOK_HEADERS.SIGNATURE] = standardSignatureFor(
      delivery.secret,
      delivery.event_id,
      timestamp,
      body,
    );
  }
  return { url: delivery.url, headers, body };
}
