import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { targetRefusalMessage } from '@seller-api/service-kit';
import { runCli } from '../../services/gateway/src/cli';
import { ROOT, startWithNpmStart, type StartedSystem } from '../support/npm-start';
import { call, uniqueEmail } from '../support/system';
import { waitFor } from '../support/wait';

// `npm run cli -- webhooks listen` against the system `npm start` runs (NODE_ENV=development, where test
// webhooks may reach loopback without a setting): docs/webhooks.md, "Local receivers".
let system: StartedSystem;

beforeAll(async () => {
  system = await startWithNpmStart();
}, 240_000);
afterAll(() => system?.stop());

async function newKey(environment: 'test' | 'live', sellerName: string): Promise<string> {
  let stdout = '';
  const code = await runCli(
    ['keys', 'create', '--email', uniqueEmail(), '--env', environment, '--seller-name', sellerName],
    { stdout: (t) => (stdout += t), stderr: () => undefined, env: system.env },
  );
  expect(code).toBe(0);
  return stdout.trim().split('\n').at(-1) as string;
}

const children: ChildProcess[] = [];
// A failed expectation must not leave a listener running (and jest waiting for it).
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM');
});

/** The CLI as README.md runs it, a child process whose output the test reads. */
function listen(
  args: string[],
  { detached = false } = {},
): { child: ChildProcess; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  // `detached`: its own process group, so that a SIGKILL reaches the CLI under scripts/cli.mjs too.
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/cli.mjs'), 'webhooks', 'listen', ...args], {
    cwd: ROOT,
    env: system.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  children.push(child);
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  return { child, out: () => out, err: () => err };
}

describe('webhooks listen', () => {
  it('prints a verified order.paid of an order paid in the sandbox, and removes its webhooks when stopped', async () => {
    const key = await newKey('test', 'Loja do Teste');
    const listener = listen(['--key', key, '--events', 'order.paid,order.created']);
    const exited = new Promise<number | null>((resolve) => listener.child.once('exit', resolve));
    const url = await waitFor(() => /Listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(listener.err())?.[1], {
      timeoutMs: 60_000,
      what: `the listener to start (stderr: ${listener.err()})`,
    });
    const hooks = await call(`${system.api}/config/webhooks/`, { key });
    expect((hooks.body.data as { results: unknown[] }).results).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url, event: 'order.paid', status: 'ACTIVE' }),
        expect.objectContaining({ url, event: 'order.created', status: 'ACTIVE' }),
      ]),
    );

    const order = await call(`${system.api}/sellers/orders/`, {
      method: 'POST',
      key,
      body: {
        customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
        payment: { gross_amount: 2500 },
      },
    });
    expect(order.status).toBe(201);
    const uuid = (order.body.data as { uuid: string }).uuid;
    expect((await call(`${system.api}/sandbox/orders/${uuid}/pay/`, { method: 'POST', key })).status).toBe(
      200,
    );

    const printed = await waitFor(() => /^order\.paid (evt_\S+) verified\n(.*)$/m.exec(listener.out()), {
      timeoutMs: 20_000,
      what: `order.paid to be printed (stdout: ${listener.out()})`,
    });
    const body = JSON.parse(printed[2] as string) as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'order.paid',
      delivery_attempt: 1,
      data: { order: { uuid, status: 'PAID' }, seller: { name: 'Loja do Teste' } },
    });
    expect(listener.out()).toMatch(/^order\.created evt_\S+ verified$/m);

    // A delivery it cannot verify is answered 400 and said so, never printed as verified.
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-event-id': 'evt_forged',
        'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'x-webhook-signature': `sha256=${'0'.repeat(64)}`,
      },
      body: '{"event":"order.paid"}',
    });
    expect(forged.status).toBe(400);
    await waitFor(() => listener.err().includes('refused a delivery that failed verification'));
    expect(listener.out()).not.toContain('evt_forged');

    listener.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(listener.err()).toContain('Removed 2 webhook(s).');
    const after = await call(`${system.api}/config/webhooks/`, { key });
    expect((after.body.data as { results: unknown[] }).results).toEqual([]);
  });

  it("deletes what a killed listener left behind, and never a running listener's webhooks", async () => {
    const key = await newKey('test', 'Loja Interrompida');
    const started = (l: ReturnType<typeof listen>) =>
      waitFor(() => /Listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(l.err())?.[1], {
        timeoutMs: 60_000,
        what: `a listener to start (stderr: ${l.err()})`,
      });
    const urls = async () =>
      (
        (await call(`${system.api}/config/webhooks/`, { key })).body.data as { results: { url: string }[] }
      ).results
        .map((h) => h.url)
        .sort();
    const killed = listen(['--key', key, '--events', 'order.paid'], { detached: true });
    const killedUrl = await started(killed);
    const killedExit = new Promise((resolve) => killed.child.once('exit', resolve));
    process.kill(-(killed.child.pid as number), 'SIGKILL');
    await killedExit;
    // Its receiver is gone with it (the CLI under the wrapper included).
    await waitFor(
      async () =>
        await fetch(killedUrl).then(
          () => false,
          () => true,
        ),
      {
        what: 'the killed listener to stop answering',
      },
    );
    const running = listen(['--key', key, '--events', 'order.paid']);
    const runningUrl = await started(running);
    expect(running.err()).toContain('Removed 1 webhook(s) an earlier listener left behind.');
    expect(await urls()).toEqual([runningUrl]);
    expect(runningUrl).not.toBe(killedUrl);
    // A second listener beside the first leaves the first one's webhook alone.
    const beside = listen(['--key', key, '--events', 'order.created']);
    const besideUrl = await started(beside);
    expect(beside.err()).not.toContain('left behind');
    expect(await urls()).toEqual([runningUrl, besideUrl].sort());
  });

  it('lets test webhooks of a local system reach loopback, never live ones, and names the rule', async () => {
    const live = await newKey('live', 'Loja Viva');
    const refused = await call(`${system.api}/config/webhooks/`, {
      method: 'POST',
      key: live,
      body: { url: 'https://127.0.0.1:4242/', event: 'order.paid' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.data).toEqual({
      url: [targetRefusalMessage({ environment: 'live', allowPrivate: false })],
    });
    expect(refused.text).not.toMatch(/loopback/);
    const test = await newKey('test', 'Loja Teste');
    const local = await call(`${system.api}/config/webhooks/`, {
      method: 'POST',
      key: test,
      body: { url: 'http://localhost:4242/hooks', event: 'order.paid' },
    });
    expect(local.status).toBe(201);
    // Private addresses stay closed: only this machine is opened.
    const privateTarget = await call(`${system.api}/config/webhooks/`, {
      method: 'POST',
      key: test,
      body: { url: 'http://10.0.0.1/hooks', event: 'order.paid' },
    });
    expect(privateTarget.body.data).toEqual({
      url: [targetRefusalMessage({ environment: 'test', allowPrivate: false, allowLoopback: true })],
    });
  });

  it('refuses a live key with a clear message and exit code 2', async () => {
    const live = await newKey('live', 'Loja Viva');
    const listener = listen(['--key', live]);
    const code = await new Promise<number | null>((resolve) => listener.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(listener.err()).toContain('webhooks listen takes test keys only');
    const hooks = await call(`${system.api}/config/webhooks/`, { key: live });
    expect((hooks.body.data as { results: unknown[] }).results).toEqual([]);
  });
});
