import { runCli } from '../../services/gateway/src/cli';
import { login, originOf, panelCall } from '../panel/helpers';
import { call, uniqueEmail } from '../support/system';
import { useSystem } from '../support/use-system';

const t = useSystem();

async function cli(args: string[], env: Record<string, string> = {}, typed?: string[]) {
  let stdout = '';
  let stderr = '';
  // What the operator types at the password prompt (or pipes to stdin), one answer per question.
  const answers = [...(typed ?? [])];
  const readPassword = async ({ confirm }: { confirm: boolean }) => {
    const first = answers.shift() ?? '';
    if (confirm && answers.length > 0 && answers.shift() !== first)
      throw new Error('the two passwords differ');
    return first;
  };
  const code = await runCli(
    args,
    {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      env: { ...t.env, ...env },
    },
    { readPassword },
  );
  return { code, stdout, stderr, lastLine: stdout.trimEnd().split('\n').at(-1) ?? '' };
}

describe('operator CLI', () => {
  it('creates the user, its seller and a key, printing the key alone on the last line', async () => {
    const email = uniqueEmail();
    const res = await cli(['keys', 'create', '--email', email, '--env', 'test', '--label', 'ci']);
    expect(res.code).toBe(0);
    expect(res.lastLine).toMatch(/^mk_test_[A-Za-z0-9]{32,}$/);
    expect(res.stderr).not.toContain(res.lastLine);
    const balance = await call(`${t.url}/finance/balance/`, { key: res.lastLine });
    expect(balance.status).toBe(200);
  });

  it('revokes the previous key of the same environment when a new one is created', async () => {
    const email = uniqueEmail();
    const first = (await cli(['keys', 'create', '--email', email, '--env', 'live'])).lastLine;
    // In the gateway's key cache before the rotation.
    expect((await call(`${t.url}/finance/balance/`, { key: first })).status).toBe(200);
    const second = (await cli(['keys', 'create', '--email', email, '--env', 'live'])).lastLine;
    expect(first).not.toBe(second);
    expect((await call(`${t.url}/finance/balance/`, { key: first })).status).toBe(401);
    expect((await call(`${t.url}/finance/balance/`, { key: second })).status).toBe(200);
  });

  it('creates operator keys that reach only operator routes', async () => {
    const key = (
      await cli(['keys', 'create', '--email', uniqueEmail('op'), '--env', 'live', '--role', 'operator'])
    ).lastLine;
    expect((await call(`${t.url}/finance/balance/`, { key })).status).toBe(403);
    const ops = await call(`${t.url}/ops/withdrawals/`, { key });
    expect(ops.status).not.toBe(403);
    expect(ops.status).not.toBe(401);
  });

  it('creates panel users with a hashed password', async () => {
    const email = uniqueEmail();
    const res = await cli([
      'users',
      'create',
      '--email',
      email,
      '--password',
      'correct horse battery',
      '--seller-name',
      'Loja Azul',
    ]);
    expect(res.code).toBe(0);
    const rows = await t.gateway.service.runtime.orm.em
      .fork()
      .execute<Array<{ password_hash: string; name: string }>>(
        'select u.password_hash, s.name from gateway.users u join gateway.sellers s on s.id = u.seller_id where u.email = ?',
        [email],
      );
    expect(rows[0]?.name).toBe('Loja Azul');
    expect(rows[0]?.password_hash).toMatch(/^scrypt\$/);
    expect(rows[0]?.password_hash).not.toContain('correct horse');
  });

  it('ends the open panel sessions of a user whose password it changes', async () => {
    const email = uniqueEmail();
    const origin = originOf(t.url);
    expect((await cli(['users', 'create', '--email', email, '--password', 'first password'])).code).toBe(0);
    const first = await login(origin, email, 'first password');
    const second = await login(origin, email, 'first password');
    expect((await panelCall(origin, '/panel/api/v1/finance/balance/', first)).status).toBe(200);
    const reset = await cli(['users', 'create', '--email', email, '--password', 'second password']);
    expect(reset.code).toBe(0);
    expect(reset.stderr).toContain('ended 2 open panel session(s)');
    // The flag still works, with a word about where the password went.
    expect(reset.stderr).toContain('warning: --password puts the password in the command line');
    for (const old of [first, second]) {
      expect((await panelCall(origin, '/panel/api/v1/finance/balance/', old)).status).toBe(401);
    }
    expect((await login(origin, email, 'first password')).status).toBe(401);
    const fresh = await login(origin, email, 'second password');
    expect((await panelCall(origin, '/panel/api/v1/finance/balance/', fresh)).status).toBe(200);
  });

  it('creates no key when Redis is unreachable, since the gateways could not learn of the revocation', async () => {
    const email = uniqueEmail();
    const first = (await cli(['keys', 'create', '--email', email, '--env', 'test'])).lastLine;
    const res = await cli(['keys', 'create', '--email', email, '--env', 'test'], {
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: Redis is unreachable.*nothing was changed/m);
    // The previous key still works: nothing was revoked.
    expect((await call(`${t.url}/finance/balance/`, { key: first })).status).toBe(200);
  });

  it('still changes the password when Redis is unreachable, with a warning', async () => {
    const email = uniqueEmail();
    const origin = originOf(t.url);
    expect((await cli(['users', 'create', '--email', email, '--password', 'first password'])).code).toBe(0);
    const res = await cli(['users', 'create', '--email', email, '--password', 'second password'], {
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/^warning: Redis \(REDIS_URL\) is unreachable.*sessions were not ended/m);
    expect((await login(origin, email, 'second password')).status).toBe(200);
  });

  it("refuses, changing nothing, a role or seller name other than an existing user's", async () => {
    const email = uniqueEmail();
    const origin = originOf(t.url);
    const create = ['users', 'create', '--email', email, '--password', 'first password'];
    expect((await cli([...create, '--seller-name', 'Loja Azul'])).code).toBe(0);
    const before = await userRow(email);

    const promote = await cli([
      'users',
      'create',
      '--email',
      email,
      '--password',
      'second password',
      '--role',
      'operator',
    ]);
    expect(promote.code).toBe(1);
    expect(promote.stderr).toMatch(/^refused: .* already exists with the role seller.*nothing was changed/m);
    expect(promote.stdout).toBe('');
    const rename = await cli([
      'users',
      'create',
      '--email',
      email,
      '--password',
      'second password',
      '--seller-name',
      'Loja Verde',
    ]);
    expect(rename.code).toBe(1);
    expect(rename.stderr).toMatch(
      /^refused: .* already exists with the seller name "Loja Azul".*nothing was changed/m,
    );
    // keys create too: no operator key for a seller user.
    const key = await cli(['keys', 'create', '--email', email, '--env', 'test', '--role', 'operator']);
    expect(key.code).toBe(1);
    expect(key.stderr).toMatch(/^refused: .* already exists with the role seller/m);
    expect(key.stdout).toBe('');
    expect(await userRow(email)).toEqual(before);
    expect((await login(origin, email, 'first password')).status).toBe(200);

    // The values it has are no conflict: the password is reset, as documented.
    const same = await cli([
      'users',
      'create',
      '--email',
      email,
      '--password',
      'second password',
      '--role',
      'seller',
      '--seller-name',
      'Loja Azul',
    ]);
    expect(same.code).toBe(0);
    expect(same.stderr).toContain(`set a new password for the existing seller user ${email}`);
    expect(same.lastLine).toBe(before.id);
    expect((await login(origin, email, 'second password')).status).toBe(200);
  });

  it('resets an operator password without --role, leaving the operator an operator', async () => {
    const email = uniqueEmail('op');
    const origin = originOf(t.url);
    expect(
      (await cli(['users', 'create', '--email', email, '--password', 'first password', '--role', 'operator']))
        .code,
    ).toBe(0);
    const reset = await cli(['users', 'create', '--email', email, '--password', 'second password']);
    expect(reset.code).toBe(0);
    expect(reset.stderr).toContain(`set a new password for the existing operator user ${email}`);
    expect(await userRow(email)).toMatchObject({ role: 'operator', seller_id: null });
    const session = await login(origin, email, 'second password');
    expect(session.body.data).toMatchObject({ role: 'operator' });
    // An operator has no seller to name.
    const named = await cli([
      'users',
      'create',
      '--email',
      email,
      '--password',
      'third password',
      '--seller-name',
      'Loja',
    ]);
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(/^refused: .*role operator, without a seller/m);
    expect(
      (
        await cli([
          'users',
          'create',
          '--email',
          uniqueEmail('op'),
          '--password',
          'a password',
          '--role',
          'operator',
          '--seller-name',
          'Loja',
        ])
      ).code,
    ).toBe(2);
  });

  it('takes the password from the prompt or stdin, never needing it on the command line', async () => {
    const email = uniqueEmail();
    const origin = originOf(t.url);
    const res = await cli(['users', 'create', '--email', email], {}, [
      'a typed passphrase',
      'a typed passphrase',
    ]);
    expect(res.code).toBe(0);
    expect((await login(origin, email, 'a typed passphrase')).status).toBe(200);
    const piped = await cli(['users', 'create', '--email', email, '--password-stdin'], {}, [
      'a piped passphrase',
    ]);
    expect(piped.code).toBe(0);
    expect((await login(origin, email, 'a piped passphrase')).status).toBe(200);
    const short = await cli(['users', 'create', '--email', email], {}, ['short']);
    expect(short).toMatchObject({ code: 2, stderr: expect.stringMatching(/at least 8 characters/) });
    const differ = await cli(['users', 'create', '--email', email], {}, ['one passphrase', 'another one']);
    expect(differ.code).toBe(1);
    expect((await login(origin, email, 'a piped passphrase')).status).toBe(200);
    const both = ['users', 'create', '--email', email, '--password', 'x long enough', '--password-stdin'];
    expect((await cli(both)).code).toBe(2);
  });

  it('completes the user keys create made with a seller name: the panel step of README.md', async () => {
    const email = uniqueEmail();
    const key = await cli([
      'keys',
      'create',
      '--email',
      email,
      '--seller-name',
      'Loja da Maria',
      '--env',
      'test',
    ]);
    expect(key.code).toBe(0);
    expect((await userRow(email)).name).toBe('Loja da Maria');
    const panel = await cli(['users', 'create', '--email', email, '--seller-name', 'Loja da Maria'], {}, [
      'a long passphrase',
      'a long passphrase',
    ]);
    expect(panel.code).toBe(0);
    expect(panel.stderr).toContain(`set a new password for the existing seller user ${email}`);
    expect((await login(originOf(t.url), email, 'a long passphrase')).status).toBe(200);
    // The key still works: completing the user did not touch it.
    expect((await call(`${t.url}/finance/balance/`, { key: key.lastLine })).status).toBe(200);
  });

  it('renames a seller: orders made afterwards carry the new name, earlier ones keep theirs', async () => {
    const email = uniqueEmail();
    const { lastLine: key } = await cli([
      'keys',
      'create',
      '--email',
      email,
      '--seller-name',
      'Loja Antiga',
      '--env',
      'test',
    ]);
    const order = async () => {
      const created = await call(`${t.url}/sellers/orders/`, {
        method: 'POST',
        key,
        body: {
          customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
          payment: { gross_amount: 1000 },
        },
      });
      expect(created.status).toBe(201);
      return (created.body.data as { uuid: string }).uuid;
    };
    const sellerOf = async (uuid: string) => {
      const read = await call(`${t.url}/sellers/orders/${uuid}/`, { key });
      return (read.body.data as { parties: { seller?: { name: string } } }).parties.seller?.name;
    };
    const before = await order();
    const rename = await cli(['users', 'update', '--email', email, '--seller-name', 'Loja Nova']);
    expect(rename.code).toBe(0);
    expect(rename.stderr).toContain('from "Loja Antiga" to "Loja Nova"');
    expect((await userRow(email)).name).toBe('Loja Nova');
    const after = await order();
    expect(await sellerOf(after)).toBe('Loja Nova');
    expect(await sellerOf(before)).toBe('Loja Antiga');
    // A later users create with the new name is no conflict; the old one is.
    expect(
      (
        await cli(['users', 'create', '--email', email, '--seller-name', 'Loja Antiga'], {}, [
          'a long passphrase',
        ])
      ).stderr,
    ).toMatch(/^refused: .*seller name "Loja Nova".*users update/m);
  });

  it('renames only the seller of a seller user', async () => {
    const op = uniqueEmail('op');
    await cli(['keys', 'create', '--email', op, '--env', 'live', '--role', 'operator']);
    const operator = await cli(['users', 'update', '--email', op, '--seller-name', 'Loja']);
    expect(operator).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^refused: .*without a seller/m),
    });
    const nobody = await cli(['users', 'update', '--email', uniqueEmail(), '--seller-name', 'Loja']);
    expect(nobody).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^refused: no user has the e-mail/m),
    });
    expect((await cli(['users', 'update', '--email', op, '--seller-name', '  '])).code).toBe(2);
  });

  it('refuses webhooks listen with a live key before registering anything', async () => {
    const { lastLine: live } = await cli(['keys', 'create', '--email', uniqueEmail(), '--env', 'live']);
    const res = await cli(['webhooks', 'listen', '--key', live, '--events', 'order.paid']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/test keys only: live webhooks never reach this machine/);
    expect((await call(`${t.url}/config/webhooks/`, { key: live })).body.data).toMatchObject({
      results: [],
    });
    const unknown = await cli(['webhooks', 'listen', '--key', live, '--events', 'order.paidd']);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown event "order.paidd"/) });
  });

  it('explains bad usage with exit code 2', async () => {
    expect((await cli(['keys', 'create', '--email', 'nope', '--env', 'test'])).code).toBe(2);
    expect((await cli(['keys', 'create', '--email', uniqueEmail(), '--env', 'prod'])).stderr).toMatch(
      /--env/,
    );
    expect((await cli(['keys', 'delete'])).code).toBe(2);
  });
});

async function userRow(email: string) {
  const rows = await t.gateway.service.runtime.orm.em.fork().execute<
    Array<{
      id: string;
      role: string;
      seller_id: string | null;
      password_hash: string;
      name: string | null;
    }>
  >('select u.id, u.role, u.seller_id, u.password_hash, s.name from gateway.users u left join gateway.sellers s on s.id = u.seller_id where u.email = ?', [email]);
  expect(rows).toHaveLength(1);
  return rows[0] as (typeof rows)[number];
}
