// `npm run cli -- <command> ...`: the operator CLI. `reconcile` belongs to the withdrawals service (the
// ledger's reconciliation with payments, docs/finance.md); every other command (keys, users) to the
// gateway. Builds that service and the packages it uses, then runs its dist/cli.js with the same
// arguments and exits with its code. The build's output is shown only when it fails (on stderr): stdout
// is the CLI's alone (the key `keys create` prints on its last line).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The service whose CLI runs `args`. */
export function cliOf(args) {
  return args[0] === 'reconcile'
    ? { workspace: '@seller-api/withdrawals', entry: 'services/withdrawals/dist/cli.js' }
    : { workspace: '@seller-api/gateway', entry: 'services/gateway/dist/cli.js' };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const cli = cliOf(args);
  const build = spawnSync(
    'npx',
    ['turbo', 'run', 'build', `--filter=${cli.workspace}`, '--output-logs=errors-only'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { TURBO_TELEMETRY_DISABLED: '1', ...process.env } },
  );
  // Quiet unless it fails: the terminal is the CLI's (webhooks listen prints deliveries there).
  if (build.status !== 0) {
    process.stderr.write(build.stdout ?? '');
    process.stderr.write(build.stderr ?? '');
    process.exit(build.status ?? 1);
  }
  // Not spawnSync: a signal sent to this process alone (SIGTERM from a supervisor) must reach the CLI,
  // whose `webhooks listen` removes its webhooks before it exits.
  const run = spawn(process.execPath, [path.join(root, cli.entry), ...args], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => run.kill(signal));
  run.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
