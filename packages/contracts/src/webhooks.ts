import { z } from 'zod';
import { MESSAGES } from './messages';
import { strictInput } from './strict';
import { ListQuery, dataResponse, datetime, datetimeInput, httpUrl, listResponse, uuid } from './common';
import { EventName } from './events';

/**
 * What a webhook shows: a paused (DISABLED) one gets no new deliveries; a RETIRED one was replaced by a
 * registration of the same URL and event (a rotation) and is only read (docs/webhooks.md).
 */
export const WebhookStatus = z.enum(['ACTIVE', 'DISABLED', 'RETIRED']);
export type WebhookStatus = z.infer<typeof WebhookStatus>;

/** What `PATCH /config/webhooks/{id}/` may set: pause or resume. */
export const SettableWebhookStatus = z.enum(['ACTIVE', 'DISABLED']);
export type SettableWebhookStatus = z.infer<typeof SettableWebhookStatus>;

/** Delivery states; lower case, as the `?status=` filter spells them (docs/webhooks.md). */
export const DeliveryStatus = z.enum(['pending', 'delivered', 'dead']);

/** How long deliveries and their attempts are kept by default (the dispatcher's DELIVERIES_RETENTION_DAYS). */
export const DELIVERIES_RETENTION_DAYS_DEFAULT = 90;
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

/** `POST /config/webhooks/` body: one event per webhook (docs/webhooks.md). */
export const CreateWebhookRequest = strictInput(
  z.object({
    url: httpUrl.max(2048),
    event: EventName,
    description: z.string().trim().max(255).nullable().optional(),
  }),
);
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

/** A webhook as `GET` shows it: never with its secret. */
export const Webhook = z.object({
  id: uuid,
  url: z.string(),
  event: EventName,
  description: z.string().nullable(),
  status: WebhookStatus,
  created_at: datetime,
});
export type Webhook = z.infer<typeof Webhook>;
export const WebhookResponse = dataResponse(Webhook);
export type WebhookResponse = z.infer<typeof WebhookResponse>;

/**
 * The 201 answer, the only one that shows `secret`: `whsec_` + the standard base64 of 32 random bytes
 * (secrets issued earlier are base64url, so both alphabets are accepted).
 */
export const WebhookWithSecret = Webhook.extend({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/_-]{43,}={0,2}$/),
});
export type WebhookWithSecret = z.infer<typeof WebhookWithSecret>;
export const CreateWebhookResponse = dataResponse(WebhookWithSecret);
export type CreateWebhookResponse = z.infer<typeof CreateWebhookResponse>;

export const WebhookList = listResponse(Webhook);
export type WebhookList = z.infer<typeof WebhookList>;
export const WebhookListResponse = dataResponse(WebhookList);
export type WebhookListResponse = z.infer<typeof WebhookListResponse>;

export const UPDATE_WEBHOOK_FIELD_REQUIRED_MESSAGE = MESSAGES.webhookFieldRequired;

/** `PATCH /config/webhooks/{id}/`: pause, resume or move a webhook; an empty body says nothing. */
export const UpdateWebhookRequest = strictInput(
  z
    .object({
      url: httpUrl.max(2048).optional(),
      status: SettableWebhookStatus.optional(),
    })
    .refine((body) => body.url !== undefined || body.status !== undefined, {
      error: UPDATE_WEBHOOK_FIELD_REQUIRED_MESSAGE,
      path: [],
    }),
);
export type UpdateWebhookRequest = z.infer<typeof UpdateWebhookRequest>;

export const WebhookPathParams = z.object({ id: uuid });
export type WebhookPathParams = z.infer<typeof WebhookPathParams>;

export const DeliveryPathParams = z.object({ id: uuid, delivery_id: uuid });
export type DeliveryPathParams = z.infer<typeof DeliveryPathParams>;

/** One HTTP attempt of a delivery; `response_body` holds the first 1 KiB, `error` a network error. */
export const DeliveryAttempt = z.object({
  attempt: z.int().min(1),
  started_at: datetime,
  duration_ms: z.int().min(0),
  response_status: z.int().nullable(),
  response_body: z.string().nullable(),
  error: z.string().nullable(),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

/** One event to one destination; `event_id` is the `X-Webhook-Event-Id` it is sent with. */
export const WebhookDelivery = z.object({
  id: uuid,
  event: EventName,
  event_id: z.string().regex(/^evt_[A-Za-z0-9_-]+$/),
  status: DeliveryStatus,
  created_at: datetime,
  next_attempt_at: datetime.nullable(),
  attempts: z.array(DeliveryAttempt),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

export const DeliveryList = listResponse(WebhookDelivery);
export type DeliveryList = z.infer<typeof DeliveryList>;
export const DeliveryListResponse = dataResponse(DeliveryList);
export type DeliveryListResponse = z.infer<typeof DeliveryListResponse>;

/** `POST /sellers/orders/{uuid}/postback-deliveries/{delivery_id}/resend/`: one postback delivery. */
export const PostbackDeliveryPathParams = z.object({ uuid, delivery_id: uuid });
export type PostbackDeliveryPathParams = z.infer<typeof PostbackDeliveryPathParams>;

/** `GET /config/webhooks/` query: the list route's paging only. */
export const WebhookListQuery = strictInput(ListQuery);
export type WebhookListQuery = z.infer<typeof WebhookListQuery>;

/** `GET /config/webhooks/{id}/deliveries/` and `GET /sellers/orders/{uuid}/postback-deliveries/` query. */
export const DeliveryListQuery = strictInput(ListQuery.extend({ status: DeliveryStatus.optional() }));
export type DeliveryListQuery = z.infer<typeof DeliveryListQuery>;

/** `POST /config/webhooks/{id}/deliveries/resend/`: re-queue every dead delivery in a time window. */
export const BulkResendRequest = strictInput(
  z
    .object({
      status: z.literal('dead'),
      since: datetimeInput.optional(),
      until: datetimeInput.optional(),
    })
    .refine((body) => !body.since || !body.until || Date.parse(body.since) <= Date.parse(body.until), {
      error: MESSAGES.notBeforeSince,
      path: ['until'],
    }),
);
export type BulkResendRequest = z.infer<typeof BulkResendRequest>;

export const BulkResendResult = z.object({ count: z.int().min(0) });
export type BulkResendResult = z.infer<typeof BulkResendResult>;
export const BulkResendResponse = dataResponse(BulkResendResult);
export type BulkResendResponse = z.infer<typeof BulkResendResponse>;

// ---------------------------------------------------------------------------------------------------
// Health (docs/webhooks.md, "Delivery health")
// ---------------------------------------------------------------------------------------------------

/** Hours of deliveries the health route counts, up to now. */
export const WEBHOOK_HEALTH_WINDOW_HOURS = 24;

/** Deliveries by state: `retrying` is pending after at least one attempt that did not deliver it. */
export const DeliveryCounts = z.object({
  delivered: z.int().min(0),
  retrying: z.int().min(0),
  dead: z.int().min(0),
});
export type DeliveryCounts = z.infer<typeof DeliveryCounts>;

export const WebhookHealth = DeliveryCounts.extend({
  webhook_id: uuid,
  url: z.string(),
  event: EventName,
  status: WebhookStatus,
});
export type WebhookHealth = z.infer<typeof WebhookHealth>;

/** `data` of `GET /config/webhooks/health/`: deliveries created in [since, until). */
export const WebhooksHealth = z.object({
  since: datetime,
  until: datetime,
  webhooks: z.array(WebhookHealth),
  postbacks: DeliveryCounts,
});
export type WebhooksHealth = z.infer<typeof WebhooksHealth>;
export const WebhooksHealthResponse = dataResponse(WebhooksHealth);
export type WebhooksHealthResponse = z.infer<typeof WebhooksHealthResponse>;
