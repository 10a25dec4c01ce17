// The ledger's reconciliation with payments (the withdrawals CLI), over everything since the run
// began. The services run without the scheduled job (RECONCILE_INTERVAL_MS=0), so this run is the
// first to look: anything it heals is money the events lost.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './cluster.mjs';

export async function reconcile(withdrawalsEnv, since) {
  const cli = path.join(ROOT, 'services/withdrawals/dist/cli.js');
  const args = [cli, 'reconcile', '--since', since.toISOString()];
  let stdout = '';
  let code = 0;
  try {
    ({ stdout } = await promisify(execFile)(process.execPath, args, {
      cwd: ROOT,
      env: { ...withdrawalsEnv, RECONCILE_GRACE_MS: '1000' },
      timeout: 300_000,
    }));
  } catch (err) {
    stdout = err.stdout ?? '';
    code = typeof err.code === 'number' ? err.code : 1;
    if (!stdout)
      return {
        ok: false,
        healed: '?',
        mismatches: '?',
        detail: `the CLI failed: ${err.stderr || err.message}`,
      };
  }
  const count = (label) => Number(new RegExp(`^${label}: (\\d+)$`, 'm').exec(stdout)?.[1] ?? NaN);
  const checked = count('Charges checked');
  const healed = count('Healed');
  const mismatches = count('Not healed');
  const ok = code === 0 && healed === 0 && mismatches === 0 && Number.isInteger(checked);
  return {
    ok,
    healed,
    mismatches,
    detail: ok ? undefined : stdout.trim().split('\n').slice(0, 12).join(' | '),
  };
}
