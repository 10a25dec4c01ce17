import { HttpError } from '@seller-api/service-kit';
import { hashPassword } from '../domain/accounts';
import { PasswordChecks } from './password-checks';

/** A task that runs until the test ends it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('password checks', () => {
  it('run at most `concurrency` tasks, then queue up to `queueLimit`, then refuse with 503', async () => {
    const checks = new PasswordChecks(2, 1);
    const gates = [gate(), gate(), gate()];
    const order: number[] = [];
    const runs = gates.map((g, i) =>
      checks.run(async () => {
        order.push(i);
        await g.opened;
        return i;
      }),
    );
    expect(checks.active).toBe(2);
    expect(checks.waiting).toBe(1);
    const refused = await checks.run(() => Promise.resolve(-1)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HttpError);
    expect(refused).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      headers: { 'Retry-After': '1' },
    });

    // A finished task hands its slot to the waiting one.
    gates[0]?.open();
    await expect(runs[0]).resolves.toBe(0);
    await Promise.resolve();
    expect(order).toEqual([0, 1, 2]);
    expect(checks.active).toBe(2);
    expect(checks.waiting).toBe(0);
    gates[1]?.open();
    gates[2]?.open();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2]);
    expect(checks.active).toBe(0);
  });

  it('frees the slot of a task that fails', async () => {
    const checks = new PasswordChecks(1, 0);
    await expect(checks.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(checks.active).toBe(0);
    await expect(checks.run(() => Promise.resolve('ok'))).resolves.toBe('ok');
  });

  it('checks a password against its hash, and a missing hash never matches', async () => {
    const checks = new PasswordChecks(1, 0);
    const stored = await hashPassword('a long passphrase');
    await expect(checks.verify('a long passphrase', stored)).resolves.toBe(true);
    await expect(checks.verify('another passphrase', stored)).resolves.toBe(false);
    await expect(checks.verify('a long passphrase', null)).resolves.toBe(false);
    expect(checks.active).toBe(0);
  });
});
