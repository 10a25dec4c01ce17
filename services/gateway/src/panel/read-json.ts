import type { Request } from 'express';
import { assertJson, readBody } from '@seller-api/service-kit';

export async function readJson(req: Request): Promise<unknown> {
  const body = await readBody(req);
  return body.length === 0 ? {} : assertJson(body);
}
