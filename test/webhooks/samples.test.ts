import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { EVENT_ID_PATTERN, eventEnvelope } from '@seller-api/contracts';
import { signatureFor, standardSignatureFor } from '@seller-api/webhook-verify';

// The receiver samples of docs/webhooks.md are files under docs/webhooks/samples/, shown verbatim in the
// page. Each runs here as integrators would run it (node, python3, go build, php -S), against deliveries
// signed with the dispatcher's own functions.

const ROOT = path.resolve(__dirname, '../..');
const SAMPLES = path.join(ROOT, 'docs/webhooks/samples');
const PAGE = path.join(ROOT, 'docs/webhooks.md');

/** A real order.paid delivery body, spliced as the dispatcher writes it. */
function envelopeBody(attempt = 1): string {
  const now = new Date().toISOString();
  const data = {
    order: {
      uuid: randomUUID(),
      status: 'PAID',
      method: 'PIX',
      gross_amount: 15000,
      shipping_amount: 1000,
      discount_amount: 0,
      fee_amount: 599,
      net_amount: 14401,
      created_at: now,
      paid_at: now,
    },
    seller: { name: 'Loja' },
    customer: { name: 'Maria', tax_id: '529.***.***-25', tax_id_type: 'CPF', email: 'mar***@example.com' },
    items: [
      {
        product_uuid: randomUUID(),
        product_name: 'Livro',
        quantity: 2,
        unit_amount: 7000,
        line_total_amount: 14000,
      },
    ],
  };
  const body =
    `{"event":"order.paid","occurred_at":"${now}","delivery_attempt":${attempt},` +
    `"data":${JSON.stringify(data)}}`;
  eventEnvelope('order.paid').parse(JSON.parse(body));
  return body;
}

const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

interface Delivery {
  eventId?: string;
  body?: string;
  secret?: string;
  timestamp?: number;
  /** Sign this body but send `body`. */
  signedBody?: string;
  contentType?: string;
  unsigned?: boolean;
  /** Sent as X-Webhook-Signature instead of the right one. */
  signature?: string;
}

interface Receiver {
  port: number;
  queueFile: string;
  secret: string;
  previousSecret: string;
  post(delivery?: Delivery): Promise<{ status: number; eventId: string; body: string }>;
  queued(): string[];
}

function headersFor(
  secret: string,
  eventId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'X-Webhook-Event': 'order.paid',
    'X-Webhook-Event-Id': eventId,
    'X-Webhook-Timestamp': String(timestamp),
    'X-Webhook-Signature': signatureFor(secret, eventId, timestamp, body),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignatureFor(secret, eventId, timestamp, body),
  };
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function start(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string | undefined>,
): Started {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

/** A port nobody listens on right now, for the sample to listen on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once the sample says it listens (PHP's built-in server says it its own way). */
async function listening(started: Started): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (/listening on port \d+|Development Server \(/.test(started.output())) return;
    if (started.child.exitCode !== null) throw new Error(`the sample exited: ${started.output()}`);
    if (Date.now() > deadline) throw new Error(`the sample did not start: ${started.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  started.child.kill();
  await started.exit;
}

interface Sample {
  name: string;
  file: string;
  /**
   * How it refuses to run without a secret: a server exits at start-up; the PHP script, which runs per
   * request, answers 500 to every request (so deliveries are retried until the secret is set).
   */
  refusal: 'exit' | 'http-500';
  /** Copies what the sample needs into `dir`; returns the command that serves it there on a port. */
  prepare(dir: string): (port: number) => { command: string; args: string[] };
}

/** The helper as its installed package gives it (CommonJS), built from the current source. */
function installHelper(dir: string): void {
  const source = readFileSync(path.join(ROOT, 'packages/webhook-verify/src/index.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const target = path.join(dir, 'node_modules/@seller-api/webhook-verify');
  mkdirSync(target, { recursive: true });
  writeFileSync(
    path.join(target, 'package.json'),
    JSON.stringify({ name: '@seller-api/webhook-verify', main: 'index.js' }),
  );
  writeFileSync(path.join(target, 'index.js'), outputText);
  symlinkSync(path.dirname(require.resolve('express/package.json')), path.join(dir, 'node_modules/express'));
}

function copySample(file: string, dir: string, name: string): void {
  writeFileSync(path.join(dir, name), readFileSync(path.join(SAMPLES, file)));
}

const SAMPLE_LIST: Sample[] = [
  {
    name: 'Node.js (Express)',
    file: 'node/express-receiver.mjs',
    refusal: 'exit',
    prepare(dir) {
      installHelper(dir);
      copySample('node/express-receiver.mjs', dir, 'receiver.mjs');
      return () => ({ command: process.execPath, args: ['receiver.mjs'] });
    },
  },
  {
    name: 'Python (standard library)',
    file: 'python/receiver.py',
    refusal: 'exit',
    prepare(dir) {
      copySample('python/receiver.py', dir, 'receiver.py');
      return () => ({ command: 'python3', args: ['-u', 'receiver.py'] });
    },
  },
  {
    name: 'Go (net/http)',
    file: 'go/main.go',
    refusal: 'exit',
    prepare(dir) {
      copySample('go/main.go', dir, 'main.go');
      const built = spawnSync('go', ['build', '-o', 'receiver', 'main.go'], { cwd: dir, encoding: 'utf8' });
      if (built.status !== 0) throw new Error(`go build failed: ${built.stderr ?? built.error?.message}`);
      return () => ({ command: path.join(dir, 'receiver'), args: [] });
    },
  },
  {
    name: 'PHP',
    file: 'php/receiver.php',
    refusal: 'http-500',
    prepare(dir) {
      copySample('php/receiver.php', dir, 'receiver.php');
      return (port) => ({ command: 'php', args: ['-S', `127.0.0.1:${port}`, 'receiver.php'] });
    },
  },
];

/** Posts a delivery, signed with `secret` unless told otherwise. */
async function post(
  port: number,
  secret: string,
  delivery: Delivery = {},
): Promise<{ status: number; eventId: string; body: string }> {
  const eventId = delivery.eventId ?? `evt_${randomUUID().replace(/-/g, '')}`;
  const body = delivery.body ?? envelopeBody();
  const timestamp = delivery.timestamp ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': delivery.contentType ?? 'application/json',
    ...(delivery.unsigned
      ? {}
      : headersFor(delivery.secret ?? secret, eventId, timestamp, delivery.signedBody ?? body)),
    ...(delivery.signature === undefined ? {} : { 'X-Webhook-Signature': delivery.signature }),
  };
  const res = await fetch(`http://127.0.0.1:${port}/webhooks/seller-api`, { method: 'POST', headers, body });
  return { status: res.status, eventId, body: await res.text() };
}

/** Event ids in a queue file, in order. */
function queuedIn(queueFile: string): string[] {
  let text: string;
  try {
    text = readFileSync(queueFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const entry = JSON.parse(line) as { eventId?: string; event_id?: string };
      return entry.eventId ?? entry.event_id ?? '';
    });
}

describe.each(SAMPLE_LIST)('the $name receiver sample', (sample) => {
  let dir: string;
  let command: (port: number) => { command: string; args: string[] };
  let server: Started | undefined;
  let receiver: Receiver;

  /** Starts the sample with this environment on a free port (PORT), and its stand-ins under `dir`. */
  async function serve(env: Record<string, string | undefined>): Promise<{ started: Started; port: number }> {
    const port = await freePort();
    const { command: file, args } = command(port);
    const started = start(file, args, dir, {
      QUEUE_FILE: path.join(dir, 'queue.jsonl'),
      HANDLED_DIR: path.join(dir, 'handled'),
      PORT: String(port),
      ...env,
    });
    return { started, port };
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'webhook-sample-'));
    command = sample.prepare(dir);
    const secret = newSecret();
    const previousSecret = newSecret();
    const queueFile = path.join(dir, 'queue.jsonl');
    const served = await serve({
      SELLER_API_WEBHOOK_SECRET: secret,
      SELLER_API_WEBHOOK_PREVIOUS_SECRET: previousSecret,
    });
    server = served.started;
    await listening(server);
    receiver = {
      port: served.port,
      queueFile,
      secret,
      previousSecret,
      post: (delivery) => post(served.port, secret, delivery),
      queued: () => queuedIn(queueFile),
    };
  });

  afterAll(async () => {
    if (server) await stop(server);
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the sample does when SELLER_API_WEBHOOK_SECRET is `value` (undefined: unset). */
  async function refusal(value: string | undefined, index: number) {
    const queueFile = path.join(dir, `never-${index}.jsonl`);
    const { started, port } = await serve({ SELLER_API_WEBHOOK_SECRET: value, QUEUE_FILE: queueFile });
    try {
      let outcome: string;
      if (sample.refusal === 'exit') {
        const code = await started.exit;
        outcome = code !== null && code !== 0 ? 'exited with an error' : `exit code ${code}`;
      } else {
        await listening(started);
        // Signed with an empty key: what an unset variable would accept if it became the key.
        const eventId = `evt_emptykey${index}`;
        const timestamp = Math.floor(Date.now() / 1000);
        const body = envelopeBody();
        const hmac = createHmac('sha256', '').update(`${eventId}.${timestamp}.${body}`).digest('hex');
        const res = await post(port, newSecret(), { eventId, timestamp, body, signature: `sha256=${hmac}` });
        outcome = `answered ${res.status}, queued ${queuedIn(queueFile).length}`;
      }
      return { value, outcome, said: started.output().includes('SELLER_API_WEBHOOK_SECRET is not set') };
    } finally {
      await stop(started);
    }
  }

  it('refuses to run when the secret is unset, empty or blank', async () => {
    const values = [undefined, '', '   '];
    const outcome = sample.refusal === 'exit' ? 'exited with an error' : 'answered 500, queued 0';
    expect(await Promise.all(values.map(refusal))).toEqual(
      values.map((value) => ({ value, outcome, said: true })),
    );
  });

  it('queues a valid delivery once and answers 204; a duplicate is answered 204 without queueing again', async () => {
    const first = await receiver.post();
    expect(first.status).toBe(204);
    expect(receiver.queued().filter((id) => id === first.eventId)).toHaveLength(1);

    // A retry: same event id, new timestamp and signature, attempt 2.
    const again = await receiver.post({ eventId: first.eventId, body: envelopeBody(2) });
    expect(again.status).toBe(204);
    expect(receiver.queued().filter((id) => id === first.eventId)).toHaveLength(1);
  });

  it('accepts the previous secret while rotating', async () => {
    const res = await receiver.post({ secret: receiver.previousSecret });
    expect(res.status).toBe(204);
    expect(receiver.queued()).toContain(res.eventId);
  });

  it.each<[string, () => Delivery]>([
    [
      'a tampered body',
      () => ({ signedBody: envelopeBody(), body: envelopeBody().replace('15000', '15001') }),
    ],
    ['a wrong secret', () => ({ secret: newSecret() })],
    ['a timestamp 10 minutes old', () => ({ timestamp: Math.floor(Date.now() / 1000) - 600 })],
    ['a timestamp 10 minutes ahead', () => ({ timestamp: Math.floor(Date.now() / 1000) + 600 })],
    ['no signature headers', () => ({ unsigned: true })],
    ['a signed body that is not JSON', () => ({ body: 'not json at all', contentType: 'text/plain' })],
    ['a signed JSON body that is not an envelope', () => ({ body: '{"a":1}' })],
    ['a signed body cut short', () => ({ body: '{"event":"order.paid"' })],
    [
      'an unsigned body that is not JSON',
      () => ({ body: '<xml/>', contentType: 'application/xml', unsigned: true }),
    ],
    ['an empty unsigned body', () => ({ body: '', unsigned: true })],
  ])('answers 400 and queues nothing for %s', async (_label, make) => {
    const res = await receiver.post(make());
    expect(res.status).toBe(400);
    expect(receiver.queued()).not.toContain(res.eventId);
  });

  it('answers 503 when the enqueue fails, and queues the same event when it comes again', async () => {
    const moved = `${receiver.queueFile}.kept`;
    const hadQueue = receiver.queued().length > 0;
    if (hadQueue) writeFileSync(moved, readFileSync(receiver.queueFile));
    rmSync(receiver.queueFile, { force: true });
    // A directory where the queue file should be: every append fails.
    mkdirSync(receiver.queueFile);
    let eventId: string;
    try {
      const failed = await receiver.post();
      eventId = failed.eventId;
      expect(failed.status).toBe(503);
    } finally {
      rmSync(receiver.queueFile, { recursive: true, force: true });
      if (hadQueue) writeFileSync(receiver.queueFile, readFileSync(moved));
    }
    expect(receiver.queued()).not.toContain(eventId);

    // The retry of the same delivery is not taken for a duplicate: it is queued.
    const retried = await receiver.post({ eventId, body: envelopeBody(2) });
    expect(retried.status).toBe(204);
    expect(receiver.queued().filter((id) => id === eventId)).toHaveLength(1);
  });
});

/** The Standard Webhooks checks of the page, each run by a small driver that prints one verdict a case. */
const STANDARD_CHECKS: { name: string; run(dir: string, input: string): ReturnType<typeof spawnSync> }[] = [
  {
    name: 'Python',
    run(dir, input) {
      copySample('python/standard_webhooks.py', dir, 'standard_webhooks.py');
      const driver = [
        'import json, sys',
        'from standard_webhooks import verify_standard_webhook',
        'given = json.load(sys.stdin)',
        'def verdict(case):',
        '    try:',
        '        return verify_standard_webhook(case["secrets"], case["headers"], given["body"].encode())',
        '    except (TypeError, ValueError):',
        '        return False  # a secret it cannot use is refused',
        'print(json.dumps([verdict(case) for case in given["cases"]]))',
      ].join('\n');
      return spawnSync('python3', ['-c', driver], { cwd: dir, input, encoding: 'utf8' });
    },
  },
  {
    name: 'Go',
    run(dir, input) {
      copySample('go/standard_webhooks.go', dir, 'standard_webhooks.go');
      writeFileSync(
        path.join(dir, 'driver.go'),
        [
          'package main',
          'import ("encoding/json"; "fmt"; "net/http"; "os")',
          'func main() {',
          '\tvar given struct {',
          '\t\tCases []struct{ Secrets []string; Headers map[string]string }',
          '\t\tBody string',
          '\t}',
          '\tif err := json.NewDecoder(os.Stdin).Decode(&given); err != nil { panic(err) }',
          '\tverdicts := []bool{}',
          '\tfor _, c := range given.Cases {',
          '\t\theader := http.Header{}',
          '\t\tfor name, value := range c.Headers { header.Set(name, value) }',
          '\t\tverdicts = append(verdicts, VerifyStandard(header, []byte(given.Body), c.Secrets...))',
          '\t}',
          '\tout, _ := json.Marshal(verdicts)',
          '\tfmt.Println(string(out))',
          '}',
        ].join('\n'),
      );
      return spawnSync('go', ['run', 'driver.go', 'standard_webhooks.go'], {
        cwd: dir,
        input,
        encoding: 'utf8',
      });
    },
  },
  {
    name: 'PHP',
    run(dir, input) {
      copySample('php/standard_webhooks.php', dir, 'standard_webhooks.php');
      const driver = [
        "require 'standard_webhooks.php';",
        "$given = json_decode(file_get_contents('php://stdin'), true);",
        '$verdicts = [];',
        "foreach ($given['cases'] as $case) {",
        "    $_SERVER['HTTP_WEBHOOK_ID'] = $case['headers']['webhook-id'];",
        "    $_SERVER['HTTP_WEBHOOK_TIMESTAMP'] = $case['headers']['webhook-timestamp'];",
        "    $_SERVER['HTTP_WEBHOOK_SIGNATURE'] = $case['headers']['webhook-signature'];",
        "    $verdicts[] = verify_standard_webhook($case['secrets'], $given['body']);",
        '}',
        'echo json_encode($verdicts), "\\n";',
      ].join('\n');
      return spawnSync('php', ['-r', driver], { cwd: dir, input, encoding: 'utf8' });
    },
  },
];

describe.each(STANDARD_CHECKS)('the $name Standard Webhooks check', (check) => {
  // Each case: secrets given to the check, headers and body sent, and whether it must pass.
  const bytes = randomBytes(32);
  const standard = `whsec_${bytes.toString('base64')}`;
  const urlSafe = `whsec_${bytes.toString('base64url')}`;
  const now = Math.floor(Date.now() / 1000);
  const body = envelopeBody();
  const signed = (secret: string, timestamp = now, signedBody = body) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignatureFor(secret, 'evt_1', timestamp, signedBody),
  });
  const cases: { name: string; secrets: string[]; headers: Record<string, string>; valid: boolean }[] = [
    { name: 'signed with the secret', secrets: [standard], headers: signed(standard), valid: true },
    { name: 'a base64url secret, same bytes', secrets: [urlSafe], headers: signed(standard), valid: true },
    {
      name: 'rotation: the second secret',
      secrets: [newSecret(), standard],
      headers: signed(urlSafe),
      valid: true,
    },
    {
      name: 'several signatures, one matching',
      secrets: [standard],
      headers: {
        ...signed(standard),
        'webhook-signature': `v1,AAAA ${signed(standard)['webhook-signature']}`,
      },
      valid: true,
    },
    { name: 'another secret', secrets: [newSecret()], headers: signed(standard), valid: false },
    { name: 'another body', secrets: [standard], headers: signed(standard, now, `${body} `), valid: false },
    { name: '10 minutes old', secrets: [standard], headers: signed(standard, now - 600), valid: false },
    {
      name: 'a version other than v1',
      secrets: [standard],
      headers: {
        ...signed(standard),
        'webhook-signature': signed(standard)['webhook-signature'].replace('v1,', 'v2,'),
      },
      valid: false,
    },
    {
      name: 'signed with an empty key, for a secret with nothing after whsec_',
      secrets: ['whsec_'],
      headers: {
        ...signed(standard),
        'webhook-signature': `v1,${createHmac('sha256', Buffer.alloc(0)).update(`evt_1.${now}.${body}`).digest('base64')}`,
      },
      valid: false,
    },
    {
      name: 'no webhook-id',
      secrets: [standard],
      headers: { ...signed(standard), 'webhook-id': '' },
      valid: false,
    },
  ];

  it('accepts exactly the deliveries signed by standardSignatureFor with an accepted secret', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'webhook-standard-'));
    try {
      const result = check.run(dir, JSON.stringify({ cases, body }));
      expect({ status: result.status, stderr: String(result.stderr) }).toEqual({ status: 0, stderr: '' });
      const verdicts = JSON.parse(String(result.stdout)) as boolean[];
      expect(cases.map((c, i) => ({ name: c.name, valid: verdicts[i] }))).toEqual(
        cases.map((c) => ({ name: c.name, valid: c.valid })),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Every ```lang block preceded by `<!-- sample: <file> -->` in the page, by file. */
function blocksOfPage(): Map<string, string> {
  const page = readFileSync(PAGE, 'utf8');
  const blocks = new Map<string, string>();
  const pattern = /<!-- sample: ([^\s]+) -->\n+```[a-z]*\n([\s\S]*?)\n```\n/g;
  for (const match of page.matchAll(pattern)) blocks.set(match[1]!, `${match[2]!}\n`);
  return blocks;
}

function sampleFiles(): string[] {
  return readdirSync(SAMPLES, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(SAMPLES, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('docs/webhooks.md', () => {
  it('shows every receiver sample exactly as the file that runs', () => {
    const blocks = blocksOfPage();
    expect([...blocks.keys()].sort()).toEqual(sampleFiles());
    for (const file of sampleFiles()) {
      expect({ file, text: blocks.get(file) }).toEqual({
        file,
        text: readFileSync(path.join(SAMPLES, file), 'utf8'),
      });
    }
  });

  it('writes every event id of the documentation as the API makes them', () => {
    const docs = path.join(ROOT, 'docs');
    const ids = readdirSync(docs)
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) =>
        [...readFileSync(path.join(docs, file), 'utf8').matchAll(/\bevt_[A-Za-z0-9]+/g)].map((m) => ({
          file,
          id: m[0],
        })),
      );
    expect(ids.length).toBeGreaterThan(5);
    expect(ids.filter(({ id }) => !EVENT_ID_PATTERN.test(id))).toEqual([]);
  });

  it('gives worked examples that the signing functions reproduce', () => {
    const page = readFileSync(PAGE, 'utf8');
    // An event id of the form the API makes (evt_ and 24 letters and digits).
    const eventId = 'evt_5mQ2xR8vKc3TnW7pL0bZ4hJy';
    expect(eventId).toMatch(EVENT_ID_PATTERN);
    expect(page).toContain(
      `| \`X-Webhook-Signature\` | \`${signatureFor('whsec_test', eventId, 1700000000, '{"a":1}')}\` |`,
    );
    const secret = `whsec_${Buffer.alloc(32, 0xfb).toString('base64')}`;
    expect(page).toContain(
      `\`${secret}\` or, the same bytes, \`whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}\``,
    );
    expect(page).toContain(
      `| \`webhook-signature\` | \`${standardSignatureFor(secret, eventId, 1700000000, '{"a":1}')}\` |`,
    );
  });
});
