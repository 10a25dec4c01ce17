import { randomUUID } from 'node:crypto';
import { Webhook, WebhookList } from '@seller-api/contracts';
import { targetRefusalMessage } from '@seller-api/service-kit';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

// DNS as the tests want it: public names, one that resolves to a private address, one that does not resolve.
const hosts: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  'cgnat.example.com': ['100.64.0.7'],
};
const resolve = async (host: string) => {
  const found = hosts[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

const t = useSystem({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }, resolve });

// What a forbidden target is answered, per environment: the rule, never the address.
const LIVE_REFUSAL = targetRefusalMessage({ environment: 'live', allowPrivate: false });
const TEST_REFUSAL = targetRefusalMessage({ environment: 'test', allowPrivate: false });

const post = (key: string, body: unknown) => call(`${t.url}/config/webhooks/`, { method: 'POST', key, body });

describe('webhook registration', () => {
  it('shows the secret once, at creation, and never again', async () => {
    const { key } = await t.newKey();
    const created = await register(t.url, key, 'https://hooks.example.com/a', 'order.paid');
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/a',
      event: 'order.paid',
      status: 'ACTIVE',
      description: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await call(`${t.url}/config/webhooks/${created.id}/`, { key });
    const { secret: _secret, ...shown } = created;
    expect(Webhook.strict().parse(read.body.data)).toEqual(shown);
    const list = WebhookList.parse((await call(`${t.url}/config/webhooks/`, { key })).body.data);
    expect(list.results.map((w) => w.id)).toEqual([created.id]);
    expect(JSON.stringify(list)).not.toContain('whsec_');
  });

  it('rotates: the same url and event again give a new webhook and secret and retire the old one', async () => {
    const { key } = await t.newKey();
    const first = await register(t.url, key, 'https://hooks.example.com/rotate', 'order.paid');
    const second = await register(t.url, key, 'https://hooks.example.com/rotate', 'order.paid');
    expect(second.id).not.toBe(first.id);
    expect(second.secret).not.toBe(first.secret);
    // The retired one is still read, as RETIRED; the list shows the live registration only.
    const retired = await call(`${t.url}/config/webhooks/${first.id}/`, { key });
    expect(retired.status).toBe(200);
    expect(Webhook.strict().parse(retired.body.data)).toMatchObject({ id: first.id, status: 'RETIRED' });
    const list = WebhookList.parse((await call(`${t.url}/config/webhooks/`, { key })).body.data);
    expect(list.results.map((w) => w.id)).toEqual([second.id]);
  });

  it('pauses, resumes and deletes', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, 'https://hooks.example.com/p', 'order.paid');
    const paused = await call(`${t.url}/config/webhooks/${hook.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    expect(paused.body.data).toMatchObject({ status: 'DISABLED' });
    const resumed = await call(`${t.url}/config/webhooks/${hook.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'ACTIVE' },
    });
    expect(resumed.body.data).toMatchObject({ status: 'ACTIVE' });
    const empty = await call(`${t.url}/config/webhooks/${hook.id}/`, {
      method: 'PATCH',
      key,
      body: {},
    });
    expect(empty.status).toBe(400);
    const deleted = await call(`${t.url}/config/webhooks/${hook.id}/`, { method: 'DELETE', key });
    expect(deleted.status).toBe(204);
    expect((await call(`${t.url}/config/webhooks/${hook.id}/`, { key })).status).toBe(404);
  });

  it('answers 409, not 500, when a webhook is moved onto a URL another webhook of that event already has', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, 'https://hooks.example.com/taken', 'order.paid');
    const other = await register(t.url, key, 'https://hooks.example.com/free', 'order.paid');
    const res = await call(`${t.url}/config/webhooks/${other.id}/`, {
      method: 'PATCH',
      key,
      body: { url: 'https://hooks.example.com/taken' },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
  });

  it('keeps at most 50 webhooks per seller and environment; a rotation does not count twice', async () => {
    const { key, email } = await t.newKey();
    const url = (i: number) => `https://hooks.example.com/limit/${i}`;
    for (let i = 0; i < 49; i += 1) {
      expect((await post(key, { url: url(i), event: 'order.paid' })).status).toBe(201);
    }
    const paused = await register(t.url, key, url(49), 'order.paid');
    const pause = await call(`${t.url}/config/webhooks/${paused.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    expect(pause.status).toBe(200);
    // Fifty, one of them paused: the 51st is refused, whatever its event.
    const over = await post(key, { url: url(50), event: 'order.created' });
    expect(over.status).toBe(409);
    expect(over.body).toMatchObject({ code: 'limit_reached', message: expect.stringContaining('50') });
    // A rotation replaces a webhook: accepted at the limit.
    expect((await post(key, { url: url(0), event: 'order.paid' })).status).toBe(201);
    expect((await post(key, { url: url(49), event: 'order.paid' })).status).toBe(201);
    // The other environment has its own fifty.
    const live = await t.newKey({ environment: 'live', email });
    expect((await post(live.key, { url: url(50), event: 'order.paid' })).status).toBe(201);
    // A deletion frees a place.
    const list = WebhookList.parse((await call(`${t.url}/config/webhooks/?limit=1`, { key })).body.data);
    const del = await call(`${t.url}/config/webhooks/${list.results[0]?.id}/`, {
      method: 'DELETE',
      key,
    });
    expect(del.status).toBe(204);
    expect((await post(key, { url: url(50), event: 'order.created' })).status).toBe(201);
    expect((await post(key, { url: url(51), event: 'order.created' })).status).toBe(409);
  });

  it('counts concurrent registrations one at a time: never more than 50', async () => {
    const { key } = await t.newKey();
    for (let i = 0; i < 45; i += 1) {
      expect(
        (await post(key, { url: `https://hooks.example.com/race/${i}`, event: 'order.paid' })).status,
      ).toBe(201);
    }
    const racing = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(key, { url: `https://hooks.example.com/race/more-${i}`, event: 'order.paid' }),
      ),
    );
    const statuses = racing.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    let count = 0;
    let cursor: string | null = null;
    do {
      const page = WebhookList.parse(
        (await call(`${t.url}/config/webhooks/?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key })).body
          .data,
      );
      count += page.results.length;
      cursor = page.next_cursor;
    } while (cursor);
    expect(count).toBe(50);
  });

  it('refuses an unknown event and a malformed URL with the field named', async () => {
    const { key } = await t.newKey();
    const res = await post(key, { url: 'not a url', event: 'order.teleported' });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.data as object).sort()).toEqual(['event', 'url']);
  });

  it('keeps webhooks per seller (403) and per environment (404)', async () => {
    const a = await t.newKey();
    const hook = await register(t.url, a.key, 'https://hooks.example.com/mine', 'order.paid');
    const b = await t.newKey();
    expect((await call(`${t.url}/config/webhooks/${hook.id}/`, { key: b.key })).status).toBe(403);
    const live = await t.newKey({ email: a.email, environment: 'live' });
    expect((await call(`${t.url}/config/webhooks/${hook.id}/`, { key: live.key })).status).toBe(404);
    expect((await call(`${t.url}/config/webhooks/${randomUUID()}/`, { key: a.key })).status).toBe(404);
  });
});

describe('webhook targets (SSRF guard)', () => {
  it.each([
    ['http for live', 'http://hooks.example.com/x'],
    ['loopback', 'https://127.0.0.1/x'],
    ['loopback by name', 'https://localhost:8443/x'],
    ['IPv6 loopback', 'https://[::1]/x'],
    ['private', 'https://10.0.0.1/x'],
    ['private 172.16/12', 'https://172.20.1.1/x'],
    ['private 192.168/16', 'https://192.168.0.10/x'],
    ['link-local', 'https://169.254.10.10/x'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data'],
    ['CGNAT', 'https://100.64.0.1/x'],
    ['IPv4-mapped IPv6', 'https://[::ffff:10.0.0.1]/x'],
    ['a name resolving to a private address', 'https://internal.example.com/x'],
    ['a name with one private answer among public ones', 'https://mixed.example.com/x'],
    ['a name resolving to CGNAT', 'https://cgnat.example.com/x'],
  ])('refuses %s for a live webhook', async (_name, url) => {
    const live = await t.newKey({ environment: 'live' });
    const res = await post(live.key, { url, event: 'order.paid' });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({ url: [expect.any(String)] });
  });

  it('says only that a forbidden target is not allowed: no address, range or DNS answer', async () => {
    const live = await t.newKey({ environment: 'live' });
    for (const url of ['https://internal.example.com/x', 'https://10.0.0.1/x', 'https://localhost/x']) {
      const res = await post(live.key, { url, event: 'order.paid' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_error', data: { url: [LIVE_REFUSAL] } });
      expect(res.text).not.toMatch(/10\.|127\.|private|loopback|resolve/i);
    }
    const order = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key: live.key,
      body: {
        customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
        payment: { gross_amount: 100 },
        postback_url: 'https://[::ffff:10.0.0.8]/cb',
      },
    });
    expect(order.status).toBe(400);
    expect(order.body.data).toEqual({ postback_url: [LIVE_REFUSAL] });
    expect(order.text).not.toMatch(/10\.0\.0\.8|private/);
  });

  it('tells a test key refused a loopback target how to receive webhooks locally', async () => {
    const { key } = await t.newKey();
    const res = await post(key, { url: 'http://127.0.0.1:4242/', event: 'order.paid' });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({ url: [TEST_REFUSAL] });
    expect(TEST_REFUSAL).toContain('npm run cli -- webhooks listen');
    expect(res.text).not.toMatch(/loopback|127\.0\.0\.1 is|resolves/);
  });

  it('accepts a public https target and a name that does not resolve yet (checked again at delivery)', async () => {
    const live = await t.newKey({ environment: 'live' });
    expect((await post(live.key, { url: 'https://hooks.example.com/ok', event: 'order.paid' })).status).toBe(
      201,
    );
    expect(
      (await post(live.key, { url: 'https://not-yet.example.net/hook', event: 'order.paid' })).status,
    ).toBe(201);
  });

  it('lets test webhooks use http but not private targets unless the operator allows them', async () => {
    const { key } = await t.newKey();
    expect((await post(key, { url: 'http://hooks.example.com/t', event: 'order.paid' })).status).toBe(201);
    expect((await post(key, { url: 'http://127.0.0.1:9/t', event: 'order.paid' })).status).toBe(400);
  });

  it('checks the postback_url of live orders the same way', async () => {
    const live = await t.newKey({ environment: 'live' });
    const body = {
      customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
      payment: { gross_amount: 100 },
    };
    const res = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key: live.key,
      body: { ...body, postback_url: 'https://10.0.0.8/cb' },
    });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({ postback_url: [expect.any(String)] });
    const http = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key: live.key,
      body: { ...body, postback_url: 'http://hooks.example.com/cb' },
    });
    expect(http.body.data).toEqual({ postback_url: [expect.any(String)] });
  });

  it('checks the target again at every delivery: a name that now resolves to a private address is refused', async () => {
    const live = await t.newKey({ environment: 'live' });
    hosts['rebind.example.com'] = ['93.184.216.34'];
    const hook = await register(t.url, live.key, 'https://rebind.example.com/hook', 'order.created');
    // DNS changes after registration (DNS rebinding): the delivery must not connect.
    hosts['rebind.example.com'] = ['10.9.9.9'];
    await placeOrder(t.url, live.key);
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveries(t.url, live.key, hook.id);
        return list[0]?.attempts.length ? list : null;
      },
      { what: 'a refused attempt' },
    );
    // The seller reads the attempt: it says the target is not allowed, not what the name resolved to.
    expect(delivery?.attempts[0]).toMatchObject({ response_status: null, error: 'Not an allowed target' });
    expect(JSON.stringify(delivery)).not.toContain('10.9.9.9');
  });
});
