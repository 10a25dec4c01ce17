import type { Router } from 'express';
import {
  CreateApiKeyRequest,
  type ApiKeyListResponse,
  type CreatedApiKeyResponse,
} from '@seller-api/contracts';
import { HttpError, forbidden, parseOrThrow } from '@seller-api/service-kit';
import { activeKeys, createApiKey } from '../db/api-keys';
import { KeyChangeUnavailableError } from '../db/key-holders';
import { callerOf } from './caller';
import type { PanelContext } from './deps';
import { readJson } from './read-json';
import { requireJson } from './security';

/** The seller's API keys: the active ones, and a new one that replaces its environment's key. */
export function mountKeyRoutes(api: Router, { deps, spendUserBudget }: PanelContext): void {
  api.get('/keys', async (_req, res) => {
    const body: ApiKeyListResponse = {
      message: 'API keys retrieved.',
      data: { results: await activeKeys(deps.sql, callerOf(res).user.id) },
    };
    res.json(body);
  });

  api.post('/keys', async (req, res) => {
    requireJson(req);
    const input = parseOrThrow(CreateApiKeyRequest, await readJson(req), 'Invalid API key request.');
    const caller = callerOf(res);
    const { user } = caller;
    await spendUserBudget(caller, res);
    if (user.seller_status === 'SUSPENDED') throw forbidden('This seller account is suspended.');
    const { key, record } = await createApiKey(
      deps.sql,
      deps.orm.em.fork(),
      deps.keyVersions,
      user.id,
      input.environment,
      input.label || null,
    ).catch((err: unknown) => {
      if (!(err instanceof KeyChangeUnavailableError)) throw err;
      throw new HttpError(
        503,
        'service_unavailable',
        'Keys cannot be changed right now. Retry later.',
        undefined,
        {
          'Retry-After': '5',
        },
      );
    });
    deps.logger.info({ user_id: user.id, environment: record.environment }, 'panel API key created');
    const body: CreatedApiKeyResponse = {
      message: `API key created. Store it now: it is not shown again. The previous ${record.environment} key is revoked.`,
      data: {
        key,
        environment: record.environment,
        label: record.label,
        prefix: record.prefix,
        last4: record.last4,
        created_at: record.createdAt.toISOString(),
      },
    };
    res.status(201).json(body);
  });
}
