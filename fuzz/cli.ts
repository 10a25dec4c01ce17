// `npm run fuzz`: 100,000 fuzzed requests against the running system (docs/fuzz.md). Exit code 1 when
// any answer breaks the rules (verdict.ts), 2 when the run itself could not start.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { prepareContext } from './setup';
import { formatReport, runFuzz } from './runner';

const ROOT = path.resolve(__dirname, '..');

function option(name: string, env: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const raw = at >= 0 ? process.argv[at + 1] : process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`--${name} (${env}) must be a whole number, not ${raw}`);
  return value;
}

/** A new key from the operator CLI, as the README's walk-through makes one (printed on its last line). */
function createKey(args: string[]): string {
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/cli.mjs'), 'keys', 'create', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const key = run.stdout.trim().split('\n').pop() ?? '';
  if (run.status !== 0 || !/^mk_(test|live)_/.test(key))
    throw new Error(`keys create ${args.join(' ')} failed`);
  return key;
}

async function main(): Promise<number> {
  const baseUrl = (process.env.FUZZ_BASE_URL ?? 'http://127.0.0.1:8080/api/v1').replace(/\/$/, '');
  const seed = option('seed', 'FUZZ_SEED', Math.floor(Math.random() * 2 ** 31));
  const requests = option('requests', 'FUZZ_REQUESTS', 100_000);
  const from = option('from', 'FUZZ_FROM', 0);
  const concurrency = Math.max(1, option('concurrency', 'FUZZ_CONCURRENCY', 16));

  const ready = await fetch(`${baseUrl}/openapi.json`).catch(() => null);
  if (!ready?.ok) {
    console.error(`nothing answers at ${baseUrl}: start the system first (npm start) or set FUZZ_BASE_URL`);
    return 2;
  }
  const stamp = `${Date.now()}-${process.pid}`;
  const sellerEmail = `fuzz-${stamp}@example.com`;
  const keys = {
    seller:
      process.env.FUZZ_SELLER_KEY || createKey(['--email', sellerEmail, '--env', 'test', '--label', 'fuzz']),
    live:
      process.env.FUZZ_LIVE_KEY || createKey(['--email', sellerEmail, '--env', 'live', '--label', 'fuzz']),
    operator:
      process.env.FUZZ_OPERATOR_KEY ||
      createKey(['--email', `fuzz-ops-${stamp}@example.com`, '--env', 'test', '--role', 'operator']),
  };
  const context = await prepareContext(
    baseUrl,
    keys,
    process.env.FUZZ_PSP_SECRET || process.env.PSP_WEBHOOK_SECRET || null,
  );
  console.log(
    `fuzzing ${baseUrl}: seed ${seed}, requests ${from} to ${from + requests - 1}, ${concurrency} at a time ` +
      `(known ids: ${Object.entries(context.ids)
        .map(([k, v]) => `${k} ${v.length}`)
        .join(', ')})`,
  );
  const started = Date.now();
  const report = await runFuzz({
    baseUrl,
    context,
    seed,
    requests,
    from,
    concurrency,
    onAnswer: (done) => {
      if (done % 5_000 === 0)
        console.log(`  ${done} answered (${Math.round((Date.now() - started) / 1000)} s)`);
    },
  });
  console.log(formatReport(report));
  const limited = report.byStatus.get('429') ?? 0;
  if (limited > report.sent / 10)
    console.log(
      `\n${limited} answers were 429: start the system with higher RATE_LIMIT_PER_MINUTE and ` +
        'UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE for a fuzz run (docs/fuzz.md).',
    );
  return report.failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);
