// Sends the fuzzed requests (requests.ts) to a running system and judges every answer (verdict.ts).
import http from 'node:http';
import { requestArbitrary, requestAt, type FuzzContext, type FuzzRequest } from './requests';
import { problemsOf, type Answer } from './verdict';
import { routes as registry } from '@seller-api/contracts';

export interface FuzzOptions {
  /** The API base, e.g. `http://127.0.0.1:8080/api/v1`. */
  baseUrl: string;
  context: FuzzContext;
  seed: number;
  requests: number;
  /** Index of the first request: `--from 1234 --requests 1` replays request 1234 of a seed. */
  from?: number;
  concurrency?: number;
  /** A request without an answer after this long is a failure. */
  timeoutMs?: number;
  /** Told after each answer (progress, or a look at what a route answers). */
  onAnswer?: (
    done: number,
    request: FuzzRequest,
    answer: Answer | { problem: string } | 'unsendable',
  ) => void;
}

export interface Failure {
  index: number;
  request: FuzzRequest;
  status: number | null;
  problems: string[];
  /** The start of the answer's body. */
  excerpt: string;
}

export interface FuzzReport {
  seed: number;
  sent: number;
  /** Requests the HTTP client itself refused to send (a header value it will not encode). */
  unsendable: number;
  byStatus: Map<string, number>;
  byRoute: Map<string, Map<string, number>>;
  failures: Failure[];
}

/** Runs `requests` fuzzed requests, `concurrency` at a time; the same seed draws the same requests. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const arbitrary = requestArbitrary(options.context);
  const base = new URL(options.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency ?? 8 });
  const report: FuzzReport = {
    seed: options.seed,
    sent: 0,
    unsendable: 0,
    byStatus: new Map(),
    byRoute: new Map(),
    failures: [],
  };
  const first = options.from ?? 0;
  let next = first;
  let done = 0;
  const worker = async () => {
    while (next < first + options.requests) {
      const index = next++;
      const request = requestAt(arbitrary, options.seed, index);
      const outcome = await send(base, agent, request, options.timeoutMs ?? 15_000);
      done += 1;
      options.onAnswer?.(done, request, outcome);
      if (outcome === 'unsendable') {
        report.unsendable += 1;
        continue;
      }
      report.sent += 1;
      const status = 'problem' in outcome ? 'no answer' : String(outcome.status);
      report.byStatus.set(status, (report.byStatus.get(status) ?? 0) + 1);
      const route = report.byRoute.get(request.route) ?? new Map<string, number>();
      route.set(status, (route.get(status) ?? 0) + 1);
      report.byRoute.set(request.route, route);
      const problems =
        'problem' in outcome
          ? [outcome.problem]
          : [...problemsOf(outcome), ...strictInputProblems(request, outcome)];
      if (problems.length > 0) {
        report.failures.push({
          index,
          request,
          status: 'problem' in outcome ? null : outcome.status,
          problems,
          excerpt: 'problem' in outcome ? '' : outcome.text.slice(0, 300),
        });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  } finally {
    agent.destroy();
  }
  report.failures.sort((a, b) => a.index - b.index);
  return report;
}

/** One request on node:http, which sends paths, headers and bodies as they are (fetch would fix them). */
function send(
  base: URL,
  agent: http.Agent,
  request: FuzzRequest,
  timeoutMs: number,
): Promise<Answer | { problem: string } | 'unsendable'> {
  return new Promise((resolve) => {
    let req: http.ClientRequest;
    try {
      req = http.request({
        host: base.hostname,
        port: base.port || 80,
        method: request.method,
        path: `${base.pathname.replace(/\/$/, '')}${request.path}`,
        headers: {
          ...request.headers,
          ...(request.body !== undefined ? { 'content-length': Buffer.byteLength(request.body) } : {}),
        },
        agent,
      });
    } catch {
      // An invalid header value or path: nothing left the client.
      resolve('unsendable');
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ problem: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        resolve({ problem: `answer cut: ${err.message}` });
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      // A server may answer a body it refuses (413) and close before the client has written it all.
      resolve({ problem: `connection error: ${err.code ?? err.message}` });
    });
    if (request.body !== undefined) req.end(request.body);
    else req.end();
  });
}

/** The counts as text tables and the failures, for a terminal. */
export function formatReport(report: FuzzReport, limit = 20): string {
  const lines: string[] = [];
  const statuses = [...report.byStatus.keys()].sort();
  lines.push(
    `seed ${report.seed}: ${report.sent} requests sent, ${report.unsendable} refused by the HTTP client`,
  );
  lines.push('');
  lines.push(`by status: ${statuses.map((s) => `${s}: ${report.byStatus.get(s)}`).join(', ')}`);
  lines.push('');
  const width = Math.max(...[...report.byRoute.keys()].map((r) => r.length), 5);
  lines.push(`${'route'.padEnd(width)}  ${statuses.map((s) => s.padStart(6)).join(' ')}`);
  for (const route of [...report.byRoute.keys()].sort()) {
    const counts = report.byRoute.get(route) as Map<string, number>;
    lines.push(
      `${route.padEnd(width)}  ${statuses.map((s) => String(counts.get(s) ?? '').padStart(6)).join(' ')}`,
    );
  }
  lines.push('');
  if (report.failures.length === 0) {
    lines.push('no failures');
    return lines.join('\n');
  }
  lines.push(`${report.failures.length} failures (first ${Math.min(limit, report.failures.length)}):`);
  for (const failure of report.failures.slice(0, limit)) lines.push(describeFailure(failure, report.seed));
  return lines.join('\n');
}

export function describeFailure(failure: Failure, seed: number): string {
  const { request } = failure;
  const body =
    request.body === undefined
      ? ''
      : Buffer.isBuffer(request.body)
        ? `<${request.body.length} bytes>`
        : request.body;
  const headers = { ...request.headers };
  if (headers.authorization) headers.authorization = headers.authorization.replace(/(mk_\w+?_)\w+/, '$1…');
  return [
    `- #${failure.index} (replay: --seed ${seed} --from ${failure.index} --requests 1) ${failure.problems.join('; ')}`,
    `  ${request.method} ${request.path.slice(0, 200)} [${request.notes.join(', ')}]`,
    `  headers ${JSON.stringify(headers).slice(0, 300)}`,
    body ? `  body ${body.slice(0, 300)}${body.length > 300 ? `… (${body.length} chars)` : ''}` : '',
    `  answer ${failure.status ?? '-'} ${failure.excerpt}`,
  ]
    .filter(Boolean)
    .join('\n');
}

const KEYED_ROUTES = new Set(
  registry.filter((route) => route.auth).map((route) => `${route.method.toUpperCase()} ${route.path}`),
);

/**
 * Input a public route does not take (docs/errors.md, "Strict input") must never be accepted: an
 * unknown body field or query parameter, or a body on a GET, answered with a 2xx is a failure. Routes without
 * a key are left out: the PSP's is tolerant on purpose, and the documentation's take no input.
 */
export function strictInputProblems(request: FuzzRequest, answer: Answer): string[] {
  // Routes without a key take no integrator input: the PSP's (tolerant) and the documentation's.
  if (answer.status >= 300 || !KEYED_ROUTES.has(request.route)) return [];
  const unknown = request.notes.filter((note) => note.startsWith('extra ') || note === 'query unexpected');
  if (request.method === 'GET' && request.body !== undefined && request.body.length > 0)
    unknown.push('a body on a GET');
  return unknown.map((what) => `${answer.status} to input the route does not take (${what})`);
}
