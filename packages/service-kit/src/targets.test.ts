import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import {
  FORBIDDEN_TARGET_CODE,
  ForbiddenTargetError,
  TARGET_NOT_ALLOWED,
  checkTarget,
  classifyAddress,
  describeRange,
  guardedLookup,
  literalTargetRefusal,
  localTargets,
  targetRefusalMessage,
  targetAllowed,
  type ForbiddenRange,
  type Resolver,
  type TargetPolicy,
} from './targets';

describe('classifyAddress', () => {
  const cases: Array<[string, ForbiddenRange | null]> = [
    // unspecified
    ['0.0.0.0', 'unspecified'],
    ['0.255.255.255', 'unspecified'],
    ['::', 'unspecified'],
    // loopback
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    // private
    ['10.0.0.0', 'private'],
    ['10.255.255.255', 'private'],
    ['172.15.255.255', null],
    ['172.16.0.0', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', null],
    ['192.168.0.1', 'private'],
    ['192.167.255.255', null],
    ['192.169.0.0', null],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fbff:ffff::1', null],
    // link-local
    ['169.254.0.1', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['169.253.255.255', null],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    // CGNAT
    ['100.63.255.255', null],
    ['100.64.0.0', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.128.0.0', null],
    // metadata, named although inside link-local
    ['169.254.169.254', 'metadata'],
    ['169.254.169.253', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::253', 'private'],
    // multicast
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['223.255.255.255', null],
    ['ff02::1', 'multicast'],
    // reserved
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.1.0', null],
    ['240.0.0.0', 'reserved'],
    ['239.255.255.255', 'multicast'],
    ['192.0.0.255', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.88.98.255', null],
    ['192.88.100.0', null],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['2001:1ff:ffff::1', 'reserved'],
    ['2001:200::1', null],
    ['5f00::1', 'reserved'],
    ['::ffff:0:a00:1', 'reserved'], // IPv4-translated
    // NAT64 local-use (RFC 8215): refused whole, wherever its IPv4 sits
    ['64:ff9b:1::', 'reserved'],
    ['64:ff9b:1::808:808', 'reserved'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'reserved'],
    ['64:ff9b:1:a00:1::', 'reserved'],
    ['64:ff9b:2::', null],
    ['64:ff9b:0:1::', null],
    // benchmarking
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.17.255.255', null],
    ['198.20.0.0', null],
    ['2001:2::1', 'benchmarking'],
    ['2001:2:1::', 'reserved'],
    // documentation
    ['192.0.2.1', 'documentation'],
    ['192.0.1.255', null],
    ['192.0.3.0', null],
    ['198.51.100.7', 'documentation'],
    ['198.51.99.255', null],
    ['198.51.101.0', null],
    ['203.0.113.200', 'documentation'],
    ['203.0.112.255', null],
    ['203.0.114.0', null],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['3fff:fff::1', 'documentation'],
    ['3fff:1000::1', null],
    ['::ffff:192.0.2.1', 'documentation'],
    ['64:ff9b::c000:201', 'documentation'],
    // public
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['93.184.216.34', null],
    ['11.0.0.1', null],
    ['126.255.255.255', null],
    ['128.0.0.1', null],
    ['2606:4700:4700::1111', null],
    ['2001:4860:4860::8888', null],
    // IPv4-mapped IPv6, dotted and hex forms
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::FFFF:A00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['0:0:0:0:0:ffff:192.168.1.1', 'private'],
    ['::ffff:8.8.8.8', null],
    ['::ffff:808:808', null],
    ['::ffff:100.64.0.1', 'cgnat'],
    // IPv4 embedded in NAT64 and 6to4
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::808:808', null],
    ['2002:a00:1::', 'private'],
    ['2002:808:808::1', null],
    ['64:ff9b::198.18.0.1', 'benchmarking'],
    ['2002:c633:6401::', 'documentation'],
  ];

  it.each(cases)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });

  it('accepts bracketed IPv6 literals as written in URLs', () => {
    expect(classifyAddress('[::1]')).toBe('loopback');
  });

  it('throws for something that is not an IP address rather than calling it public', () => {
    expect(() => classifyAddress('example.com')).toThrow(TypeError);
    expect(() => classifyAddress('')).toThrow(TypeError);
    expect(() => classifyAddress('10.0.0.256')).toThrow(TypeError);
  });

  it('describes every range for messages', () => {
    expect(describeRange('private')).toBe('a private address');
    expect(describeRange('cgnat')).toMatch(/CGNAT/);
  });
});

function resolverFrom(table: Record<string, string[] | string>): Resolver & jest.Mock {
  return jest.fn(async (hostname: string) => {
    const answer = table[hostname];
    if (answer === undefined || typeof answer === 'string') {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ${answer ?? 'ENOTFOUND'} ${hostname}`);
      error.code = answer ?? 'ENOTFOUND';
      throw error;
    }
    return answer;
  }) as Resolver & jest.Mock;
}

const resolve = resolverFrom({
  'api.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['127.0.0.1'],
  'private.example.com': ['10.0.0.5'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
  'metadata.example.com': ['169.254.169.254'],
  'docs.example.com': ['192.0.2.10'],
  'mapped.example.com': ['::ffff:a00:5'],
  'later.example.com': 'EAI_AGAIN',
  'nodata.example.com': 'ENODATA',
  'broken.example.com': 'ECONNREFUSED',
  'empty.example.com': [],
});

// The 400 message for a forbidden target: the rule, never the address (targetRefusalMessage).
const REFUSED = expect.stringMatching(/^Not an allowed target: /);
const live: TargetPolicy = { environment: 'live', allowPrivate: false, resolve };
const liveAllowing: TargetPolicy = { environment: 'live', allowPrivate: true, resolve };
const test: TargetPolicy = { environment: 'test', allowPrivate: false, resolve };
const testAllowing: TargetPolicy = { environment: 'test', allowPrivate: true, resolve };

describe('checkTarget', () => {
  beforeEach(() => resolve.mockClear());

  it('accepts a public https host', async () => {
    await expect(checkTarget('https://api.example.com/hooks?token=abc', live)).resolves.toEqual({ ok: true });
    expect(resolve).toHaveBeenCalledWith('api.example.com');
  });

  it('accepts a public literal address without asking DNS', async () => {
    await expect(checkTarget('https://93.184.216.34/hooks', live)).resolves.toEqual({ ok: true });
    await expect(checkTarget('https://[2606:4700:4700::1111]:8443/x', live)).resolves.toEqual({ ok: true });
    expect(resolve).not.toHaveBeenCalled();
  });

  it('refuses http for live and accepts it for test', async () => {
    const refused = await checkTarget('http://api.example.com/hooks', live);
    expect(refused).toEqual({ ok: false, reason: expect.stringMatching(/https/) });
    await expect(checkTarget('http://api.example.com/hooks', test)).resolves.toEqual({ ok: true });
  });

  it('refuses other schemes and non-URLs', async () => {
    for (const url of ['ftp://api.example.com/', 'file:///etc/passwd', 'not a url', '/relative/path']) {
      await expect(checkTarget(url, test)).resolves.toMatchObject({ ok: false });
    }
  });

  it('refuses a host resolving to loopback', async () => {
    await expect(checkTarget('https://internal.example.com/', live)).resolves.toEqual({
      ok: false,
      reason: REFUSED,
      detail: 'internal.example.com resolves to a loopback address (127.0.0.1)',
    });
  });

  it('says only that the target is not allowed; the address and range are in the detail for logs', async () => {
    const refused = await checkTarget('https://private.example.com/', live);
    expect(refused).toEqual({
      ok: false,
      reason: REFUSED,
      detail: 'private.example.com resolves to a private address (10.0.0.5)',
    });
    expect(refused.ok ? '' : refused.reason).not.toMatch(/10\.0\.0\.5|private|resolve/i);
  });

  it('refuses a host whose answers mix public and private addresses', async () => {
    await expect(checkTarget('https://mixed.example.com/', live)).resolves.toEqual({
      ok: false,
      reason: REFUSED,
      detail: expect.stringContaining('(10.0.0.5)'),
    });
  });

  it('refuses a host resolving to an IPv4-mapped private address', async () => {
    await expect(checkTarget('https://mapped.example.com/', live)).resolves.toMatchObject({ ok: false });
  });

  it('refuses literal forbidden addresses, including bracketed IPv6 and odd IPv4 spellings', async () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://10.1.2.3:8443/x',
      'https://[::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fe80::1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://2130706433/', // 127.0.0.1 as a number, normalised by the URL parser
      'https://0x7f.1/',
    ]) {
      const result = await checkTarget(url, live);
      expect({ url, ok: result.ok }).toEqual({ url, ok: false });
    }
    expect(resolve).not.toHaveBeenCalled();
  });

  it('accepts an unresolvable host as unresolved', async () => {
    await expect(checkTarget('https://nowhere.example.com/', live)).resolves.toEqual({
      ok: true,
      unresolved: true,
    });
    await expect(checkTarget('https://later.example.com/', live)).resolves.toEqual({
      ok: true,
      unresolved: true,
    });
    await expect(checkTarget('https://nodata.example.com/', live)).resolves.toEqual({
      ok: true,
      unresolved: true,
    });
    await expect(checkTarget('https://empty.example.com/', live)).resolves.toEqual({
      ok: true,
      unresolved: true,
    });
  });

  it('passes other resolver failures on', async () => {
    await expect(checkTarget('https://broken.example.com/', live)).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('treats localhost and *.localhost as loopback without asking DNS', async () => {
    for (const url of [
      'http://localhost:3000/hooks',
      'https://localhost/',
      'https://LOCALHOST./',
      'https://app.localhost/',
    ]) {
      await expect(checkTarget(url, live)).resolves.toMatchObject({ ok: false });
      await expect(checkTarget(url, test)).resolves.toEqual({
        ok: false,
        reason: REFUSED,
        detail: expect.stringMatching(/localhost is a loopback address/),
      });
    }
    expect(resolve).not.toHaveBeenCalled();
  });

  it('refuses http://localhost:3000 for live', async () => {
    await expect(checkTarget('http://localhost:3000', live)).resolves.toMatchObject({ ok: false });
    await expect(checkTarget('https://localhost:3000', liveAllowing)).resolves.toMatchObject({ ok: false });
  });

  it('lets test webhooks reach private targets when the operator allows it', async () => {
    for (const url of [
      'http://127.0.0.1:3000/hooks',
      'http://localhost:3000/hooks',
      'http://[::1]:3000/',
      'http://internal.example.com/',
      'http://private.example.com/',
      'http://mixed.example.com/',
      'http://192.168.1.10/',
    ]) {
      await expect(checkTarget(url, testAllowing)).resolves.toEqual({ ok: true });
    }
  });

  it('always refuses private targets for live, even with allowPrivate', async () => {
    await expect(checkTarget('https://127.0.0.1/', liveAllowing)).resolves.toMatchObject({ ok: false });
    await expect(checkTarget('https://internal.example.com/', liveAllowing)).resolves.toMatchObject({
      ok: false,
    });
    await expect(checkTarget('https://10.0.0.5/', liveAllowing)).resolves.toMatchObject({ ok: false });
  });

  it('refuses test private targets when the operator does not allow them', async () => {
    await expect(checkTarget('http://127.0.0.1:3000/', test)).resolves.toMatchObject({ ok: false });
    await expect(checkTarget('http://private.example.com/', test)).resolves.toMatchObject({ ok: false });
  });

  it('refuses documentation, benchmarking, CGNAT, link-local and reserved targets even where private ones are allowed', async () => {
    for (const url of [
      'http://192.0.2.1/',
      'http://198.51.100.1/',
      'http://203.0.113.1/',
      'http://[2001:db8::1]/',
      'http://198.18.0.1/',
      'http://240.0.0.1/',
      'http://100.64.0.1/',
      'http://169.254.10.10/',
      'http://0.0.0.0/',
      'http://[64:ff9b:1::a00:1]/',
      'http://[64:ff9b::192.0.2.1]/',
      'http://224.0.0.1/',
    ]) {
      const result = await checkTarget(url, testAllowing);
      expect({ url, result }).toEqual({
        url,
        result: { ok: false, reason: REFUSED, detail: expect.any(String) },
      });
    }
  });

  it('refuses the NAT64 local-use prefix for live as it does the well-known one', async () => {
    await expect(checkTarget('https://[64:ff9b:1::808:808]/', live)).resolves.toMatchObject({ ok: false });
    await expect(checkTarget('https://[64:ff9b::a00:1]/', live)).resolves.toMatchObject({ ok: false });
    await expect(checkTarget('https://[64:ff9b::808:808]/', live)).resolves.toEqual({ ok: true });
  });

  it('refuses cloud metadata even where private targets are allowed', async () => {
    await expect(checkTarget('http://169.254.169.254/', testAllowing)).resolves.toEqual({
      ok: false,
      reason: REFUSED,
      detail: '169.254.169.254 is a cloud metadata address',
    });
    await expect(checkTarget('http://metadata.example.com/', testAllowing)).resolves.toMatchObject({
      ok: false,
    });
  });
});

describe('targetAllowed', () => {
  it('allows public addresses everywhere and forbidden ones only for test with allowPrivate', () => {
    expect(targetAllowed(null, { environment: 'live', allowPrivate: false })).toBe(true);
    expect(targetAllowed('loopback', { environment: 'live', allowPrivate: true })).toBe(false);
    expect(targetAllowed('loopback', { environment: 'test', allowPrivate: false })).toBe(false);
    expect(targetAllowed('loopback', { environment: 'test', allowPrivate: true })).toBe(true);
    expect(targetAllowed('private', { environment: 'test', allowPrivate: true })).toBe(true);
    expect(targetAllowed('metadata', { environment: 'test', allowPrivate: true })).toBe(false);
  });

  it('opens only loopback and private to allowPrivate: every other range stays refused', () => {
    const ranges: ForbiddenRange[] = [
      'unspecified',
      'loopback',
      'private',
      'link-local',
      'cgnat',
      'metadata',
      'multicast',
      'documentation',
      'benchmarking',
      'reserved',
    ];
    const opened = ranges.filter((range) =>
      targetAllowed(range, { environment: 'test', allowPrivate: true }),
    );
    expect(opened).toEqual(['loopback', 'private']);
  });
});

describe('local targets', () => {
  const local = { environment: 'test', allowPrivate: false, allowLoopback: true, resolve } as const;

  it('opens loopback alone to test webhooks of a locally run system', async () => {
    for (const url of ['http://127.0.0.1:4242/', 'http://localhost:3000/hooks', 'http://[::1]:8000/']) {
      await expect(checkTarget(url, local)).resolves.toEqual({ ok: true });
    }
    for (const url of ['http://10.0.0.5/', 'http://169.254.169.254/', 'https://private.example.com/']) {
      await expect(checkTarget(url, local)).resolves.toMatchObject({ ok: false, reason: REFUSED });
    }
    expect(targetAllowed('loopback', { environment: 'live', allowPrivate: false, allowLoopback: true })).toBe(
      false,
    );
    expect(literalTargetRefusal('127.0.0.1', { ...local, environment: 'live' })).toBe(TARGET_NOT_ALLOWED);
    expect(literalTargetRefusal('127.0.0.1', local)).toBeNull();
  });

  it('opens loopback only when asked, never from NODE_ENV alone, and nothing in production', () => {
    const off = { WEBHOOK_ALLOW_PRIVATE_TARGETS: false, WEBHOOK_ALLOW_LOOPBACK_TARGETS: false };
    // A deployment that forgot NODE_ENV runs as development: it must not open its own loopback.
    expect(localTargets({ NODE_ENV: 'development', ...off })).toEqual({
      allowPrivate: false,
      allowLoopback: false,
    });
    expect(localTargets({ NODE_ENV: 'development', ...off, WEBHOOK_ALLOW_LOOPBACK_TARGETS: true })).toEqual({
      allowPrivate: false,
      allowLoopback: true,
    });
    expect(localTargets({ NODE_ENV: 'test', ...off, WEBHOOK_ALLOW_PRIVATE_TARGETS: true })).toEqual({
      allowPrivate: true,
      allowLoopback: false,
    });
    expect(
      localTargets({
        NODE_ENV: 'production',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
        WEBHOOK_ALLOW_LOOPBACK_TARGETS: true,
      }),
    ).toEqual({ allowPrivate: false, allowLoopback: false });
  });

  it('names the rule and the local way in, never the address', async () => {
    const refused = await checkTarget('http://localhost:4242/', { ...local, allowLoopback: false });
    expect(refused).toMatchObject({ ok: false });
    const reason = refused.ok ? '' : refused.reason;
    expect(reason).toContain('npm run cli -- webhooks listen');
    expect(reason).toContain('docs/webhooks.md');
    expect(reason).not.toMatch(/loopback address|127\.0\.0\.1|resolves/);
    expect(targetRefusalMessage({ environment: 'live', allowPrivate: false })).toMatch(
      /^Not an allowed target: live webhooks and postbacks must reach a public address/,
    );
  });
});

describe('literalTargetRefusal', () => {
  const live = { environment: 'live', allowPrivate: false } as const;
  it('refuses a forbidden literal address, bracketed IPv6 included, without naming it', () => {
    expect(literalTargetRefusal('10.1.2.3', live)).toBe(TARGET_NOT_ALLOWED);
    expect(literalTargetRefusal('[::1]', live)).toBe(TARGET_NOT_ALLOWED);
    expect(literalTargetRefusal('169.254.169.254', { environment: 'test', allowPrivate: true })).toBe(
      TARGET_NOT_ALLOWED,
    );
    expect(literalTargetRefusal('192.0.2.1', { environment: 'test', allowPrivate: true })).toBe(
      TARGET_NOT_ALLOWED,
    );
    expect(literalTargetRefusal('[64:ff9b:1::1]', { environment: 'test', allowPrivate: true })).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it('allows a public literal, a private one where the policy does, and leaves host names alone', () => {
    expect(literalTargetRefusal('93.184.216.34', live)).toBeNull();
    expect(literalTargetRefusal('127.0.0.1', { environment: 'test', allowPrivate: true })).toBeNull();
    expect(literalTargetRefusal('localhost', live)).toBeNull();
  });
});

type LookupResult = {
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
};

function lookupWith(lookup: LookupFunction, hostname: string, options: object = {}): Promise<LookupResult> {
  return new Promise((done) => {
    lookup(hostname, options, (error, address, family) => done({ error, address, family }));
  });
}

describe('guardedLookup', () => {
  it('calls back the first allowed address', async () => {
    const result = await lookupWith(guardedLookup(live), 'api.example.com');
    expect(result).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  it('calls back every allowed address when options.all is set', async () => {
    const result = await lookupWith(guardedLookup(live), 'api.example.com', { all: true });
    expect(result.error).toBeNull();
    expect(result.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('respects options.family', async () => {
    const result = await lookupWith(guardedLookup(live), 'api.example.com', { family: 6 });
    expect(result).toEqual({ error: null, address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
  });

  it('calls back EFORBIDDENTARGET for a forbidden address', async () => {
    const result = await lookupWith(guardedLookup(live), 'internal.example.com');
    expect(result.error).toBeInstanceOf(ForbiddenTargetError);
    expect(result.error?.code).toBe(FORBIDDEN_TARGET_CODE);
    expect(FORBIDDEN_TARGET_CODE).toBe('EFORBIDDENTARGET');
    // The message is what a delivery attempt records: nothing of the DNS answer; the detail is for logs.
    expect(result.error?.message).toBe(TARGET_NOT_ALLOWED);
    expect((result.error as ForbiddenTargetError).detail).toBe(
      'internal.example.com resolves to a loopback address (127.0.0.1)',
    );
    expect(result.error).toMatchObject({
      hostname: 'internal.example.com',
      address: '127.0.0.1',
      range: 'loopback',
    });
  });

  it('refuses when any answer is forbidden, also with options.all', async () => {
    const result = await lookupWith(guardedLookup(live), 'mixed.example.com', { all: true });
    expect(result.error?.code).toBe('EFORBIDDENTARGET');
  });

  it('refuses localhost without asking DNS', async () => {
    const lonely = resolverFrom({});
    const result = await lookupWith(guardedLookup({ ...live, resolve: lonely }), 'localhost');
    expect(result.error?.code).toBe('EFORBIDDENTARGET');
    expect(result.error?.message).toBe(TARGET_NOT_ALLOWED);
    expect((result.error as ForbiddenTargetError).detail).toBe('localhost is a loopback address');
    expect(lonely).not.toHaveBeenCalled();
  });

  it('classifies an IP literal handed to it', async () => {
    expect((await lookupWith(guardedLookup(live), '10.0.0.1')).error?.code).toBe('EFORBIDDENTARGET');
    expect(await lookupWith(guardedLookup(live), '8.8.8.8')).toEqual({
      error: null,
      address: '8.8.8.8',
      family: 4,
    });
  });

  it('allows private answers for test webhooks when the operator allows them', async () => {
    const result = await lookupWith(guardedLookup(testAllowing), 'internal.example.com');
    expect(result).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    const metadata = await lookupWith(guardedLookup(testAllowing), 'metadata.example.com');
    expect(metadata.error?.code).toBe('EFORBIDDENTARGET');
    const documentation = await lookupWith(guardedLookup(testAllowing), 'docs.example.com');
    expect(documentation.error).toMatchObject({ code: 'EFORBIDDENTARGET', range: 'documentation' });
  });

  it('calls back resolver errors unchanged', async () => {
    const result = await lookupWith(guardedLookup(live), 'nowhere.example.com');
    expect(result.error?.code).toBe('ENOTFOUND');
  });
});
