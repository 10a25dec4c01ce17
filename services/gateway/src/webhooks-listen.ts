// `npm run cli -- webhooks listen`: test webhooks on the developer's machine (docs/webhooks.md, "Local
// receivers"). A receiver on 127.0.0.1, one test webhook per event registered through the public API with
// the seller's own key, each delivery verified with @seller-api/webhook-verify and printed, and the
// webhooks it registered deleted when it stops. It needs a locally run system (`npm start`), whose test
// webhooks may target loopback; live keys are refused before anything is registered.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { EVENT_NAMES, EventName, WebhookWithSecret } from '@seller-api/contracts';
import type { CliIo } from '@seller-api/service-kit';
import { WebhookVerificationError, verifyWebhook } from '@seller-api/webhook-verify';
import { environmentOfKey } from './domain/api-keys';

export interface ListenOptions {
  /** A test API key (`mk_test_...`). */
  key: string;
  /** The public API's base URL, such as `http://127.0.0.1:8080/api/v1`. */
  api: string;
  events: readonly EventName[];
  /** The receiver's port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Aborted to stop: the webhooks registered are deleted, then the receiver closes. */
  signal: AbortSignal;
}

/** Refused before anything is registered; exit code 2 (usage). */
export class ListenUsageError extends Error {}

/** The API refused a registration or could not be reached; exit code 1. */
export class ListenApiError extends Error {}

const MAX_BODY_BYTES = 1024 * 1024;
const API_TIMEOUT_MS = 10_000;

/** `--events order.paid,order.created`: every name from the catalogue, or a usage error naming the first unknown one. */
export function parseEvents(value: string | undefined): EventName[] {
  if (value === undefined || value.trim() === '') return [...EVENT_NAMES];
  const names = [
    ...new Set(
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  for (const name of names) {
    if (!EventName.safeParse(name).success)
      throw new ListenUsageError(`--events: unknown event "${name}" (docs/events.md lists them)`);
  }
  return names as EventName[];
}

/** The test-key check: a live key's webhooks never reach loopback (docs/webhooks.md, "Target rules"). */
export function assertTestKey(key: string): void {
  const environment = environmentOfKey(key);
  if (environment === null) throw new ListenUsageError('--key must be an API key (mk_test_...)');
  if (environment === 'live') {
    throw new ListenUsageError(
      'webhooks listen takes test keys only: live webhooks never reach this machine (docs/webhooks.md, "Target rules")',
    );
  }
}

interface Registered {
  id: string;
  event: EventName;
  secret: string;
}

async function api(
  options: ListenOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  let res: Response;
  try {
    res = await fetch(`${options.api.replace(/\/+$/, '')}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      // A gateway that hangs must not keep Ctrl-C from ending the listener.
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
  } catch (err) {
    throw new ListenApiError(
      `cannot reach the API at ${options.api} (${(err as Error).message}); is the system running (npm start)?`,
    );
  }
  const text = await res.text();
  let json: Record<string, unknown>;
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = {};
  }
  return { status: res.status, json };
}

/** The API's answer to a refused request, as one line: its message and, for a 400, the fields' messages. */
function refusal(status: number, json: Record<string, unknown>): string {
  const message = typeof json.message === 'string' ? json.message : `HTTP ${status}`;
  const data = json.data && typeof json.data === 'object' ? JSON.stringify(json.data) : '';
  return data ? `${message} ${data}` : message;
}

/** Reads a request's raw body (at most MAX_BODY_BYTES), as the signature was computed over it. */
function rawBody(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : null));
    req.on('error', reject);
  });
}

// What a listener writes in its webhooks' description, so that a later one can recognise them.
const LISTENER_DESCRIPTION = 'npm run cli -- webhooks listen';

/** Whether something accepts connections on 127.0.0.1:`port` (a listener still running). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * Deletes the webhooks an earlier listener registered and could not remove (killed with -9, a crash):
 * its description, a loopback URL and nothing listening on that port any more. A listener still running
 * in another terminal keeps its own. Without this, three stale runs reach the 50 webhooks of an
 * environment (docs/limits.md).
 */
async function removeStale(options: ListenOptions, io: CliIo): Promise<void> {
  let cursor: string | null = null;
  const stale: { id: string; event: string }[] = [];
  do {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const { status, json } = await api(options, 'GET', `/config/webhooks/${query}`);
    if (status !== 200) return;
    const data = (json.data ?? {}) as { results?: unknown; next_cursor?: unknown };
    const results = Array.isArray(data.results) ? (data.results as Record<string, unknown>[]) : [];
    for (const hook of results) {
      if (hook.description !== LISTENER_DESCRIPTION || typeof hook.url !== 'string') continue;
      const target = new URL(hook.url);
      if (target.hostname !== '127.0.0.1' || (await answers(Number(target.port)))) continue;
      stale.push({ id: String(hook.id), event: String(hook.event) });
    }
    cursor = typeof data.next_cursor === 'string' ? data.next_cursor : null;
  } while (cursor);
  for (const hook of stale) await api(options, 'DELETE', `/config/webhooks/${hook.id}/`);
  if (stale.length > 0) io.stderr(`Removed ${stale.length} webhook(s) an earlier listener left behind.\n`);
}

/**
 * Runs until `signal` aborts: answers 200 to each verified delivery and prints it (a line with the event,
 * its id and `verified`, then the body on one line); answers 400 to anything that fails verification and
 * says why. Registered webhooks are deleted before it returns, whatever ended it.
 */
export async function listenForWebhooks(options: ListenOptions, io: CliIo): Promise<void> {
  assertTestKey(options.key);
  const registered: Registered[] = [];
  const server = http.createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await rawBody(req).catch(() => null);
    if (req.method !== 'POST' || body === null) {
      res.writeHead(req.method === 'POST' ? 413 : 405).end();
      return;
    }
    try {
      const hook = verifyWebhook({
        secret: registered.map((r) => r.secret),
        headers: req.headers,
        rawBody: body,
      });
      // Verified over the raw bytes; shown on one line, compact, whatever spacing the body was sent with.
      io.stdout(
        `${hook.event} ${hook.eventId} verified\n${JSON.stringify(JSON.parse(body.toString('utf8')))}\n`,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    } catch (err) {
      const reason = err instanceof WebhookVerificationError ? err.message : 'not a webhook delivery';
      io.stderr(`refused a delivery that failed verification: ${reason}\n`);
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: reason }));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/`;
  const stopped = new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    else options.signal.addEventListener('abort', () => resolve(), { once: true });
  });

  try {
    await removeStale(options, io);
    for (const event of options.events) {
      if (options.signal.aborted) break;
      const { status, json } = await api(options, 'POST', '/config/webhooks/', {
        url,
        event,
        description: LISTENER_DESCRIPTION,
      });
      const created = WebhookWithSecret.safeParse((json as { data?: unknown }).data);
      if (status !== 201 || !created.success) {
        throw new ListenApiError(`could not register a webhook for ${event}: ${refusal(status, json)}`);
      }
      registered.push({ id: created.data.id, event, secret: created.data.secret });
    }
    if (!options.signal.aborted) {
      io.stderr(
        `Listening on ${url} for ${options.events.join(', ')} (test). ` +
          `Registered ${registered.length} webhook(s); Ctrl-C removes them.\n`,
      );
    }
    await stopped;
  } finally {
    let removed = 0;
    for (const hook of registered) {
      const { status } = await api(options, 'DELETE', `/config/webhooks/${hook.id}/`).catch(() => ({
        status: 0,
      }));
      if (status === 204 || status === 404) removed += 1;
      else
        io.stderr(`warning: could not delete webhook ${hook.id} (${hook.event}); delete it with the API\n`);
    }
    if (registered.length > 0) io.stderr(`Removed ${removed} webhook(s).\n`);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
