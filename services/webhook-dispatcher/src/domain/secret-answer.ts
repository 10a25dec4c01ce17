import type { StoredAnswerCodec } from '@seller-api/service-kit';
import { SecretBox } from './secret-box';

/**
 * How the 201 that shows a new webhook secret is kept for Idempotency-Key replays
 * (docs/webhooks.md, "Secrets at rest"): its `data.secret` sealed like the stored secret (under
 * `answer:<webhook id>`, so neither opens as the other), and opened again for a replay, which sends the
 * very text of the first answer. A client that retries gets its secret; the stored answer holds none
 * in clear.
 */
export function sealedSecretAnswer(secrets: SecretBox): StoredAnswerCodec {
  const swap = (text: string, change: (secret: string, id: string) => string): string => {
    const shown = secretOf(text);
    if (!shown) return text;
    // The one place the secret is written, as JSON writes it: replaced as text so that everything else
    // keeps its bytes. A function, so that `$` in a value is not a pattern.
    const from = `"secret":${JSON.stringify(shown.secret)}`;
    const to = `"secret":${JSON.stringify(change(shown.secret, shown.id))}`;
    return text.replace(from, () => to);
  };
  return {
    toStored: (text) => swap(text, (secret, id) => secrets.seal(secret, `answer:${id}`)),
    fromStored: (stored) =>
      swap(stored, (sealed, id) =>
        SecretBox.isSealed(sealed) ? secrets.open(sealed, `answer:${id}`) : sealed,
      ),
  };
}

function secretOf(text: string): { secret: string; id: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const data = (parsed as { data?: { secret?: unknown; id?: unknown } } | null)?.data;
  if (typeof data?.secret !== 'string' || typeof data.id !== 'string') return null;
  return { secret: data.secret, id: data.id };
}
