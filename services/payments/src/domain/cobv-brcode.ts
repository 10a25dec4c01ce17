import { buildDynamicBrCode, parseBrCode } from './brcode';

// A due-date charge's BR Code is the PSP's dynamic one: merchant account information (26) with the
// Pix GUI and the location (25), and neither a key (01) nor an amount (54), because what the payer owes
// depends on the day: their bank reads it from the location, never from the code.

const PIX_GUI = 'br.gov.bcb.pix';

export type DueDateBrCodeCheck = { ok: true; location: string } | { ok: false; problem: string };

/**
 * Whether `code` is a due-date charge's dynamic BR Code, pointing at `expectedLocation` when the PSP
 * gave one (compared without a scheme). Never throws.
 */
export function checkDueDateBrCode(code: string, expectedLocation: string | null): DueDateBrCodeCheck {
  if (code === '') return { ok: false, problem: 'no pixCopiaECola' };
  const parsed = parseBrCode(code);
  if (!parsed.valid) return { ok: false, problem: parsed.error ?? 'not a BR Code' };
  const account = parsed.fields['26'];
  if (typeof account !== 'object' || account['00']?.toLowerCase() !== PIX_GUI) {
    return { ok: false, problem: 'field 26 is not a Pix account' };
  }
  const location = account['25'];
  if (location === undefined) return { ok: false, problem: 'field 26 has no location (25)' };
  if (account['01'] !== undefined)
    return { ok: false, problem: 'a key (26/01) where a location is expected' };
  if (parsed.fields['54'] !== undefined) {
    return { ok: false, problem: 'an amount (54): a due-date charge carries none' };
  }
  const expected = expectedLocation?.trim().replace(/^https?:\/\//i, '');
  if (expected && expected !== location) {
    return { ok: false, problem: 'its location is not the charge location' };
  }
  return { ok: true, location };
}

/**
 * `location` as API Pix has it (at most 77 characters, what field 26/25 leaves): a host, an optional
 * port and a path, printable ASCII, without a scheme (one is tolerated and dropped).
 */
const LOCATION =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?\/[\x21-\x7e]*$/;
const MAX_LOCATION = 77;

/**
 * The dynamic BR Code of a location, for a PSP that answers without `pixCopiaECola` (optional in API
 * Pix): the location, our merchant name and city, no amount. Null when the location is not one a BR
 * Code can carry.
 */
export function dueDateBrCodeOf(
  location: string | null,
  merchant: { merchantName: string; merchantCity: string },
): string | null {
  const value = location?.trim().replace(/^https?:\/\//i, '') ?? '';
  if (value.length === 0 || value.length > MAX_LOCATION || !LOCATION.test(value)) return null;
  return buildDynamicBrCode({ location: value, ...merchant });
}
