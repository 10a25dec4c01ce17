/**
 * The destination a delivery's URL counts against (docs/webhooks.md, "Concurrency per host"): its
 * scheme, host and port, lower-cased, without the host's trailing root dot, the port always written
 * (443 or 80 when the URL leaves it out). Every path, query and user part of one host is one
 * destination: 50 variants of a URL share one host's budget instead of multiplying it. The URL
 * parser also writes an IPv4 address in its one dotted form (`0x7f.1`, `2130706433`: `127.0.0.1`),
 * and a host name in punycode.
 *
 * The claim's SQL groups candidates with webhooks.destination_of (db/migrations.ts), which gives the
 * same key for URLs written plainly; where it does not (an IPv4 address spelled otherwise, a
 * non-ASCII host), the slots, keyed by this, still hold the host to its budget, and what a claim took
 * beyond it is handed back.
 */
export function destinationOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  return `${parsed.protocol}//${parsed.hostname.replace(/\.$/, '')}:${port}`;
}
