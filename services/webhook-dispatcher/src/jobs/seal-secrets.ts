import { startPeriodicJob, type Logger, type PeriodicJob, type Sql } from '@seller-api/service-kit';
import { storeSealedSecrets, unsealedSecrets } from '../db/webhook-secrets';
import { SecretBox, SecretOpenError } from '../domain/secret-box';

/** Secrets sealed per statement. */
const BATCH = 200;
/**
 * Also on a timer, not only at start: during a rolling deploy, a replica of the release before writes
 * new secrets in clear, and this seals them within the interval.
 */
const INTERVAL_MS = 10 * 60_000;

/**
 * Seals every webhook secret not sealed with the current key (docs/webhooks.md, "Secrets at rest"):
 * the clear ones of before (their clear copy is cleared in the same update) and, after a key rotation,
 * those sealed with WEBHOOK_SECRETS_KEY_PREVIOUS. A batch job rather than a re-seal on read: the sender
 * reads secrets through its claim on the hot path, which then would write too, and a webhook that gets
 * no delivery would keep its old sealing (and the previous key stay needed) for ever; the table is small,
 * so a pass is a few statements. Answers how many were sealed and how many could not be opened (sealed
 * with a key this replica does not hold, logged by id only).
 */
export async function sealSecrets(
  sql: Sql,
  secrets: SecretBox,
  logger: Logger,
): Promise<{ sealed: number; unopened: number }> {
  let sealed = 0;
  let unopened = 0;
  let after: string | null = null;
  for (;;) {
    const rows = await unsealedSecrets(sql, secrets.currentPrefix, after, BATCH);
    const resealed = [];
    for (const row of rows) {
      try {
        const secret = secrets.open(row.secret ?? (row.secret_sealed as string), row.id);
        resealed.push({ ...row, sealed: secrets.seal(secret, row.id) });
      } catch (err) {
        if (!(err instanceof SecretOpenError)) throw err;
        unopened += 1;
        logger.error({ webhook: row.id, err: err.message }, 'webhook secret cannot be opened');
      }
    }
    sealed += await storeSealedSecrets(sql, resealed);
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]?.id ?? null;
  }
  return { sealed, unopened };
}

/** sealSecrets at start, then every INTERVAL_MS; every replica may run it (each update is a compare and set). */
export function startSecretSealing(sql: Sql, secrets: SecretBox, logger: Logger): PeriodicJob {
  return startPeriodicJob({
    name: 'secret sealing',
    intervalMs: INTERVAL_MS,
    logger,
    failureMessage: 'sealing webhook secrets failed; will retry',
    run: async () => {
      const { sealed, unopened } = await sealSecrets(sql, secrets, logger);
      if (sealed > 0 || unopened > 0) {
        logger.info(
          { sealed, unopened, key_id: secrets.currentKeyId },
          'webhook secrets sealed with the current key',
        );
      }
    },
  });
}
