import { Client } from 'pg';
import { Webhook, WebhookList } from '@seller-api/contracts';
import { verifyWebhook } from '@seller-api/webhook-verify';
import type { ReceivedHook } from '../support/receiver';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

// Each test routes a receiver path of its own.
const t = useSystem({ env: { WEBHOOK_RETRY_SCHEDULE: '30ms' }, receiver: true });

const FAILING = 15_001;
const IN_FLIGHT = 15_002;
const amountOf = (hook: ReceivedHook) =>
  (hook.body.data.order as { gross_amount?: number } | undefined)?.gross_amount;
const orderOf = (hook: ReceivedHook) => (hook.body.data.order as { uuid?: string } | undefined)?.uuid;
const hitsFor = (path: string, order: string) =>
  t.receiver.received.filter((h) => h.path === path && orderOf(h) === order);

/** Whether `hook` carries a valid signature of `secret` (and not only of another). */
function signedWith(hook: ReceivedHook, secret: string): boolean {
  try {
    verifyWebhook({ secret, headers: hook.headers, rawBody: hook.rawBody });
    return true;
  } catch {
    return false;
  }
}

describe('rotating a webhook (the same url and event registered again)', () => {
  it('moves pending and dead deliveries to the new webhook; the retired one keeps its history, read-only', async () => {
    const path = '/rotating';
    // Each order's deliveries answer by its amount: delivered, failing until dead, or in flight (the
    // first attempt's answer comes late).
    let deadFixed = false;
    t.receiver.route(path, (hook) => {
      const amount = amountOf(hook);
      if (amount === FAILING) return { status: deadFixed ? 200 : 500 };
      if (amount === IN_FLIGHT && hook.body.delivery_attempt === 1) return { status: 503, delayMs: 1_500 };
      return { status: 200 };
    });
    const { key } = await t.newKey();
    const old = await register(t.url, key, `${t.receiver.url}${path}`);

    // Delivered before the rotation: stays in the retired webhook's history.
    const before = await placeOrder(t.url, key);
    const [delivered] = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, old.id, '?status=delivered');
        return list.length ? list : null;
      },
      { what: 'a delivered delivery' },
    );
    // Dead before the rotation.
    const failing = await placeOrder(t.url, key, { payment: { gross_amount: FAILING } });
    await waitFor(async () => (await deliveries(t.url, key, old.id, '?status=dead')).length === 1 || null, {
      what: 'a dead delivery',
    });
    // Pending and leased at the rotation: its first attempt waits for its answer.
    const inFlightOrder = await placeOrder(t.url, key, { payment: { gross_amount: IN_FLIGHT } });
    const firstAttempt = await waitFor(() => hitsFor(path, inFlightOrder)[0], {
      what: 'the first attempt in flight',
    });
    expect(signedWith(firstAttempt, old.secret)).toBe(true);

    const rotated = await register(t.url, key, `${t.receiver.url}${path}`);
    // The rotation committed while that attempt was still waiting for its answer: the delivery moved
    // leased, with no attempt recorded yet; the dead one moved too.
    const movedNow = await deliveries(t.url, key, rotated.id);
    expect(movedNow.map((d) => [d.status, d.attempts.length])).toEqual([
      ['pending', 0],
      ['dead', 8],
    ]);
    expect(hitsFor(path, inFlightOrder)).toHaveLength(1);

    // The leased delivery's attempt finishes and is recorded once; its retry goes out signed with the
    // new secret, once.
    const moved = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, rotated.id, '?status=delivered');
        return list.find((d) => d.attempts.length === 2);
      },
      { what: 'the in-flight delivery retried and delivered under the new webhook' },
    );
    expect(moved.attempts.map((a) => a.response_status)).toEqual([503, 200]);
    const inFlightHits = hitsFor(path, inFlightOrder);
    expect(inFlightHits.map((h) => h.body.delivery_attempt)).toEqual([1, 2]);
    expect(signedWith(inFlightHits[1]!, rotated.secret)).toBe(true);
    expect(signedWith(inFlightHits[1]!, old.secret)).toBe(false);
    expect(new Set(inFlightHits.map((h) => h.headers['x-webhook-event-id']))).toEqual(
      new Set([moved.event_id]),
    );

    // The dead delivery is the new webhook's, and is re-sent from there with the new secret.
    const [dead] = await deliveries(t.url, key, rotated.id, '?status=dead');
    expect(dead?.attempts).toHaveLength(8);
    expect(hitsFor(path, failing).length).toBe(8);
    deadFixed = true;
    const resend = await call(`${t.url}/config/webhooks/${rotated.id}/deliveries/${dead?.id}/resend/`, {
      method: 'POST',
      key,
    });
    expect(resend.status).toBe(200);
    const ninth = await waitFor(() => hitsFor(path, failing)[8], { what: 'the resent attempt' });
    expect(ninth.body.delivery_attempt).toBe(9);
    expect(signedWith(ninth, rotated.secret)).toBe(true);
    await waitFor(
      async () => (await deliveries(t.url, key, rotated.id, '?status=delivered')).length === 2 || null,
      { what: 'the resent delivery delivered' },
    );

    // The retired webhook: read with RETIRED, its delivered history listed, nothing else.
    const read = await call(`${t.url}/config/webhooks/${old.id}/`, { key });
    expect(read.status).toBe(200);
    expect(Webhook.strict().parse(read.body.data)).toMatchObject({ id: old.id, status: 'RETIRED' });
    const history = await deliveries(t.url, key, old.id);
    expect(history.map((d) => d.id)).toEqual([delivered?.id]);
    expect(hitsFor(path, before)).toHaveLength(1);
    // Read-only: changes and re-sends go to the webhook that replaced it.
    const refused = [
      await call(`${t.url}/config/webhooks/${old.id}/`, {
        method: 'PATCH',
        key,
        body: { status: 'DISABLED' },
      }),
      await call(`${t.url}/config/webhooks/${old.id}/`, { method: 'DELETE', key }),
      await call(`${t.url}/config/webhooks/${old.id}/deliveries/${delivered?.id}/resend/`, {
        method: 'POST',
        key,
      }),
      await call(`${t.url}/config/webhooks/${old.id}/deliveries/resend/`, {
        method: 'POST',
        key,
        body: { status: 'dead' },
      }),
    ];
    expect(refused.map((r) => [r.status, r.body.code])).toEqual(Array(4).fill([409, 'conflict']));
    expect((await call(`${t.url}/config/webhooks/${old.id}/`, { key })).body.data).toMatchObject({
      status: 'RETIRED',
    });
    // The list shows the live registrations only.
    const list = WebhookList.parse((await call(`${t.url}/config/webhooks/`, { key })).body.data);
    expect(list.results.map((w) => w.id)).toEqual([rotated.id]);
  });

  it('keeps a rotated-away webhook with another seller (403) and environment (404) as before', async () => {
    const a = await t.newKey();
    const old = await register(t.url, a.key, `${t.receiver.url}/rotated-scope`);
    await register(t.url, a.key, `${t.receiver.url}/rotated-scope`);
    const b = await t.newKey();
    const live = await t.newKey({ email: a.email, environment: 'live' });
    expect((await call(`${t.url}/config/webhooks/${old.id}/`, { key: b.key })).status).toBe(403);
    expect((await call(`${t.url}/config/webhooks/${old.id}/deliveries/`, { key: b.key })).status).toBe(403);
    expect((await call(`${t.url}/config/webhooks/${old.id}/`, { key: live.key })).status).toBe(404);
  });
  it('moves deliveries even when an outcome batch deadlocks with the move: the move is tried again', async () => {
    const path = '/rotating-deadlock';
    t.receiver.route(path, () => ({ status: 500 }));
    const { key } = await t.newKey();
    const old = await register(t.url, key, `${t.receiver.url}${path}`);
    await placeOrder(t.url, key);
    await placeOrder(t.url, key);
    const dead = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, old.id, '?status=dead');
        return list.length === 2 ? list : null;
      },
      { what: 'two dead deliveries' },
    );
    const [first, second] = dead.map((d) => d.id).sort();
    // Another writer (an outcome batch, say) holds the second row and then asks for the first, which the
    // move locked first: a deadlock. This side waits longer before checking, so PostgreSQL cancels the
    // move's statement.
    const other = new Client({ connectionString: t.env.DATABASE_URL });
    await other.connect();
    try {
      await other.query('begin');
      await other.query("set local deadlock_timeout = '20s'");
      await other.query('update webhooks.deliveries set attempts = attempts where id = $1', [second]);
      const rotating = register(t.url, key, `${t.receiver.url}${path}`);
      await waitFor(
        async () => {
          // Activity statistics are read once per transaction unless cleared.
          await other.query('select pg_stat_clear_snapshot()');
          const { rows } = await other.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and query like '%moving%' and pid <> pg_backend_pid()`,
          );
          return rows[0]?.n === 1 || null;
        },
        { what: 'the move waiting for the second row' },
      );
      await other.query('update webhooks.deliveries set attempts = attempts where id = $1', [first]);
      await other.query('commit');
      const rotated = await rotating;
      const moved = await deliveries(t.url, key, rotated.id, '?status=dead');
      expect(moved.map((d) => d.id).sort()).toEqual([first, second]);
      expect(await deliveries(t.url, key, old.id)).toEqual([]);
    } finally {
      await other.query('rollback').catch(() => undefined);
      await other.end();
    }
  });
});
