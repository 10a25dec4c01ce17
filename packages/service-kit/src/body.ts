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

/** Action routes accept an empty body; anything else must be JSON. */
export function assertJson(body: Buffer): void {
  if (body.length === 0) return;
  try {
    JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'invalid_json', 'Request body is not valid JSON.');
  }
}
