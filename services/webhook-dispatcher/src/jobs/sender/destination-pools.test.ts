import { DestinationPools } from './destination-pools';

const options = { connections: 2, connectTimeoutMs: 1000, allowPrivateTargets: true };

test('one pool per destination URL and environment', async () => {
  const pools = new DestinationPools(options);
  const a = pools.for('test', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1');
  expect(pools.for('test', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1')).toBe(a);
  // Another URL on the same origin, or the same URL in the other environment: a pool of its own.
  expect(pools.for('test', 'http://127.0.0.1:1/b', 'http://127.0.0.1:1')).not.toBe(a);
  expect(pools.for('live', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1')).not.toBe(a);
  await pools.close();
  expect(a.closed).toBe(true);
});

test('past its limit it closes the least recently used pool', async () => {
  const pools = new DestinationPools({ ...options, maxPools: 2 });
  const a = pools.for('test', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1');
  const b = pools.for('test', 'http://127.0.0.1:1/b', 'http://127.0.0.1:1');
  // a used again: b is now the least recently used.
  expect(pools.for('test', 'http://127.0.0.1:1/a', 'http://127.0.0.1:1')).toBe(a);
  const c = pools.for('test', 'http://127.0.0.1:1/c', 'http://127.0.0.1:1');
  expect([a.closed, b.closed, c.closed]).toEqual([false, true, false]);
  // b again: a pool anew, in place of a (used before c).
  expect(pools.for('test', 'http://127.0.0.1:1/b', 'http://127.0.0.1:1')).not.toBe(b);
  expect([a.closed, c.closed]).toEqual([true, false]);
  await pools.close();
  expect(c.closed).toBe(true);
});

test('the least recently used pools go whatever their environment, an eighth of the limit at once', async () => {
  const pools = new DestinationPools({ ...options, maxPools: 16 });
  const origin = 'http://127.0.0.1:1';
  const live = pools.for('live', `${origin}/old`, origin);
  const testPools = Array.from({ length: 15 }, (_, i) => pools.for('test', `${origin}/${i}`, origin));
  // The first two test pools used again: the live one and test 2 are now the least recently used.
  pools.for('test', `${origin}/0`, origin);
  pools.for('test', `${origin}/1`, origin);
  pools.for('test', `${origin}/new`, origin);
  expect(live.closed).toBe(true);
  expect(testPools.map((p) => p.closed)).toEqual(testPools.map((_, i) => i === 2));
  // Two places were made: the next new pool closes nothing.
  pools.for('test', `${origin}/newer`, origin);
  expect(testPools.filter((p) => p.closed)).toHaveLength(1);
  await pools.close();
});
