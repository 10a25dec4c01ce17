import pino, { type Logger } from 'pino';

export type { Logger };

// Secrets and personal data that must never reach a log line, whatever field they hide in.
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/mk_(live|test)_[A-Za-z0-9]+/g, 'mk_$1_[REDACTED]'],
  // Webhook secrets in standard base64 (+ / and = padding) or base64url (- _).
  [/whsec_[A-Za-z0-9+/_-]+=*/g, 'whsec_[REDACTED]'],
  [/Bearer\s+\S+/gi, 'Bearer [REDACTED]'],
  // CPF/CNPJ, punctuated or not: keep the first 3 and the last 2 characters.
  [/\b(\d{3})\.?\d{3}\.?\d{3}-?(\d{2})\b/g, '$1.***.***-$2'],
  [/\b(\d{2})\.?(\d)\d{2}\.?\d{3}\/?\d{4}-?(\d{2})\b/g, '$1.$2**.***/****-$3'],
  // The order list's searches, in a logged path: the customer's tax id and e-mail, in any spelling.
  [/([?&](?:customer_tax_id|customer_email)=)[^&#\s"]*/gi, '$1[REDACTED]'],
];

export function scrub(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

const SECRET_KEYS = new Set([
  'authorization',
  'secret',
  'password',
  'api_key',
  'apikey',
  'x-webhook-signature',
  'cookie',
  'tax_id',
  'debtor_document',
  'pix_key',
  'internal_secret',
]);

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    return {
      type: value.name,
      message: scrub(value.message),
      stack: value.stack ? scrub(value.stack) : undefined,
    };
  }
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k.toLowerCase()) ? '[REDACTED]' : scrubValue(v, depth + 1);
  }
  return out;
}

export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => scrubValue(object, 0) as Record<string, unknown>,
      },
      hooks: {
        // Message strings are scrubbed too: an interpolated key must not slip through.
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as Parameters<
            typeof method
          >;
          return method.apply(this, scrubbed);
        },
      },
    },
    destination,
  );
}
