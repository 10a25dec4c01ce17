import { z } from 'zod';
import { MESSAGES } from './messages';
import { strictInput } from './strict';
import { dataResponse, datetime, listResponse, ListQuery, uuid } from './common';

/**
 * Extension: a seller's affiliates. An order created with `affiliate_code` shows the affiliate's name in
 * `parties.affiliate` and in its events; an order without one has no `parties.affiliate`.
 */
export const CreateAffiliateRequest = strictInput(
  z.object({
    code: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: MESSAGES.affiliateCode }),
    name: z.string().trim().min(1).max(255),
  }),
);
export type CreateAffiliateRequest = z.infer<typeof CreateAffiliateRequest>;

export const Affiliate = z.object({ uuid, code: z.string(), name: z.string(), created_at: datetime });
export type Affiliate = z.infer<typeof Affiliate>;

export const AffiliateResponse = dataResponse(Affiliate);
export const AffiliateList = listResponse(Affiliate);
export type AffiliateList = z.infer<typeof AffiliateList>;
export const AffiliateListResponse = dataResponse(AffiliateList);
export const AffiliateListQuery = strictInput(ListQuery);
