import type { EntitySchema } from '@mikro-orm/core';

export const entities: EntitySchema[] = [];
