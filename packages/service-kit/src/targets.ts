/**
 * SSRF guard for webhook and postback targets (docs/webhooks.md, "Target rules").
 *
 * - `classifyAddress` names the forbidden range an IP address falls in (Node's `net.BlockList`).
 * - `checkTarget` applies the registration rules to a URL: scheme, literal address, resolved addresses.
 * - `guardedLookup` is a `net.LookupFunction` for undici's `connect: { lookup }`: the address it checks is the
 *   address the socket connects to, so a DNS answer that changes between check and connect (rebinding)
 *   cannot slip through.
 *
 * Node's `net.connect` does not call `lookup` when the host is already an IP literal, so every delivery must
 * also check a literal host before connecting (`literalTargetRefusal`, the rule `checkTarget` applies to
 * literals); `guardedLookup` covers host names.
 *
 * What a caller answers a seller says only that the target is not allowed (`TARGET_NOT_ALLOWED`): the
 * address a host resolves to and the range it falls in would map the private network for whoever
 * registers a URL. The detail is for logs (`detail`), never for an answer or a stored attempt.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, SocketAddress, isIP, type LookupFunction } from 'node:net';
import { MESSAGES, message } from '@seller-api/contracts';

export type ForbiddenRange =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'metadata'
  | 'multicast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved';

/**
 * The ranges `WEBHOOK_ALLOW_PRIVATE_TARGETS` opens to `test` webhooks: where a receiver on a developer's
 * machine or network listens. Every other range stays refused whatever the setting: nothing legitimate
 * listens on a documentation, benchmarking, CGNAT or reserved address, and metadata is the prize of SSRF.
 */
export const PRIVATE_TARGET_RANGES: ReadonlySet<ForbiddenRange> = new Set(['loopback', 'private']);

/** Resolves a host name to its IP addresses (IPv4 and IPv6). Rejects with an error `code` such as ENOTFOUND. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const defaultResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
};

export interface TargetPolicy {
  environment: 'test' | 'live';
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: lets `test` webhooks reach loopback and private addresses. */
  allowPrivate: boolean;
  /**
   * The system runs locally (NODE_ENV=development, `npm start`): `test` webhooks may reach loopback, the
   * developer's own machine (docs/webhooks.md, "Local receivers"). `localTargets` gives it.
   */
  allowLoopback?: boolean;
  /** DNS resolution; `defaultResolver` unless injected (tests). */
  resolve?: Resolver;
}

/** The whole public reason for refusing a forbidden address, whatever the address or how it was found. */
export const TARGET_NOT_ALLOWED = 'Not an allowed target';

/**
 * What `test` webhooks may reach besides public addresses (docs/webhooks.md, "Target rules"):
 * WEBHOOK_ALLOW_LOOPBACK_TARGETS opens loopback (`npm start` sets it, so a receiver on the developer's
 * machine works), WEBHOOK_ALLOW_PRIVATE_TARGETS loopback and private ranges. Both are explicit, never
 * derived from NODE_ENV: a deployment that forgets NODE_ENV must not open its own loopback to any test
 * key. Production opens nothing (its configuration refuses either set to true).
 */
export function localTargets(config: {
  NODE_ENV: 'development' | 'test' | 'production';
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: boolean;
}): Pick<TargetPolicy, 'allowPrivate' | 'allowLoopback'> {
  if (config.NODE_ENV === 'production') return { allowPrivate: false, allowLoopback: false };
  return {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK_TARGETS,
  };
}

/**
 * The 400 message for a forbidden address: the rule that refused it and, for `test`, how to receive
 * webhooks on one's own machine. It depends on the environment and the policy only, never on the
 * address, its range or what a name resolved to (the same sentence for any forbidden target).
 */
export function targetRefusalMessage(
  policy: Pick<TargetPolicy, 'environment' | 'allowPrivate' | 'allowLoopback'>,
): string {
  if (policy.environment === 'live') return MESSAGES.targetLive;
  if (policy.allowPrivate || policy.allowLoopback) {
    const opened = policy.allowPrivate
      ? 'loopback and private addresses'
      : 'this machine (127.0.0.1, localhost, [::1])';
    return message('targetTestOpened', { opened });
  }
  return MESSAGES.targetDeployed;
}

/**
 * `reason`: for the seller (a 400 message). `detail`, for a forbidden address only: the host, the
 * address and its range, for operators' logs.
 */
export type CheckTargetResult =
  { ok: true; unresolved?: boolean } | { ok: false; reason: string; detail?: string };

/** `code` of the error `guardedLookup` calls back for a forbidden address. */
export const FORBIDDEN_TARGET_CODE = 'EFORBIDDENTARGET';

export class ForbiddenTargetError extends Error {
  override readonly name = 'ForbiddenTargetError';
  readonly code = FORBIDDEN_TARGET_CODE;

  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly range: ForbiddenRange,
  ) {
    // The message is what a delivery attempt records (the seller reads it): no address, no DNS answer.
    super(TARGET_NOT_ALLOWED);
  }

  /** For operators' logs: the host, what it resolved to and the range it falls in. */
  get detail(): string {
    return this.hostname === this.address
      ? `${this.hostname} is ${describeRange(this.range)}`
      : `${this.hostname} resolves to ${describeRange(this.range)} (${this.address})`;
  }
}

// ---------------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------------

const RANGE_DESCRIPTIONS: Record<ForbiddenRange, string> = {
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  cgnat: 'a carrier-grade NAT (CGNAT) address',
  metadata: 'a cloud metadata address',
  multicast: 'a multicast address',
  documentation: 'a documentation address',
  benchmarking: 'a benchmarking address',
  reserved: 'a reserved address',
};

/** "a private address", "a loopback address", ... for messages. */
export function describeRange(range: ForbiddenRange): string {
  return RANGE_DESCRIPTIONS[range];
}

/**
 * The forbidden ranges, in `net.BlockList`s, one per range, in the order they are asked: specific names
 * (metadata) before the ranges that contain them (link-local, private), unspecified and loopback before
 * `::/96`, documentation and benchmarking before `2001::/23`. A BlockList matches an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`) against its
 * IPv4 subnets; an IPv4 address embedded in a NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`) address it does
 * not see, so each IPv4 subnet is also listed at its place in those two prefixes.
 */
const FORBIDDEN: Array<[ForbiddenRange, string[]]> = [
  [
    'metadata',
    [
      '169.254.169.254/32', // AWS, GCP, Azure, OpenStack, ...
      '169.254.170.2/32', // AWS ECS task metadata
      '100.100.100.200/32', // Alibaba Cloud
      '168.63.129.16/32', // Azure WireServer (a public address reachable only in Azure)
      'fd00:ec2::254/128', // AWS over IPv6
    ],
  ],
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  [
    'private',
    [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      'fc00::/7', // unique local
      'fec0::/10', // deprecated site-local
    ],
  ],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['cgnat', ['100.64.0.0/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'documentation',
    [
      '192.0.2.0/24', // TEST-NET-1 (RFC 5737)
      '198.51.100.0/24', // TEST-NET-2
      '203.0.113.0/24', // TEST-NET-3
      '2001:db8::/32', // RFC 3849
      '3fff::/20', // RFC 9637
    ],
  ],
  [
    'benchmarking',
    [
      '198.18.0.0/15', // RFC 2544
      '2001:2::/48', // RFC 5180
    ],
  ],
  [
    'reserved',
    [
      '240.0.0.0/4', // reserved for future use (RFC 1112), with the broadcast address 255.255.255.255
      '192.0.0.0/24', // IETF protocol assignments (RFC 6890)
      '192.88.99.0/24', // deprecated 6to4 relay anycast (RFC 7526)
      '::/96', // deprecated IPv4-compatible addresses
      '::ffff:0:0:0/96', // IPv4-translated addresses (RFC 6052's SIIT form)
      '64:ff9b:1::/48', // NAT64 local-use prefix (RFC 8215): the IPv4 it reaches sits where the operator says
      '100::/64', // discard-only (RFC 6666)
      '2001::/23', // IETF protocol assignments: Teredo, ORCHID, ... (RFC 2928)
      '5f00::/16', // SRv6 SIDs (RFC 9602)
    ],
  ],
];

/** `a.b.c.d` as the two hexadecimal groups of an IPv6 address that embeds it. */
function ipv4Groups(ip: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = ip.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function blockList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = '', bits] = cidr.split('/');
    const prefix = Number(bits);
    if (isIP(network) === 6) {
      list.addSubnet(network, prefix, 'ipv6');
      continue;
    }
    list.addSubnet(network, prefix, 'ipv4');
    list.addSubnet(`64:ff9b::${ipv4Groups(network)}`, 96 + prefix, 'ipv6');
    list.addSubnet(`2002:${ipv4Groups(network)}::`, 16 + prefix, 'ipv6');
  }
  return list;
}

const FORBIDDEN_LISTS = FORBIDDEN.map(([range, cidrs]) => ({ range, list: blockList(cidrs) }));

/**
 * The forbidden range `ip` falls in, or null for a public address. IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`, `::ffff:a00:1`) are classified as their IPv4 address, and so are the IPv4 addresses
 * embedded in NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses. Throws a TypeError for anything that
 * is not an IP address (never "public" by mistake).
 */
export function classifyAddress(ip: string): ForbiddenRange | null {
  const address = ip.trim().replace(/^\[(.*)\]$/, '$1');
  const unzoned = address.replace(/%.*$/, '');
  const version = isIP(unzoned);
  if (version === 0) throw new TypeError(`Not an IP address: ${JSON.stringify(ip)}`);
  // Parsed once for all the lists: a string is parsed again by every check.
  const parsed = new SocketAddress({ address: unzoned, family: version === 4 ? 'ipv4' : 'ipv6' });
  return FORBIDDEN_LISTS.find(({ list }) => list.check(parsed))?.range ?? null;
}

// ---------------------------------------------------------------------------------------------------
// Policy
// ---------------------------------------------------------------------------------------------------

/** Resolver failures that mean "does not resolve (yet)": accepted at registration, checked at delivery. */
const UNRESOLVED_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error as { code: unknown };
  return typeof code === 'string' ? code : undefined;
}

/** Lowercase, without IPv6 brackets or a trailing root dot. */
function normaliseHost(hostname: string): string {
  return hostname
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Whether an address of `range` (null: public) may be targeted under `policy`. Live webhooks never reach a
 * forbidden range; test webhooks reach loopback and private addresses (PRIVATE_TARGET_RANGES) when the
 * operator allows private targets, and no other forbidden range ever.
 */
export function targetAllowed(
  range: ForbiddenRange | null,
  policy: Pick<TargetPolicy, 'environment' | 'allowPrivate' | 'allowLoopback'>,
): boolean {
  if (range === null) return true;
  if (policy.environment !== 'test') return false;
  if (range === 'loopback' && policy.allowLoopback) return true;
  return policy.allowPrivate && PRIVATE_TARGET_RANGES.has(range);
}

function permitted(range: ForbiddenRange, policy: TargetPolicy): boolean {
  return targetAllowed(range, policy);
}

function refusal(
  range: ForbiddenRange,
  host: string,
  address: string,
  policy: TargetPolicy,
): { ok: false; reason: string; detail: string } {
  const detail =
    host === address
      ? `${host} is ${describeRange(range)}`
      : `${host} resolves to ${describeRange(range)} (${address})`;
  return { ok: false, reason: targetRefusalMessage(policy), detail };
}

/**
 * `TARGET_NOT_ALLOWED` when a URL's host is a literal IP address (brackets and all, as `URL.hostname`
 * gives it) that may not be connected to; null when it is allowed or is not a literal (a host name is
 * checked where it resolves: `checkTarget`, `guardedLookup`).
 */
export function literalTargetRefusal(
  hostname: string,
  policy: Pick<TargetPolicy, 'environment' | 'allowPrivate' | 'allowLoopback'>,
): string | null {
  const host = normaliseHost(hostname);
  if (isIP(host) === 0) return null;
  const range = classifyAddress(host);
  return range !== null && !targetAllowed(range, policy) ? TARGET_NOT_ALLOWED : null;
}

/**
 * Applies the target rules (docs/webhooks.md) to a webhook or postback URL: `live` needs `https:`, `test`
 * allows `http:` too; a literal address, `localhost` (and `*.localhost`) or a host name resolving to any
 * forbidden address is refused unless `environment` is `test` and `allowPrivate` (or, for loopback,
 * `allowLoopback`) is set. A host name that does not resolve is accepted with `unresolved: true` (every
 * delivery checks again). `reason` is a sentence for a 400 message (`targetRefusalMessage` for any
 * forbidden address); `detail` says which, for a log.
 * Other resolver failures (a broken resolver, say) are thrown.
 */
export async function checkTarget(url: string, options: TargetPolicy): Promise<CheckTargetResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: MESSAGES.httpUrl };
  }
  if (options.environment === 'live' && parsed.protocol !== 'https:') {
    return { ok: false, reason: MESSAGES.liveHttps };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { ok: false, reason: MESSAGES.httpUrl };
  }

  const host = normaliseHost(parsed.hostname);
  if (host === '') return { ok: false, reason: MESSAGES.httpUrl };

  if (isIP(host) !== 0) {
    const range = classifyAddress(host);
    return range !== null && !permitted(range, options) ? refusal(range, host, host, options) : { ok: true };
  }

  if (isLocalhostName(host)) {
    if (permitted('loopback', options)) return { ok: true };
    return refusal('loopback', host, host, options);
  }

  let addresses: string[];
  try {
    addresses = await (options.resolve ?? defaultResolver)(host);
  } catch (error) {
    const code = errorCode(error);
    if (code !== undefined && UNRESOLVED_CODES.has(code)) return { ok: true, unresolved: true };
    throw error;
  }
  if (addresses.length === 0) return { ok: true, unresolved: true };

  for (const address of addresses) {
    const range = classifyAddress(address);
    if (range !== null && !permitted(range, options)) return refusal(range, host, address, options);
  }
  return { ok: true };
}

function requestedFamily(options: LookupOptions): 4 | 6 | 0 {
  const family: unknown = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/**
 * A `net.LookupFunction` for undici (`new Agent({ connect: { lookup: guardedLookup(policy) } })`): resolves
 * `hostname`, calls back a `ForbiddenTargetError` (`code` EFORBIDDENTARGET) when any answer is forbidden
 * under `policy`, and otherwise the allowed addresses: every one when `options.all` is set, else the first.
 * Resolver errors (ENOTFOUND, ...) are called back unchanged.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  const resolve = policy.resolve ?? defaultResolver;

  async function allowedAddresses(hostname: string, family: 4 | 6 | 0): Promise<LookupAddress[]> {
    const host = normaliseHost(hostname);
    if (isLocalhostName(host) && !permitted('loopback', policy)) {
      throw new ForbiddenTargetError(host, host, 'loopback');
    }
    const resolved = isIP(host) !== 0 ? [host] : await resolve(host);
    for (const address of resolved) {
      const range = classifyAddress(address);
      if (range !== null && !permitted(range, policy)) throw new ForbiddenTargetError(host, address, range);
    }
    const answers = resolved
      .map((address) => ({ address, family: isIP(address) }))
      .filter((answer) => family === 0 || answer.family === family);
    if (answers.length === 0) {
      const error: NodeJS.ErrnoException = new Error(
        `No ${family === 0 ? '' : `IPv${family} `}address for ${host}`,
      );
      error.code = 'ENOTFOUND';
      throw error;
    }
    return answers;
  }

  return (hostname, options, callback) => {
    allowedAddresses(hostname, requestedFamily(options ?? {})).then(
      (answers) => {
        const first = answers[0] as LookupAddress;
        if (options?.all) callback(null, answers);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => {
        const failure: NodeJS.ErrnoException =
          error instanceof Error ? error : new Error(`DNS lookup of ${hostname} failed: ${String(error)}`);
        callback(failure, options?.all ? [] : '');
      },
    );
  };
}
