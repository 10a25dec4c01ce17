import type { Sql } from '@seller-api/service-kit';
import { KeyHolders, type KeyVersions } from './key-holders';

const ROW = {
  user_id: 'u1',
  seller_id: 's1',
  environment: 'test',
  role: 'seller',
  seller_status: 'ACTIVE',
  seller_name: 'Loja',
};

/** Statements whose key lookup answers `rows()` and counts its queries. */
function fakePool(rows: () => object[]) {
  const pool = {
    queries: 0,
    query: async () => {
      pool.queries += 1;
      return rows();
    },
  };
  return pool;
}

function fakeVersions(initial: string | null) {
  const versions = { current: initial, read: async () => versions.current };
  return versions;
}

function holders(
  pool: ReturnType<typeof fakePool>,
  versions: { read(): Promise<string | null> },
  maxAgeMs = 60_000,
) {
  return new KeyHolders(pool as unknown as Sql, versions as unknown as KeyVersions, maxAgeMs);
}

describe('KeyHolders', () => {
  it('answers a known key from memory while the key version is unchanged', async () => {
    const pool = fakePool(() => [ROW]);
    const keys = holders(pool, fakeVersions('7'));
    const first = await keys.find('h', 'test');
    const second = await keys.find('h', 'test');
    expect(first?.identity).toEqual({
      user_id: 'u1',
      seller_id: 's1',
      environment: 'test',
      role: 'seller',
      seller_name: 'Loja',
    });
    expect(second).toEqual(first);
    expect(pool.queries).toBe(1);
  });

  it('reads PostgreSQL again once the version changed, and sees the key revoked', async () => {
    let rows: object[] = [ROW];
    const pool = fakePool(() => rows);
    const versions = fakeVersions('7');
    const keys = holders(pool, versions);
    expect(await keys.find('h', 'test')).not.toBeNull();
    rows = [];
    versions.current = '8';
    expect(await keys.find('h', 'test')).toBeNull();
    expect(await keys.find('h', 'test')).toBeNull();
    expect(pool.queries).toBe(3);
  });

  it('neither uses nor fills the cache without a version (a change in progress, Redis unreachable)', async () => {
    const pool = fakePool(() => [ROW]);
    const versions = fakeVersions('7');
    const keys = holders(pool, versions);
    await keys.find('h', 'test');
    versions.current = null;
    await keys.find('h', 'test');
    await keys.find('h', 'test');
    expect(pool.queries).toBe(3);
    // Nothing read under null was kept: the version back at 7 finds no entry loaded during the change.
    versions.current = '7';
    await keys.find('h', 'test');
    expect(pool.queries).toBe(4);
  });

  it('reads PostgreSQL on every request when the cache is off, or once an entry is too old', async () => {
    const off = fakePool(() => [ROW]);
    const keysOff = holders(off, fakeVersions('1'), 0);
    await keysOff.find('h', 'test');
    await keysOff.find('h', 'test');
    expect(off.queries).toBe(2);

    const pool = fakePool(() => [ROW]);
    const keys = holders(pool, fakeVersions('1'), 1_000);
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_000_000);
    await keys.find('h', 'test');
    now.mockReturnValue(1_000_999);
    await keys.find('h', 'test');
    expect(pool.queries).toBe(1);
    now.mockReturnValue(1_001_000);
    await keys.find('h', 'test');
    expect(pool.queries).toBe(2);
    now.mockRestore();
  });

  it('caches no unknown key and refuses a key of the other environment', async () => {
    const unknown = fakePool(() => []);
    const keys = holders(unknown, fakeVersions('1'));
    expect(await keys.find('h', 'test')).toBeNull();
    expect(await keys.find('h', 'test')).toBeNull();
    expect(unknown.queries).toBe(2);

    const live = holders(
      fakePool(() => [ROW]),
      fakeVersions('1'),
    );
    expect(await live.find('h', 'live')).toBeNull();
  });
});
