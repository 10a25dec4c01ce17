import {
  BulkResendRequest,
  CreateWebhookRequest,
  DeliveryListQuery,
  DeliveryPathParams,
  EventListQuery,
  EventPathParams,
  WebhookListQuery,
  OrderPathParams,
  PostbackDeliveryPathParams,
  UpdateWebhookRequest,
  WebhookPathParams,
  type Webhook,
} from '@seller-api/contracts';
import {
  keyedRequest,
  parseOrThrow,
  parseQueryOrThrow,
  route,
  sellerScope,
  sendAnswer,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express, Request } from 'express';
import type { WebhookRow } from '../db/entities';
import {
  listDeliveries,
  listPostbackDeliveries,
  resendDead,
  resendDelivery,
  resendPostbackDelivery,
  webhooksHealth,
} from '../db/deliveries';
import { getEvent, listEvents } from '../db/events';
import {
  deleteWebhook,
  getWebhook,
  listWebhooks,
  liveWebhookOf,
  registerWebhook,
  updateWebhook,
} from '../db/webhooks';
import { assertTarget, type ChangeGuard, type TargetPolicy } from '../domain/registrations';
import { sealedSecretAnswer } from '../domain/secret-answer';
import type { SecretBox } from '../domain/secret-box';

export interface RouteDeps {
  runtime: Runtime;
  policy: TargetPolicy;
  /** Seals new secrets, where they are stored and in the answer kept for replays. */
  secrets: SecretBox;
  /** Re-queued deliveries are due now: wake the sender. */
  onRequeued(): void;
  /**
   * Runs a change to a webhook so that none of its deliveries claimed before the change is sent after
   * it (jobs/sender.ts, DeliverySender.changing); `retired` is that for a rotation, once committed.
   */
  changing: ChangeGuard;
  retired(webhookId: string): void;
  /** EVENTS_RETENTION_DAYS: no event older is shown. */
  eventsRetentionDays: number;
  /** DELIVERIES_RETENTION_DAYS: no delivery older is shown or re-sent. */
  deliveriesRetentionDays: number;
}

function present(w: WebhookRow): Webhook {
  return {
    id: w.id,
    url: w.url,
    event: w.event,
    description: w.description,
    status: w.status === 'RETIRED' ? 'RETIRED' : w.status === 'DISABLED' ? 'DISABLED' : 'ACTIVE',
    created_at: w.createdAt.toISOString(),
  };
}

const webhookId = (req: Request) => parseOrThrow(WebhookPathParams, req.params, 'Invalid webhook id.').id;

export function mountRoutes(
  app: Express,
  {
    runtime,
    policy,
    secrets,
    onRequeued,
    changing,
    retired,
    eventsRetentionDays,
    deliveriesRetentionDays,
  }: RouteDeps,
): void {
  const em = () => runtime.orm.em.fork();
  const secretAnswer = sealedSecretAnswer(secrets);

  app.post(
    '/config/webhooks/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const input = parseOrThrow(CreateWebhookRequest, req.body, 'Invalid webhook.');
      await assertTarget(input.url, scope, policy);
      let retiredId: string | null = null;
      const register = () =>
        runtime.idempotency.run(
          keyedRequest(req),
          async (tx, sql) => {
            const registered = await registerWebhook(tx, sql, scope, input, secrets);
            retiredId = registered.retiredId;
            // The only answer that shows the secret (and its replay under the same Idempotency-Key,
            // kept with the secret sealed: secretAnswer).
            return {
              status: 201,
              body: {
                message: 'Webhook registered. Store the secret now: it is not shown again.',
                data: { ...present(registered.webhook), secret: registered.secret },
              },
            };
          },
          secretAnswer,
        );
      // A rotation is a change of the webhook it retires: what the sender claimed of it before the move
      // is held, then claimed again under the new webhook and its secret (DeliverySender.changing).
      const replaced = await liveWebhookOf(em(), scope, input);
      const answer = replaced ? await changing(replaced, register) : await register();
      // Another webhook than the one read before (a rotation in between): held now it is committed.
      if (retiredId && retiredId !== replaced) retired(retiredId);
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/config/webhooks/',
    route(async (req, res) => {
      const { rows, next } = await listWebhooks(
        em(),
        sellerScope(req),
        parseQueryOrThrow(WebhookListQuery, req.query, 'Invalid query.'),
      );
      res.json({ message: 'Webhooks retrieved.', data: { results: rows.map(present), next_cursor: next } });
    }),
  );
  // Before `:id`, which would take `health` for a webhook id.
  app.get(
    '/config/webhooks/health/',
    route(async (req, res) => {
      res.json({
        message: 'Webhook health retrieved.',
        data: await webhooksHealth(runtime.sql, sellerScope(req)),
      });
    }),
  );
  app.get(
    '/config/webhooks/:id/',
    route(async (req, res) => {
      res.json({
        message: 'Webhook retrieved.',
        data: present(await getWebhook(em(), sellerScope(req), webhookId(req))),
      });
    }),
  );
  app.patch(
    '/config/webhooks/:id/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = webhookId(req);
      const input = parseOrThrow(UpdateWebhookRequest, req.body, 'Invalid webhook update.');
      const webhook = await updateWebhook(em(), runtime.sql, scope, id, input, policy, changing);
      if (webhook.status === 'ACTIVE') onRequeued();
      res.json({ message: 'Webhook updated.', data: present(webhook) });
    }),
  );
  app.delete(
    '/config/webhooks/:id/',
    route(async (req, res) => {
      await deleteWebhook(em(), sellerScope(req), webhookId(req), changing);
      res.status(204).end();
    }),
  );
  app.get(
    '/config/webhooks/:id/deliveries/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = webhookId(req);
      const query = parseQueryOrThrow(DeliveryListQuery, req.query, 'Invalid query.');
      res.json({
        message: 'Deliveries retrieved.',
        data: await listDeliveries(em(), runtime.sql, scope, id, query, deliveriesRetentionDays),
      });
    }),
  );
  app.post(
    '/config/webhooks/:id/deliveries/resend/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = webhookId(req);
      const input = parseOrThrow(BulkResendRequest, req.body, 'Invalid resend request.');
      const answer = await runtime.idempotency.run(keyedRequest(req), async (tx, sql) => {
        const count = await resendDead(tx, sql, scope, id, input, deliveriesRetentionDays);
        return { status: 200, body: { message: `${count} deliveries re-queued.`, data: { count } } };
      });
      if (!answer.replayed) onRequeued();
      sendAnswer(res, answer);
    }),
  );
  app.post(
    '/config/webhooks/:id/deliveries/:delivery_id/resend/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const params = parseOrThrow(DeliveryPathParams, req.params, 'Invalid delivery id.');
      const answer = await runtime.idempotency.run(keyedRequest(req), async (tx, sql) => {
        await resendDelivery(tx, sql, scope, params.id, params.delivery_id, deliveriesRetentionDays);
        return { status: 200, body: { message: 'Delivery re-queued.' } };
      });
      if (!answer.replayed) onRequeued();
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/sellers/orders/:uuid/postback-deliveries/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const { uuid } = parseOrThrow(OrderPathParams, req.params, 'Invalid order id.');
      const query = parseQueryOrThrow(DeliveryListQuery, req.query, 'Invalid query.');
      res.json({
        message: 'Postback deliveries retrieved.',
        data: await listPostbackDeliveries(runtime.sql, scope, uuid, query, deliveriesRetentionDays),
      });
    }),
  );
  app.post(
    '/sellers/orders/:uuid/postback-deliveries/:delivery_id/resend/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const params = parseOrThrow(PostbackDeliveryPathParams, req.params, 'Invalid delivery id.');
      const answer = await runtime.idempotency.run(keyedRequest(req), async (_tx, sql) => {
        await resendPostbackDelivery(sql, scope, params.uuid, params.delivery_id, deliveriesRetentionDays);
        return { status: 200, body: { message: 'Delivery re-queued.' } };
      });
      if (!answer.replayed) onRequeued();
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/events/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const query = parseQueryOrThrow(EventListQuery, req.query, 'Invalid query.');
      res.json({
        message: 'Events retrieved.',
        data: await listEvents(runtime.sql, scope, query, eventsRetentionDays),
      });
    }),
  );
  app.get(
    '/events/:id/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const { id } = parseOrThrow(EventPathParams, req.params, 'Invalid event id.');
      res.json({
        message: 'Event retrieved.',
        data: await getEvent(runtime.sql, scope, id, eventsRetentionDays),
      });
    }),
  );
}
