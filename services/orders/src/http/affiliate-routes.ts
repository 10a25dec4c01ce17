import { CreateAffiliateRequest, ListQuery } from '@seller-api/contracts';
import type { Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';
import { createAffiliate, listAffiliates } from '../db/affiliates';
import { presentAffiliate } from './presenters';
import { createRecordRoute, listRecordsRoute } from './seller-records';

/** The seller's affiliates: create, list. */
export function mountAffiliateRoutes(app: Express, runtime: Runtime): void {
  app.post(
    '/sellers/affiliates/',
    createRecordRoute(runtime, {
      schema: CreateAffiliateRequest,
      invalid: 'Invalid affiliate.',
      create: createAffiliate,
      present: presentAffiliate,
      created: 'Affiliate created.',
    }),
  );
  app.get(
    '/sellers/affiliates/',
    listRecordsRoute(runtime, {
      query: ListQuery,
      list: listAffiliates,
      present: presentAffiliate,
      listed: 'Affiliates retrieved.',
    }),
  );
}
