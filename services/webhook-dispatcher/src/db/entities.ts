import { EntitySchema } from '@mikro-orm/core';
import type { Environment, EventName } from '@seller-api/contracts';

export type StoredWebhookStatus = 'ACTIVE' | 'DISABLED' | 'RETIRED' | 'DELETED';

export interface WebhookRow {
  id: string;
  sellerId: string;
  environment: Environment;
  url: string;
  event: EventName;
  description: string | null;
  status: StoredWebhookStatus;
  /** Needed in the clear to sign every delivery; never shown after creation, never logged. */
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

export const WebhookSchema = new EntitySchema<WebhookRow>({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    url: { type: 'string' },
    event: { type: 'string' },
    description: { type: 'string', nullable: true },
    status: { type: 'string' },
    secret: { type: 'string', lazy: true },
    createdAt: { type: 'Date', columnType: 'timestamptz(3)' },
    updatedAt: { type: 'Date', columnType: 'timestamptz(3)' },
  },
});

export const entities = [WebhookSchema];
