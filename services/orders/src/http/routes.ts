import type { Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';

/** The public routes of this service arrive with their capability issues. */
export function mountRoutes(_app: Express, _runtime: Runtime): void {}
