// SQLSTATEs of a database that is restarting or refusing connections: admin_shutdown, crash_shutdown,
// cannot_connect_now (starting up, shutting down), too_many_connections; and class 08, connection
// exceptions.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EAI_AGAIN',
]);
// What pg says when the connection under it died, or when its pool found none in time (a full pool
// or a connect that hangs).
const UNAVAILABLE_MESSAGES = [
  /Client has encountered a connection error/,
  /Connection terminated/,
  /Connection ended unexpectedly/,
  /timeout exceeded when trying to connect/,
];

/**
 * Whether `err` says the database (or the network to it) is away for now, rather than that the
 * request is wrong: a PostgreSQL restart, a dropped connection, an exhausted pool. The request can be
 * retried as it is (the kit answers 503 with Retry-After).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth += 1) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (UNAVAILABLE_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || NETWORK_CODES.has(code))
        return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message)))
      return true;
    const next = current as { cause?: unknown; previous?: unknown };
    current = next.cause ?? next.previous;
  }
  return false;
}
