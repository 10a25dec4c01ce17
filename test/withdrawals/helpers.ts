import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { Balance, Withdrawal, type Environment } from '@seller-api/contracts';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import type { captureEvents } from '../support/events';
import { call, createKey, type RunningGateway, type System } from '../support/system';
import { useSystem, type SystemHandles, type UseSystemOptions } from '../support/use-system';
import { waitFor } from '../support/wait';

/** 15000 gross at the default fee (399 bps): what the seller is credited for one sale. */
export const SALE_GROSS = 15000;
export const SALE_NET = 14401;

export interface Seller {
  key: string;
  sellerId: string;
  email: string;
}

/** What the helpers below use of a file's system (useHarness). */
export interface HarnessHandles {
  system: System;
  gateway: RunningGateway;
  events: Awaited<ReturnType<typeof captureEvents>>;
}

/**
 * The file's system (useSystem's handles) and a capture of everything published on
 * `withdrawals.events` from before its first test; read inside tests and hooks.
 */
export function useHarness(
  env: UseSystemOptions['env'] = {},
  options: Omit<UseSystemOptions, 'env'> = {},
): SystemHandles & HarnessHandles {
  const t = useSystem({ ...options, env });
  let events: HarnessHandles['events'] | undefined;
  beforeAll(async () => {
    events = await t.captureEvents('withdrawals.events', 'withdrawal.*');
  });
  // useSystem's getters, and one more.
  return Object.create(t, {
    events: {
      get() {
        if (!events)
          throw new Error('useHarness: the events are captured in a beforeAll; read them in a test');
        return events;
      },
    },
  }) as SystemHandles & HarnessHandles;
}

export async function newSeller(h: HarnessHandles, environment: Environment = 'test'): Promise<Seller> {
  const { key, sellerId, email } = await createKey(h.gateway.service, { environment });
  if (!sellerId) throw new Error('a seller key has a seller');
  return { key, sellerId, email };
}

export async function newOperator(h: HarnessHandles, environment: Environment = 'test'): Promise<string> {
  return (await createKey(h.gateway.service, { environment, role: 'operator' })).key;
}

export async function balance(h: HarnessHandles, key: string): Promise<Balance> {
  const res = await call(`${h.gateway.url}/finance/balance/`, { key });
  if (res.status !== 200) throw new Error(`balance: ${res.status} ${res.text}`);
  return Balance.parse(res.body.data);
}

/** Waits until the ledger (fed asynchronously by payments' events) shows `expected`. */
export async function balanceBecomes(
  h: HarnessHandles,
  key: string,
  expected: Partial<Balance>,
): Promise<Balance> {
  let last: Balance | null = null;
  try {
    return await waitFor(
      async () => {
        last = await balance(h, key);
        return Object.entries(expected).every(([k, v]) => last?.[k as keyof Balance] === v) ? last : null;
      },
      { what: `balance ${JSON.stringify(expected)}` },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last balance ${JSON.stringify(last)}`, { cause: err });
  }
}

export async function newOrder(h: HarnessHandles, key: string, gross = SALE_GROSS): Promise<string> {
  const res = await createOrder(h.gateway.url, key, standaloneOrder({ payment: { gross_amount: gross } }));
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  return (res.body.data as { uuid: string }).uuid;
}

/** A sandbox route or seller action on an order (pay, med, med/resolve, chargeback, refund). */
export async function act(h: HarnessHandles, key: string, path: string, body?: unknown): Promise<void> {
  const res = await call(`${h.gateway.url}${path}`, { method: 'POST', key, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
}

/** A paid sale of `gross`; resolves once the ledger shows the credit on top of what was there. */
export async function fund(h: HarnessHandles, seller: Seller, gross = SALE_GROSS): Promise<string> {
  const before = await balance(h, seller.key);
  const uuid = await newOrder(h, seller.key, gross);
  const order = await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key: seller.key });
  const net = (order.body.data as { payment: { net_amount: number } }).payment.net_amount;
  await act(h, seller.key, `/sandbox/orders/${uuid}/pay/`);
  await balanceBecomes(h, seller.key, { available_amount: before.available_amount + net });
  return uuid;
}

export function requestWithdrawal(h: HarnessHandles, key: string, body: unknown) {
  return call(`${h.gateway.url}/finance/withdrawals/`, { method: 'POST', key, body });
}

/** A withdrawal that must be accepted; returns it as the API shows it. */
export async function withdraw(
  h: HarnessHandles,
  key: string,
  body: { amount: number; pix_key: string; pix_key_type: string },
): Promise<Withdrawal> {
  const res = await requestWithdrawal(h, key, body);
  if (res.status !== 201) throw new Error(`withdrawal: ${res.status} ${res.text}`);
  return Withdrawal.parse(res.body.data);
}

export async function readWithdrawal(h: HarnessHandles, key: string, uuid: string): Promise<Withdrawal> {
  const res = await call(`${h.gateway.url}/finance/withdrawals/${uuid}/`, { key });
  if (res.status !== 200) throw new Error(`read: ${res.status} ${res.text}`);
  return Withdrawal.parse(res.body.data);
}

export async function statusBecomes(
  h: HarnessHandles,
  key: string,
  uuid: string,
  status: string,
): Promise<Withdrawal> {
  return waitFor(
    async () => {
      const w = await readWithdrawal(h, key, uuid);
      return w.status === status ? w : null;
    },
    { what: `withdrawal ${uuid} ${status}` },
  );
}

/** The withdrawal.* messages of one withdrawal, once `names` have all arrived. */
export async function eventsOf(h: HarnessHandles, uuid: string, names: string[]) {
  const of = (m: { payload: Record<string, unknown> }) =>
    (m.payload.withdrawal as { uuid?: string } | undefined)?.uuid === uuid;
  await waitFor(() => names.every((name) => h.events.messages.some((m) => of(m) && m.routingKey === name)), {
    what: `${names.join(', ')} of ${uuid}`,
  });
  return h.events.messages.filter(of);
}

/** An operator route: GET for the list, POST (empty body unless given) for a decision. */
export const ops = (
  h: HarnessHandles,
  key: string,
  path: string,
  options: {
    method?: 'GET' | 'POST';
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
) => call(`${h.gateway.url}/ops/withdrawals/${path}`, { key, ...options });

/**
 * A sale announced the way payments announces one after a real PSP payment (the sandbox routes are
 * test only): payment.approved and internal.charge.paid on `payments.events`, with the same headers.
 */
export async function publishSale(
  env: NodeJS.ProcessEnv,
  owner: { sellerId: string; environment: 'test' | 'live'; name: string },
  net: number,
): Promise<string> {
  const orderId = randomUUID();
  const headers = {
    'x-seller-id': owner.sellerId,
    'x-environment': owner.environment,
    'x-order-uuid': orderId,
  };
  const now = new Date().toISOString();
  const connection = await amqp.connect(env.AMQP_URL as string);
  try {
    const channel = await connection.createConfirmChannel();
    const exchange = `${env.AMQP_NAMESPACE}payments.events`;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const publish = (routingKey: string, payload: unknown) =>
      new Promise<void>((resolve, reject) =>
        channel.publish(
          exchange,
          routingKey,
          Buffer.from(JSON.stringify(payload)),
          { messageId: randomUUID(), headers, contentType: 'application/json', persistent: true },
          (err) => (err ? reject(err) : resolve()),
        ),
      );
    await publish('payment.approved', {
      transaction: {
        id: randomUUID(),
        method: 'PIX',
        status: 'APPROVED',
        gross_amount: net,
        fee_amount: 0,
        net_amount: net,
        approved_at: now,
      },
      order: { uuid: orderId, status: 'PAID' },
      seller: { name: owner.name },
    });
    await publish('internal.charge.paid', {
      order_uuid: orderId,
      status: 'PAID',
      previous_status: 'PENDING',
      version: 1,
      paid_at: now,
      changed_at: now,
    });
  } finally {
    await connection.close();
  }
  return orderId;
}

export const publishLiveSale = (h: HarnessHandles, seller: Seller, net: number) =>
  publishSale(h.system.env, { sellerId: seller.sellerId, environment: 'live', name: seller.email }, net);
