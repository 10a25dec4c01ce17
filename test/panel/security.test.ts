import {
  ApiKeyListResponse,
  Balance,
  CreatedApiKeyResponse,
  PanelSessionResponse,
  Withdrawal,
} from '@seller-api/contracts';
import { createHash, randomUUID } from 'node:crypto';
import { setSellerStatus } from '../../services/gateway/src/db/sellers';
import { standaloneOrder } from '../orders/fixtures';
import { call, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { login, originOf, panelCall, panelUser } from './helpers';

const t = useSystem();

describe('panel login and session cookie', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and answers the session with its CSRF token', async () => {
    const user = await panelUser(t.gateway.service);
    const res = await login(t.origin, user.email, user.password);
    expect(res.status).toBe(200);
    const session = PanelSessionResponse.parse(res.body);
    expect(session.data).toMatchObject({ email: user.email, role: 'seller', environment: 'test' });
    const flags = (res.setCookie ?? '').split(';').map((p) => p.trim());
    expect(flags[0]).toMatch(/^sa_session=[A-Za-z0-9_-]{43}$/);
    expect(flags).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']));
    // Plain http in tests: Secure is off unless configured (see the next test).
    expect(flags).not.toContain('Secure');
    expect(res.setCookie).not.toContain(user.password);
    const me = await panelCall(t.origin, '/panel/api/session', res);
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it('marks the cookie Secure with the __Host- prefix when PANEL_COOKIE_SECURE is on', async () => {
    const secureGateway = await t.startGateway({ PANEL_COOKIE_SECURE: 'true' });
    const secureOrigin = originOf(secureGateway.url);
    const user = await panelUser(t.gateway.service);
    const res = await login(secureOrigin, user.email, user.password);
    expect(res.status).toBe(200);
    const flags = (res.setCookie ?? '').split(';').map((p) => p.trim());
    expect(flags[0]).toMatch(/^__Host-sa_session=/);
    expect(flags).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Secure', 'Path=/']));
    // The plain-named cookie is not read by a gateway that issues __Host- cookies.
    const plain = `sa_session=${res.cookie?.split('=')[1] ?? ''}`;
    expect(
      (await panelCall(secureOrigin, '/panel/api/session', { cookie: plain, csrf: null })).body.data,
    ).toBeNull();
    expect((await panelCall(secureOrigin, '/panel/api/session', res)).body.data).toMatchObject({
      email: user.email,
    });
  });

  it('answers a wrong password and an unknown e-mail alike, with 401 and no cookie', async () => {
    const user = await panelUser(t.gateway.service);
    const wrong = await login(t.origin, user.email, 'not the password');
    const unknown = await login(t.origin, `nobody-${Date.now()}@example.com`, 'whatever-password');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.setCookie).toBeNull();
      expect(res.body.message).toBe('Invalid e-mail or password.');
    }
    expect((await login(t.origin, 'not-an-email', 'x')).status).toBe(400);
  });

  it('rate-limits login attempts per IP and e-mail, even with the right password afterwards', async () => {
    const user = await panelUser(t.gateway.service);
    for (let i = 0; i < 5; i += 1) {
      expect((await login(t.origin, user.email, `wrong-${i}`)).status).toBe(401);
    }
    const blocked = await login(t.origin, user.email, user.password);
    expect(blocked.status).toBe(429);
    expect(blocked.setCookie).toBeNull();
    // Another e-mail from the same address still has its own budget.
    const other = await panelUser(t.gateway.service);
    expect((await login(t.origin, other.email, other.password)).status).toBe(200);
  });

  it('sends Retry-After with the 429', async () => {
    const user = await panelUser(t.gateway.service);
    let last: Response | null = null;
    for (let i = 0; i < 6; i += 1) {
      last = await fetch(`${t.origin}/panel/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: t.origin },
        body: JSON.stringify({ email: user.email, password: 'wrong' }),
      });
    }
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('login budgets per account and per address', () => {
  // One e-mail and IP attempt, ten per IP, three failures per e-mail from anywhere. Each test sends
  // X-Forwarded-For (the gateway trusts loopback proxies) with addresses of its own.
  let limited: RunningGateway;
  let limitedOrigin: string;
  let lastOctet = 0;
  const newIp = () => `198.51.100.${(lastOctet += 1)}`;
  const loginFrom = (ip: string, email: string, password: string) =>
    login(limitedOrigin, email, password, { 'x-forwarded-for': ip });

  beforeAll(async () => {
    limited = await t.startGateway({ PANEL_LOGIN_ATTEMPTS: '1', PANEL_LOGIN_ACCOUNT_ATTEMPTS: '3' });
    limitedOrigin = originOf(limited.url);
  });

  it('limits failures per e-mail across addresses, for unknown e-mails alike, with Retry-After', async () => {
    const user = await panelUser(t.gateway.service);
    const unknown = `nobody-${randomUUID()}@example.com`;
    const refusals = [];
    for (const email of [user.email, unknown]) {
      for (let i = 0; i < 3; i += 1) {
        expect((await loginFrom(newIp(), email, `wrong-${i}`)).status).toBe(401);
      }
      // A fresh address with the right password: the account's budget is spent.
      const refused = await loginFrom(newIp(), email, user.password);
      expect(refused.status).toBe(429);
      expect(refused.setCookie).toBeNull();
      // Failures from elsewhere lock the account out for 15 minutes at most.
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      refusals.push(String(refused.body.message).replace(/\d+/g, 'N'));
    }
    expect(refusals).toEqual(['Too many login attempts. Retry after N s.', refusals[0]]);
  });

  it('refuses an attempt over one budget without spending the others', async () => {
    const blocked = await panelUser(t.gateway.service);
    for (let i = 0; i < 3; i += 1) {
      expect((await loginFrom(newIp(), blocked.email, 'wrong')).status).toBe(401);
    }
    // Twelve refusals from one address, whose own budget is ten attempts...
    const ip = newIp();
    for (let i = 0; i < 12; i += 1) {
      expect((await loginFrom(ip, blocked.email, blocked.password)).status).toBe(429);
    }
    // ...leave it whole: another user logs in from there.
    const other = await panelUser(t.gateway.service);
    expect((await loginFrom(ip, other.email, other.password)).status).toBe(200);

    // Attempts refused for their address and e-mail do not spend the e-mail's budget.
    const user = await panelUser(t.gateway.service);
    const first = newIp();
    expect((await loginFrom(first, user.email, 'wrong')).status).toBe(401);
    for (let i = 0; i < 3; i += 1) {
      expect((await loginFrom(first, user.email, 'wrong')).status).toBe(429);
    }
    expect((await loginFrom(newIp(), user.email, 'wrong')).status).toBe(401);
    expect((await loginFrom(newIp(), user.email, user.password)).status).toBe(200);
  });

  it("counts the account's failures only: a successful login gives its attempt back", async () => {
    const user = await panelUser(t.gateway.service);
    for (let i = 0; i < 2; i += 1) {
      expect((await loginFrom(newIp(), user.email, 'wrong')).status).toBe(401);
    }
    expect((await loginFrom(newIp(), user.email, user.password)).status).toBe(200);
    expect((await loginFrom(newIp(), user.email, 'wrong')).status).toBe(401);
    expect((await loginFrom(newIp(), user.email, 'wrong')).status).toBe(429);
  });
});

describe('account lockouts: an hour for the failing address, 15 minutes at most for the others', () => {
  // Enough attempts per address and e-mail that the failure counts (three each) are what refuses.
  let lockout: RunningGateway;
  let lockoutOrigin: string;
  const prefix = `panel-lockout:${randomUUID()}:`;
  const loginFrom = (ip: string, email: string, password: string) =>
    login(lockoutOrigin, email, password, { 'x-forwarded-for': ip });

  beforeAll(async () => {
    lockout = await t.startGateway({
      PANEL_LOGIN_ATTEMPTS: '10',
      PANEL_LOGIN_ACCOUNT_ATTEMPTS: '3',
      REDIS_KEY_PREFIX: prefix,
    });
    lockoutOrigin = originOf(lockout.url);
  });

  it('locks the address that failed out of the account for up to an hour, the owner elsewhere for 15 minutes', async () => {
    const operator = await panelUser(t.gateway.service, 'operator');
    const guesser = '203.0.113.21';
    for (let i = 0; i < 3; i += 1) {
      expect((await loginFrom(guesser, operator.email, `wrong-${i}`)).status).toBe(401);
    }
    const fromGuesser = await loginFrom(guesser, operator.email, operator.password);
    expect(fromGuesser.status).toBe(429);
    const guesserWait = Number(fromGuesser.headers.get('retry-after'));
    expect(guesserWait).toBeGreaterThan(15 * 60);
    expect(guesserWait).toBeLessThanOrEqual(3600);

    const owner = '203.0.113.22';
    const fromOwner = await loginFrom(owner, operator.email, operator.password);
    expect(fromOwner.status).toBe(429);
    const ownerWait = Number(fromOwner.headers.get('retry-after'));
    expect(ownerWait).toBeGreaterThan(0);
    expect(ownerWait).toBeLessThanOrEqual(15 * 60);

    // Once the 15 minutes of the all-addresses count are over (its Redis key gone), the owner logs in
    // and the guessing address is still locked out.
    const anyKey = `${prefix}rl:panel-account-any:${operator.email}`;
    const ttl = await lockout.service.redis.pttl(anyKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(15 * 60 * 1000);
    await lockout.service.redis.del(anyKey);
    expect((await loginFrom(owner, operator.email, operator.password)).status).toBe(200);
    expect((await loginFrom(guesser, operator.email, operator.password)).status).toBe(429);
  });

  it('keeps failures from many addresses to a 15-minute lockout: none of them reaches an hour', async () => {
    const user = await panelUser(t.gateway.service);
    for (let i = 0; i < 3; i += 1) {
      expect((await loginFrom(`203.0.113.${30 + i}`, user.email, 'wrong')).status).toBe(401);
    }
    for (const ip of ['203.0.113.30', '203.0.113.39']) {
      const refused = await loginFrom(ip, user.email, user.password);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
    }
  });
});

describe('concurrent password checks', () => {
  // One check at a time, one login waiting; one attempt per e-mail and IP, to see what a 503 spends.
  // From addresses of their own: this gateway's budget per IP is ten, and 127.0.0.1's is spent above.
  let capped: RunningGateway;
  let cappedOrigin: string;
  const loginFrom = (ip: string, email: string, password: string) =>
    login(cappedOrigin, email, password, { 'x-forwarded-for': ip });

  beforeAll(async () => {
    capped = await t.startGateway({
      PANEL_LOGIN_CONCURRENCY: '1',
      PANEL_LOGIN_QUEUE: '1',
      PANEL_LOGIN_ATTEMPTS: '1',
    });
    cappedOrigin = originOf(capped.url);
  });

  it('answers 503 with Retry-After when every check is busy and the queue is full, spending nothing', async () => {
    const checks = capped.service.passwordChecks;
    const waiting = await panelUser(t.gateway.service);
    const refused = await panelUser(t.gateway.service);
    // The test holds the only slot, as a long scrypt would.
    let release = () => {};
    const held = checks.run(() => new Promise<void>((resolve) => (release = resolve)));
    expect(checks.active).toBe(1);
    const queued = loginFrom('203.0.113.1', waiting.email, waiting.password);
    await waitFor(() => checks.waiting === 1, { what: 'a login waiting for a password check' });

    const busy = await loginFrom('203.0.113.2', refused.email, refused.password);
    expect(busy.status).toBe(503);
    expect(busy.body.message).toMatch(/Too many logins at once/);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.setCookie).toBeNull();

    release();
    await held;
    expect((await queued).status).toBe(200);
    expect(checks.active).toBe(0);
    // The 503 spent no attempt: this e-mail and address have a budget of one.
    expect((await loginFrom('203.0.113.2', refused.email, refused.password)).status).toBe(200);
  });
});

describe('session storage and seller status', () => {
  it('keeps in Redis only the hash of the session token', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    const token = session.cookie?.split('=')[1] ?? '';
    const hash = createHash('sha256').update(token).digest('hex');
    const prefix = String(t.env.REDIS_KEY_PREFIX);
    const stored = await t.gateway.service.redis.get(`${prefix}panel:session:${hash}`);
    expect(stored).not.toBeNull();
    expect(stored).not.toContain(token);
    expect(await t.gateway.service.redis.exists(`${prefix}panel:session:${token}`)).toBe(0);
    const ttl = await t.gateway.service.redis.ttl(`${prefix}panel:session:${hash}`);
    expect(ttl).toBeGreaterThan(8 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(8 * 3600);
  });

  it('refuses a suspended seller at once, with a session already open, and at login', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    await setSellerStatus(
      t.gateway.service.runtime.sql,
      t.gateway.service.keyVersions,
      user.sellerId ?? '',
      'SUSPENDED',
    );
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', session)).status).toBe(403);
    const key = await panelCall(t.origin, '/panel/api/keys', session, {
      method: 'POST',
      body: { environment: 'test' },
    });
    expect(key.status).toBe(403);
    expect((await login(t.origin, user.email, user.password)).status).toBe(403);
  });

  it("refuses a suspended seller the order's PIX charge too, which an active seller gets", async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    const order = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', session, {
      method: 'POST',
      body: standaloneOrder(),
    });
    expect(order.status).toBe(201);
    const pixPath = `/panel/api/orders/${(order.body.data as { uuid: string }).uuid}/pix`;
    const pix = await panelCall(t.origin, pixPath, session);
    expect(pix.status).toBe(200);
    // The same per-user budget as the /v1 routes.
    expect(pix.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    await setSellerStatus(
      t.gateway.service.runtime.sql,
      t.gateway.service.keyVersions,
      user.sellerId ?? '',
      'SUSPENDED',
    );
    const refused = await panelCall(t.origin, pixPath, session);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('This seller account is suspended.');
  });
});

describe('Idempotency-Key through the panel', () => {
  it('answers a repeated withdrawal request with the same key once: same answer, one withdrawal', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    const order = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', session, {
      method: 'POST',
      body: standaloneOrder(),
    });
    const uuid = (order.body.data as { uuid: string }).uuid;
    const paid = await panelCall(t.origin, `/panel/api/v1/sandbox/orders/${uuid}/pay/`, session, {
      method: 'POST',
    });
    expect(paid.status).toBe(200);
    await waitFor(
      async () => {
        const res = await panelCall(t.origin, '/panel/api/v1/finance/balance/', session);
        return Balance.parse(res.body.data).available_amount > 0 || null;
      },
      { what: 'the credit of the paid order' },
    );

    const key = randomUUID();
    const body = { amount: 1000, pix_key: 'maria@example.com', pix_key_type: 'email' };
    const request = (b: unknown) =>
      panelCall(t.origin, '/panel/api/v1/finance/withdrawals/', session, {
        method: 'POST',
        body: b,
        headers: { 'idempotency-key': key },
      });
    const first = await request(body);
    expect(first.status).toBe(201);
    const again = await request(body);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // The same key with another body is a conflict, not a second withdrawal.
    expect((await request({ ...body, amount: 2000 })).status).toBe(409);
    const list = await panelCall(t.origin, '/panel/api/v1/finance/withdrawals/', session);
    const withdrawals = (list.body.data as { results: unknown[] }).results.map((w) => Withdrawal.parse(w));
    expect(withdrawals.map((w) => w.uuid)).toEqual([Withdrawal.parse(first.body.data).uuid]);
    // A malformed key is a 400, as on the public API.
    const bad = await panelCall(t.origin, '/panel/api/v1/finance/withdrawals/', session, {
      method: 'POST',
      body,
      headers: { 'idempotency-key': 'not a key' },
    });
    expect(bad.status).toBe(400);
  });
});

describe('CSRF protection', () => {
  it('refuses a change without the token, with a wrong token, or from another origin', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    const body = { environment: 'test', label: 'csrf' };
    const noToken = await panelCall(t.origin, '/panel/api/keys', session, {
      method: 'POST',
      body,
      csrf: false,
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.message).toBe('Missing CSRF token.');
    const wrongToken = await panelCall(t.origin, '/panel/api/keys', session, {
      method: 'POST',
      body,
      headers: { 'x-csrf-token': 'x'.repeat(43) },
      csrf: false,
    });
    expect(wrongToken.status).toBe(403);
    const crossOrigin = await panelCall(t.origin, '/panel/api/keys', session, {
      method: 'POST',
      body,
      headers: { origin: 'https://evil.example.com' },
    });
    expect(crossOrigin.status).toBe(403);
    const crossSite = await panelCall(t.origin, '/panel/api/keys', session, {
      method: 'POST',
      body,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    // The proxied API routes are guarded the same way.
    const proxied = await panelCall(t.origin, '/panel/api/v1/config/webhooks/', session, {
      method: 'POST',
      body: { url: 'https://example.com/hook', event: 'order.paid' },
      csrf: false,
    });
    expect(proxied.status).toBe(403);
    // Nothing was created by the refused requests.
    const keys = ApiKeyListResponse.parse((await panelCall(t.origin, '/panel/api/keys', session)).body);
    expect(keys.data.results).toEqual([]);
    const ok = await panelCall(t.origin, '/panel/api/keys', session, { method: 'POST', body });
    expect(ok.status).toBe(201);
  });

  it('refuses a login from another origin and a login posted as a form', async () => {
    const user = await panelUser(t.gateway.service);
    const foreign = await login(t.origin, user.email, user.password, { origin: 'https://evil.example.com' });
    expect(foreign.status).toBe(403);
    expect(foreign.setCookie).toBeNull();
    const form = await fetch(`${t.origin}/panel/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${encodeURIComponent(user.email)}&password=${encodeURIComponent(user.password)}`,
    });
    expect(form.status).toBe(415);
    expect(await form.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(form.headers.get('set-cookie')).toBeNull();
  });
});

describe('logout', () => {
  it('replaces the session at each login: the previous token stops working', async () => {
    const user = await panelUser(t.gateway.service);
    const first = await login(t.origin, user.email, user.password);
    const second = await login(t.origin, user.email, user.password, { cookie: first.cookie ?? '' });
    expect(second.status).toBe(200);
    expect(second.cookie).not.toBe(first.cookie);
    expect(second.csrf).not.toBe(first.csrf);
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', first)).status).toBe(401);
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', second)).status).toBe(200);
  });

  it('deletes the session on the server: the old cookie no longer works', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', session)).status).toBe(200);
    expect(
      (await panelCall(t.origin, '/panel/api/logout', session, { method: 'POST', csrf: false })).status,
    ).toBe(403);
    const out = await panelCall(t.origin, '/panel/api/logout', session, { method: 'POST' });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^sa_session=; .*Max-Age=0/);
    // Replaying the cookie a browser was told to forget: the server no longer knows it.
    const after = await panelCall(t.origin, '/panel/api/session', session);
    expect(after.status).toBe(200);
    expect(after.body.data).toBeNull();
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', session)).status).toBe(401);
    expect(
      (
        await panelCall(t.origin, '/panel/api/keys', session, {
          method: 'POST',
          body: { environment: 'test' },
        })
      ).status,
    ).toBe(401);
  });
});

describe('panel routes reach the services with the session identity', () => {
  it('creates keys that work on the public API, one active per environment', async () => {
    const user = await panelUser(t.gateway.service);
    const session = await login(t.origin, user.email, user.password);
    const first = CreatedApiKeyResponse.parse(
      (
        await panelCall(t.origin, '/panel/api/keys', session, {
          method: 'POST',
          body: { environment: 'test', label: 'ci' },
        })
      ).body,
    );
    expect(first.data.key).toMatch(/^mk_test_[A-Za-z0-9]{40}$/);
    expect(first.data.key.startsWith(first.data.prefix)).toBe(true);
    expect(first.data.key.endsWith(first.data.last4)).toBe(true);
    expect((await call(`${t.url}/sellers/orders/`, { key: first.data.key })).status).toBe(200);
    const second = CreatedApiKeyResponse.parse(
      (
        await panelCall(t.origin, '/panel/api/keys', session, {
          method: 'POST',
          body: { environment: 'test' },
        })
      ).body,
    );
    expect((await call(`${t.url}/sellers/orders/`, { key: first.data.key })).status).toBe(401);
    expect((await call(`${t.url}/sellers/orders/`, { key: second.data.key })).status).toBe(200);
    const keys = ApiKeyListResponse.parse((await panelCall(t.origin, '/panel/api/keys', session)).body);
    expect(keys.data.results).toEqual([
      expect.objectContaining({
        environment: 'test',
        label: null,
        prefix: second.data.prefix,
        last4: second.data.last4,
      }),
    ]);
    expect(JSON.stringify(keys)).not.toContain(second.data.key);
  });

  it('applies the route rules: roles, sandbox environment, unknown and public routes', async () => {
    const seller = await login(t.origin, ...(await credentials('seller')));
    const operator = await login(t.origin, ...(await credentials('operator')));
    expect((await panelCall(t.origin, '/panel/api/v1/ops/withdrawals/', seller)).status).toBe(403);
    expect((await panelCall(t.origin, '/panel/api/v1/ops/withdrawals/', operator)).status).toBe(200);
    expect((await panelCall(t.origin, '/panel/api/v1/sellers/orders/', operator)).status).toBe(403);
    expect((await panelCall(t.origin, '/panel/api/v1/nowhere/', seller)).status).toBe(404);
    expect(
      (await panelCall(t.origin, '/panel/api/v1/psp/webhook/pix', seller, { method: 'POST', body: {} }))
        .status,
    ).toBe(404);
    const live = await panelCall(t.origin, '/panel/api/session/environment', seller, {
      method: 'POST',
      body: { environment: 'live' },
    });
    expect(PanelSessionResponse.parse(live.body).data.environment).toBe('live');
    const sandbox = await panelCall(
      t.origin,
      '/panel/api/v1/sandbox/orders/00000000-0000-4000-8000-000000000000/pay/',
      seller,
      { method: 'POST' },
    );
    expect(sandbox.status).toBe(403);
    expect(
      (
        await panelCall(t.origin, '/panel/api/session/environment', seller, {
          method: 'POST',
          body: { environment: 'prod' },
        })
      ).status,
    ).toBe(400);
  });

  it('refuses every panel route without a session, and says nobody is logged in', async () => {
    for (const path of [
      '/panel/api/keys',
      '/panel/api/v1/sellers/orders/',
      '/panel/api/v1/finance/balance/',
    ]) {
      expect((await panelCall(t.origin, path, { cookie: null, csrf: null })).status).toBe(401);
      expect((await panelCall(t.origin, path, { cookie: 'sa_session=forged', csrf: null })).status).toBe(401);
    }
    for (const cookie of [null, 'sa_session=forged', `sa_session=${'a'.repeat(43)}`]) {
      const res = await panelCall(t.origin, '/panel/api/session', { cookie, csrf: null });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: 'Not logged in.', data: null });
    }
  });
});

async function credentials(role: 'seller' | 'operator'): Promise<[string, string]> {
  const user = await panelUser(t.gateway.service, role);
  return [user.email, user.password];
}
