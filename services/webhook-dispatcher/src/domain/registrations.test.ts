import type { Scope } from '@seller-api/service-kit';
import { assertTarget, withDeadline } from './registrations';

const scope = { sellerId: 's', environment: 'live', userId: 'u' } as unknown as Scope;

describe("a registration's DNS check", () => {
  it('accepts a host whose resolver does not answer in time; deliveries check it again', async () => {
    const never = () => new Promise<string[]>(() => undefined);
    const started = Date.now();
    await expect(
      assertTarget('https://slow.example.com/hook', scope, {
        allowPrivate: false,
        resolve: withDeadline(never, 50),
      }),
    ).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('still refuses a host that resolves to a private address in time', async () => {
    await expect(
      assertTarget('https://inside.example.com/hook', scope, {
        allowPrivate: false,
        resolve: async () => ['10.0.0.1'],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('passes answers and failures through', async () => {
    await expect(withDeadline(async () => ['93.184.216.34'], 1_000)('a')).resolves.toEqual(['93.184.216.34']);
    await expect(withDeadline(async () => Promise.reject(new Error('x')), 1_000)('a')).rejects.toThrow('x');
  });
});
