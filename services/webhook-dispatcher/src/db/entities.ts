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
  /**
   * The clear secret of a row written before secrets were sealed, until jobs/seal-secrets.ts seals it;
   * null for every row written since. Never shown after creation, never logged.
   */
  secret: string | null;
  /** The secret sealed under WEBHOOK_SECRETS_KEY (domain/secret-box.ts). */
  secretSealed: string | null;
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
    secret: { type: 'string', lazy: true, nullable: true },
    secretSealed: { type: 'string', lazy: true, nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz(3)' },
    updatedAt: { type: 'Date', columnType: 'timestamptz(3)' },
  },
});

export const entities = [WebhookSchema];
