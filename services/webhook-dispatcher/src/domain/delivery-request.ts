import { STANDARD_WEBHOOK_HEADERS, WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from '@seller-api/contracts';
import { signatureFor, standardSignatureFor } from '@seller-api/webhook-verify';

/** What a delivery's request is made of (jobs/sender.ts gets it from a claim). */
export interface DeliveryToSend {
  event: string;
  event_id: string;
  url: string;
  signed: boolean;
  /** The webhook's secret; null for a postback. */
  secret: string | null;
  /** The event's data as JSON text (as PostgreSQL prints the stored jsonb), spliced in compacted. */
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

// A JSON string (escapes included), or JSON whitespace outside one.
const STRING_OR_SPACE = /"[^"\\]*(?:\\.[^"\\]*)*"|[ \t\n\r]+/g;

/**
 * JSON text without the whitespace between its tokens: jsonb prints `{"a": 1, "b": [1, 2]}`, the
 * envelope around it is compact, and a body is one style (docs/events.md, "The webhook envelope").
 * Strings and numbers are kept byte for byte (no parse, so no number is rounded), so the same stored
 * data gives the same bytes on every attempt and resend, whenever it was stored.
 */
export function compactJson(text: string): string {
  return text.replace(STRING_OR_SPACE, (token) => (token.charCodeAt(0) === 34 ? token : ''));
}

/**
 * The request of the next attempt of `delivery` at `now` (ms since the epoch): the envelope
 * (docs/webhooks.md, "Envelope") with the event's stored data spliced in compacted, and, for a signed
 * delivery with a secret, its timestamp and signatures over the body exactly as sent:
 * X-Webhook-Signature, and the Standard Webhooks headers so that receivers can verify with the
 * `standardwebhooks` or `svix` packages. Postbacks are unsigned and carry neither.
 */
export function buildRequest(delivery: DeliveryToSend, now: number): DeliveryRequest {
  const body =
    `{"event":${JSON.stringify(delivery.event)},` +
    `"occurred_at":"${new Date(delivery.occurred_at_ms).toISOString()}",` +
    `"delivery_attempt":${delivery.attempts + 1},"data":${compactJson(delivery.payload)}}`;
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
