import { EntitySchema } from '@mikro-orm/core';
import type { Environment, Role } from '@seller-api/contracts';

export interface Seller {
  id: string;
  name: string;
  status: 'ACTIVE' | 'SUSPENDED';
  createdAt: Date;
}

export interface User {
  id: string;
  email: string;
  role: Role;
  sellerId: string | null;
  /** scrypt hash for panel logins; null for users who only hold API keys. */
  passwordHash: string | null;
  createdAt: Date;
}

export interface ApiKey {
  id: string;
  userId: string;
  environment: Environment;
  /** SHA-256 of the whole key, hex. The plain key is never stored. */
  keyHash: string;
  /** `mk_test_` or `mk_live_` plus the first 4 token characters, for display. */
  prefix: string;
  last4: string;
  label: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export const SellerSchema = new EntitySchema<Seller>({
  name: 'Seller',
  tableName: 'sellers',
  properties: {
    id: { type: 'uuid', primary: true },
    name: { type: 'string' },
    status: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz(3)' },
  },
});

export const UserSchema = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  properties: {
    id: { type: 'uuid', primary: true },
    email: { type: 'string' },
    role: { type: 'string' },
    sellerId: { type: 'uuid', nullable: true },
    passwordHash: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz(3)' },
  },
});

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: { type: 'uuid', primary: true },
    userId: { type: 'uuid' },
    environment: { type: 'string' },
    keyHash: { type: 'string' },
    prefix: { type: 'string' },
    last4: { type: 'string' },
    label: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz(3)' },
    revokedAt: { type: 'Date', columnType: 'timestamptz(3)', nullable: true },
  },
});

export const entities = [SellerSchema, UserSchema, ApiKeySchema];
