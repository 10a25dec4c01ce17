import { DeliveryList, WebhookWithSecret, type EventName } from '@seller-api/contracts';
import { call } from '../support/system';
import { createOrder, standaloneOrder } from '../orders/fixtures';

export async function register(url: string, key: string, target: string, event: EventName = 'order.created') {
  const res = await call(`${url}/config/webhooks/`, { method: 'POST', key, body: { url: target, event } });
  if (res.status !== 201) throw new Error(`webhook not registered: ${res.status} ${res.text}`);
  return WebhookWithSecret.parse(res.body.data);
}

/** Creates an order (which emits order.created) and returns its uuid. */
export async function placeOrder(
  url: string,
  key: string,
  overrides: Parameters<typeof standaloneOrder>[0] = {},
) {
  const res = await createOrder(url, key, standaloneOrder(overrides));
  if (res.status !== 201) throw new Error(`order not created: ${res.status} ${res.text}`);
  return (res.body.data as { uuid: string }).uuid;
}

export async function deliveries(url: string, key: string, webhookId: string, query = '') {
  const res = await call(`${url}/config/webhooks/${webhookId}/deliveries/${query}`, { key });
  return DeliveryList.parse(res.body.data).results;
}
