import type { Request } from 'express';
import { assertJson, readBody } from '@seller-api/service-kit';

export async function readJson(req: Request): Promise<unknown> {
  const body = await readBody(req);
  assertJson(body);
  return body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as unknown);
}
