import { randomBytes } from 'node:crypto';
import { PspError } from '../../services/payments/src/domain/psp';

/** An API Pix txid: 26 to 35 letters and digits (35 here). */
export function txid(): string {
  return randomBytes(32)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(35, 'x')
    .slice(0, 35);
}

/** The PspError a call to a PSP adapter fails with; anything else (or no failure) fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<PspError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof PspError)) throw new Error(`expected a PspError, got ${String(err)}`);
  return err;
}
