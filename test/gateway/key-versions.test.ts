import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { KeyChangeUnavailableError, KeyVersions } from '../../services/gateway/src/db/key-holders';
import { DEFAULT_URLS } from '../support/servers';

const REDIS_URL = process.env.REDIS_URL ?? DEFAULT_URLS.REDIS_URL;
const clients: Redis[] = [];

function client(url = REDIS_URL): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  clients.push(redis);
  return redis;
}

async function connected(): Promise<Redis> {
  const redis = client();
  await redis.connect();
  return redis;
}

// quit, not disconnect, for a connected client, and nothing for an ended one: disconnect would leave
// a timer behind.
afterAll(() =>
  Promise.all(
    clients.map((c) => (c.status === 'ready' ? c.quit() : c.status === 'end' ? null : c.disconnect())),
  ),
);

describe('key versions in Redis', () => {
  it('changes the version around a change, and reads null while it runs', async () => {
    const prefix = `kv-${randomUUID()}:`;
    const versions = new KeyVersions(await connected(), prefix);
    // A second replica, on its own connection.
    const replica = new KeyVersions(await connected(), prefix);
    const before = await replica.read();
    expect(before).toBe('0');
    let during: string | null | undefined;
    const result = await versions.change(async () => {
      during = await replica.read();
      return 'applied';
    });
    expect(result).toBe('applied');
    expect(during).toBeNull();
    const after = await replica.read();
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });

  it('reads null while any of two overlapping changes still runs', async () => {
    const prefix = `kv-${randomUUID()}:`;
    const versions = new KeyVersions(await connected(), prefix);
    let releaseSecond!: () => void;
    let secondStarted!: () => void;
    const started = new Promise<void>((resolve) => (secondStarted = resolve));
    const second = versions.change(
      () =>
        new Promise<void>((resolve) => {
          releaseSecond = resolve;
          secondStarted();
        }),
    );
    await started;
    await versions.change(async () => undefined);
    expect(await versions.read()).toBeNull();
    releaseSecond();
    await second;
    expect(await versions.read()).not.toBeNull();
  });

  it('keeps the replicas off their caches when a change loses Redis before it could record its end', async () => {
    const prefix = `kv-${randomUUID()}:`;
    const revoker = await connected();
    const versions = new KeyVersions(revoker, prefix);
    const replica = new KeyVersions(await connected(), prefix);
    const before = await replica.read();
    await versions.change(async () => {
      await revoker.quit();
    });
    expect(await replica.read()).toBeNull();
    // The entry of the change expires with the window, and the version has moved on meanwhile.
    const observer = await connected();
    const ttl = await observer.pttl(`${prefix}keys:changing`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await observer.get(`${prefix}keys:version`)).not.toBe(before);
  });

  it('refuses to run a change when Redis is unreachable, and reads null there', async () => {
    const down = client('redis://127.0.0.1:1');
    const versions = new KeyVersions(down, `kv-${randomUUID()}:`);
    const apply = jest.fn(async () => 'applied');
    await expect(versions.change(apply)).rejects.toBeInstanceOf(KeyChangeUnavailableError);
    expect(apply).not.toHaveBeenCalled();
    expect(await versions.read()).toBeNull();
  });
});
