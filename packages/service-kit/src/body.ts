import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors';
import { MAX_BODY_BYTES } from './http';

const EMPTY = Buffer.alloc(0);

const tooLarge = () => new HttpError(413, 'payload_too_large', 'Request body exceeds 1 MiB.');

/** Reads the raw body, refusing more than 1 MiB as soon as it is announced or exceeded. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  // Most requests (GETs) announce no body at all: nothing to wait for.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
    return EMPTY;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Action routes accept an empty body; anything else must be JSON. Its strings may not hold the NUL
 * character (`\u0000`), which no PostgreSQL text column stores: a 400 naming each field that has one.
 */
export function assertJson(body: Buffer): void {
  if (body.length === 0) return;
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'Request body is not valid JSON.');
  }
  // Only an escape can put a NUL in a JSON string: the walk runs for the bodies that have one.
  if (!text.includes('\\u0000')) return;
  const fields = new Map<string, string[]>();
  for (const path of nulPaths(value, [])) fields.set(path || 'non_field_errors', [NUL_MESSAGE]);
  if (fields.size > 0)
    throw new HttpError(400, 'validation_error', 'Invalid body.', Object.fromEntries(fields));
}

const NUL_MESSAGE = 'Must not contain the NUL character (\\u0000)';

/** Dotted paths of the strings (and keys) of `value` that hold a NUL character. */
function nulPaths(value: unknown, path: string[]): string[] {
  if (typeof value === 'string') return value.includes('\u0000') ? [path.join('.')] : [];
  if (value === null || typeof value !== 'object') return [];
  const found: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) found.push([...path, key].join('.'));
    else found.push(...nulPaths(item, [...path, key]));
  }
  return found;
}
