import { isValidCnpj } from '@seller-api/contracts';
import pino, { type Logger } from 'pino';

export type { Logger };

/*
 * Secrets and personal data that must never reach a log line, whatever field they hide in: API keys,
 * webhook secrets, bearer tokens, tax ids (CPF, numeric and alphanumeric CNPJ), e-mail and phone PIX
 * keys, and the order list's searches in a logged URL. Ids that must stay readable (UUIDs, end-to-end
 * ids, txids, amounts) are never 11 or 14 characters between word boundaries, so the tax-id patterns
 * leave them alone (logger.test.ts holds the cases).
 */

/**
 * An alphanumeric CNPJ (`12.ABC.345/01DE-35`): believed as written when fully punctuated; otherwise
 * only with valid check digits, so a 14-character id or code that happens to end in two digits stays.
 * An all-digit one is the numeric pattern's.
 */
const ALPHANUMERIC_CNPJ =
  /\b([0-9A-Za-z]{2})(\.?)([0-9A-Za-z])[0-9A-Za-z]{2}(\.?)[0-9A-Za-z]{3}(\/?)[0-9A-Za-z]{4}(-?)(\d{2})\b/g;

function maskAlphanumericCnpj(match: string, ...groups: string[]): string {
  const [head = '', dot1, third = '', dot2, slash, dash, check = ''] = groups;
  const clean = match.replace(/[./-]/g, '');
  if (/^\d+$/.test(clean)) return match;
  const punctuated = Boolean(dot1 && dot2 && slash && dash);
  if (!punctuated && !isValidCnpj(clean)) return match;
  return `${head}.${third}**.***/****-${check}`;
}

/** A phone (a PIX key's `+55` form, spaced or not; 55 + area code + mobile without the `+`). */
const PHONE = /(?<![\w+])(\+55[\s-]?\(?\d{2}\)?[\s-]?9?\d{4}[\s-]?\d{2}|\b55\d{2}9\d{6})(\d{2})\b/g;

/** An e-mail address: the first character of its local part and its domain stay. */
const EMAIL = /(?<![\w.%+-])([A-Za-z0-9])[\w.%+-]*@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})\b/g;

type Replacement = string | ((match: string, ...groups: string[]) => string);

// Patterns of text (not of a query's keys), applied in this order; one with a needle runs only on a
// text that holds it (every string of every log line goes through here).
const SECRET_PATTERNS: Array<[RegExp, Replacement, string?]> = [
  [/mk_(live|test)_[A-Za-z0-9]+/g, 'mk_$1_[REDACTED]', 'mk_'],
  // Webhook secrets in standard base64 (+ / and = padding) or base64url (- _).
  [/whsec_[A-Za-z0-9+/_-]+=*/g, 'whsec_[REDACTED]', 'whsec_'],
  [/Bearer\s+\S+/gi, 'Bearer [REDACTED]'],
  [EMAIL, '$1***@$2', '@'],
  // Before the CPF: a phone's digits must not be read as one.
  [PHONE, '+55*********$2', '55'],
  // CPF/CNPJ, punctuated, spaced (`123 456 789 09`) or not: keep the first 3 and the last 2 characters.
  [/\b(\d{3})[. ]?\d{3}[. ]?\d{3}[- ]?(\d{2})\b/g, '$1.***.***-$2'],
  [/\b(\d{2})\.?(\d)\d{2}\.?\d{3}\/?\d{4}-?(\d{2})\b/g, '$1.$2**.***/****-$3'],
  [ALPHANUMERIC_CNPJ, maskAlphanumericCnpj],
];

/**
 * Query parameters whose value is never logged, whatever their case, percent-encoding or brackets
 * (`customer_email[]`, `customer%5Femail`, `customer[email]`): the order list's searches and any
 * parameter that names a secret or personal data.
 */
const SECRET_QUERY_KEYS = new Set([
  'customer_tax_id',
  'customer_email',
  'tax_id',
  'email',
  'phone',
  'cpf',
  'cnpj',
  'document',
  'debtor_document',
  'pix_key',
  'chave',
  'api_key',
  'apikey',
  'secret',
  'password',
  'token',
  'authorization',
]);

// One `key=value` of a query, in a logged URL or path (`?` or `&` before it).
const QUERY_PARAMETER = /([?&])([^=&#\s"?]+)=([^&#\s"]*)/g;

/** Percent-decoded (repeatedly: `%255F` too), `+` as a space; the text itself when it is not valid. */
function decoded(text: string): string {
  let out = text.replace(/\+/g, ' ');
  for (let i = 0; i < 3 && out.includes('%'); i += 1) {
    try {
      const next = decodeURIComponent(out);
      if (next === out) break;
      out = next;
    } catch {
      break;
    }
  }
  return out;
}

function isSecretQueryKey(rawKey: string): boolean {
  // The usual case, a plain key: one look-up.
  if (!/[%+[\].]/.test(rawKey)) return SECRET_QUERY_KEYS.has(rawKey.toLowerCase().trim());
  const key = decoded(rawKey).toLowerCase().trim();
  const parts = key.split(/[[\].]+/).filter((part) => part !== '');
  return SECRET_QUERY_KEYS.has(key) || parts.some((part) => SECRET_QUERY_KEYS.has(part.trim()));
}

function scrubQueryParameter(match: string, lead: string, key: string, value: string): string {
  if (isSecretQueryKey(key)) return `${lead}${key}=[REDACTED]`;
  // A value percent-encoded (`ana%40example.com`) is checked as the service reads it; a plain one is
  // left to the pass over the whole text.
  if (!value.includes('%') && !value.includes('+')) return match;
  const plain = decoded(value);
  const scrubbed = scrubText(plain);
  return `${lead}${key}=${scrubbed === plain ? value : scrubbed.replace(/[%&#\s]/g, encodeURIComponent)}`;
}

function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement, needle] of SECRET_PATTERNS)
    if (needle === undefined || out.includes(needle))
      out = out.replace(pattern, replacement as (match: string, ...groups: string[]) => string);
  return out;
}

/**
 * `text` with every secret and piece of personal data above masked or redacted. Also for what is
 * stored or shown from elsewhere (a PSP's error words, say) where a log's rules apply.
 */
export function scrub(text: string): string {
  return scrubText(text.includes('=') ? text.replace(QUERY_PARAMETER, scrubQueryParameter) : text);
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
  'internal_key',
  'internal_caller_keys',
  'x-sa-identity-sig3',
  'webhook_secrets_key',
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
