/**
 * Known-answer deliveries: a body, its id and timestamp, and the signatures a receiver must accept,
 * computed independently of our code (openssl). For example:
 *   printf '%s' '<event id>.<timestamp>.<body>' | openssl dgst -sha256 -hmac '<secret>'
 * and for webhook-signature the same message keyed by the base64-decoded bytes after `whsec_`, as base64
 * (docs/webhooks.md, "Verifying the signature").
 */
export interface WebhookVector {
  name: string;
  secret: string;
  /** `evt_` and 24 letters and digits, as the API makes them. */
  eventId: string;
  timestamp: number;
  body: string;
  /** X-Webhook-Signature. */
  signature: string;
  /** webhook-signature (Standard Webhooks). */
  standardSignature: string;
}

export const WEBHOOK_VECTORS: readonly WebhookVector[] = [
  {
    name: 'order.paid',
    secret: 'whsec_dGVzdC1zZWNyZXQtdGhhdC1pcy1hdC1sZWFzdC0zMi1ieXRlcw',
    eventId: 'evt_3kTq9ZbW2mXc7RfLp0VyN8Ad',
    timestamp: 1781006400,
    body:
      '{"event":"order.paid","occurred_at":"2026-06-09T12:00:00.000Z","delivery_attempt":1,' +
      '"data":{"order":{"uuid":"7d5c7069-1b2a-4c3d-8e9f-0a1b2c3d4e5f","status":"PAID","gross_amount":11500}}}',
    signature: 'sha256=dc039f04eeb7c8cd009fb95a32fc99a67faf7343104bc457167c4a05b6c11a8c',
    standardSignature: 'v1,JVsvq8orpZ7Tz5lRalTwVGdqVtCghaZlvvmDH7cMnIc=',
  },
  {
    name: 'order.created, a retry, with non-ASCII text (signed as UTF-8 bytes)',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    eventId: 'evt_Qx7mN2pL9sVb4RtK8wYc1ZdH',
    timestamp: 1782000000,
    body:
      '{"event":"order.created","occurred_at":"2026-06-21T00:00:00.000Z","delivery_attempt":2,' +
      '"data":{"order":{"uuid":"14ec07c8-2d3e-4f50-8a9b-0c1d2e3f4a5b","status":"PENDING"},"seller":{"name":"Loja São João"}}}',
    signature: 'sha256=bd99cf54304c89b217af20fc7d0f39753a809185f7a2d514390f13ff61aa28da',
    standardSignature: 'v1,m1qLqTAP1f2Bz6eYSXNIQwHW82fu/FoWQoysTuX8650=',
  },
];
