import { MESSAGES } from '@seller-api/contracts';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { HttpError } from './errors';
import { MAX_BODY_BYTES } from './http';

const EMPTY = Buffer.alloc(0);

/**
 * PSP_NOTIFICATION_MAX_BYTES, the cap on a PSP notification's body, in the gateway and in payments
 * (both read it: set it the same). 64 KiB by default: an API Pix `{"pix": [...]}` item is about 300
 * bytes, and each refund it reports (`devolucoes`) about 300 more, so 64 KiB holds a batch of a hundred
 * payments, or one payment with a hundred refunds, with room to spare (docs/limits.md, "Sizes"). At
 * most the API's 1 MiB.
 */
export const pspNotificationMaxBytes = z.coerce
  .number()
  .int()
  .min(1024)
  .max(MAX_BODY_BYTES)
  .default(64 * 1024);

/** A byte count as the 413 message states it: `1 MiB`, `64 KiB`, `1500 bytes`. */
export function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

export const payloadTooLarge = (maxBytes = MAX_BODY_BYTES) =>
  new HttpError(413, 'payload_too_large', `Request body exceeds ${sizeText(maxBytes)}.`);

/**
 * Reads the raw body, refusing more than `maxBytes` (1 MiB unless a route needs less) as soon as it is
 * announced or exceeded.
 */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  // Most requests (GETs) announce no body at all: nothing to wait for.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
    return EMPTY;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) {
    req.resume();
    throw payloadTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.resume();
      throw payloadTooLarge(maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Action routes accept an empty body; anything else must be JSON. Its strings may not hold the NUL
 * character (`\u0000`), which no PostgreSQL text column stores: a 400 naming each field that has one.
 */
export function assertJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'Request body is not valid JSON.');
  }
  // Only an escape can put a NUL in a JSON string: the walk runs for the bodies that have one.
  if (!text.includes('\\u0000')) return value;
  const fields = new Map<string, string[]>();
  for (const path of nulPaths(value, [])) fields.set(path || 'non_field_errors', [NUL_MESSAGE]);
  if (fields.size > 0)
    throw new HttpError(400, 'validation_error', 'Invalid body.', Object.fromEntries(fields));
  return value;
}

const NUL_MESSAGE = MESSAGES.nul;

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
