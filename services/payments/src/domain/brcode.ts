import { crc16CcittFalse } from './crc16';

/**
 * BR Code (EMV QRCPS-MPM as profiled by the Central Bank's Pix manual): a writer for the static and
 * dynamic forms and a small parser. Every field is ID (2 digits) + length (2 decimal digits) + value.
 */

const PIX_GUI = 'br.gov.bcb.pix';
const MAX_NAME = 25;
const MAX_CITY = 15;
const MAX_TXID = 25;
// EMV caps field 54 at 13 characters: "9999999999.99".
const MAX_AMOUNT_CENTS = 999_999_999_999;
const CRC_HEADER = '6304';

export interface StaticBrCodeInput {
  pixKey: string;
  /** Absent: no field 54, the payer's app asks the amount (the sandbox's due-date charges). */
  amountCents?: number;
  merchantName: string;
  merchantCity: string;
  txid: string;
  /** Free text for the payer (field 26/02); shortened to what field 26 still has room for. */
  description?: string;
}

export interface DynamicBrCodeInput {
  /** The PSP's location URL; a leading https:// or http:// is dropped. */
  location: string;
  amountCents?: number;
  merchantName: string;
  merchantCity: string;
}

/** Nested field map of a template (26–51, 62, 64, 80–99). */
export type BrCodeTemplate = Readonly<Record<string, string>>;
/** Top-level fields by ID; templates are parsed one level down. */
export type BrCodeFields = Readonly<Record<string, string | BrCodeTemplate>>;

export interface ParsedBrCode {
  /** Well-formed TLV throughout, starts with 00=01, ends with 63, and the CRC matches. */
  valid: boolean;
  /** What could be parsed; partial when `valid` is false. */
  fields: BrCodeFields;
  /** Why the code is not valid. */
  error?: string;
}

/** One EMV field; lengths are two decimal digits, so longer or empty values cannot be written. */
function tlv(id: string, value: string): string {
  if (value.length === 0 || value.length > 99) {
    throw new RangeError(`BR Code field ${id} must have 1 to 99 characters, got ${value.length}`);
  }
  return id + String(value.length).padStart(2, '0') + value;
}

function withCrc(payload: string): string {
  const body = payload + CRC_HEADER;
  return body + crc16CcittFalse(body);
}

/** Reais with 2 decimals from integer cents, in integer arithmetic so no binary-float error creeps in. */
export function formatAmountCents(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents <= 0 || cents > MAX_AMOUNT_CENTS) {
    throw new RangeError(`amount must be an integer number of cents in 1..${MAX_AMOUNT_CENTS}, got ${cents}`);
  }
  const rest = cents % 100;
  return `${(cents - rest) / 100}.${String(rest).padStart(2, '0')}`;
}

/**
 * Name and city must be plain printable ASCII: accents are dropped (NFD then strip combining marks),
 * anything else outside 0x20–0x7E is removed, runs of spaces are collapsed, then the text is cut to `max`
 * characters.
 */
export function normaliseMerchantText(text: string, max: number): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max)
    .trimEnd();
}

/** Static txid: up to 25 letters and digits; `***` (no txid) when nothing is left. */
export function normaliseStaticTxid(txid: string): string {
  const cleaned = txid.replace(/[^A-Za-z0-9]/g, '').slice(0, MAX_TXID);
  return cleaned === '' ? '***' : cleaned;
}

function requiredText(label: string, text: string, max: number): string {
  const value = normaliseMerchantText(text, max);
  if (value === '') throw new RangeError(`${label} is empty once normalised`);
  return value;
}

// A key or URL cannot be "fixed" by dropping characters without pointing elsewhere, so refuse instead.
function requiredAscii(label: string, text: string): string {
  const value = text.trim();
  if (value === '' || /[^\x20-\x7e]/.test(value)) {
    throw new RangeError(`${label} must be non-empty printable ASCII`);
  }
  return value;
}

function merchantFields(merchantName: string, merchantCity: string): string {
  return (
    tlv('58', 'BR') +
    tlv('59', requiredText('merchantName', merchantName, MAX_NAME)) +
    tlv('60', requiredText('merchantCity', merchantCity, MAX_CITY))
  );
}

export function buildStaticBrCode(input: StaticBrCodeInput): string {
  let account = tlv('00', PIX_GUI) + tlv('01', requiredAscii('pixKey', input.pixKey));
  if (input.description !== undefined) {
    // The description is a courtesy to the payer; cut it to fit rather than refuse the charge.
    const room = Math.max(0, 99 - account.length - 4);
    const description = normaliseMerchantText(input.description, room);
    if (description !== '') account += tlv('02', description);
  }
  return withCrc(
    tlv('00', '01') +
      tlv('26', account) +
      tlv('52', '0000') +
      tlv('53', '986') +
      (input.amountCents === undefined ? '' : tlv('54', formatAmountCents(input.amountCents))) +
      merchantFields(input.merchantName, input.merchantCity) +
      tlv('62', tlv('05', normaliseStaticTxid(input.txid))),
  );
}

export function buildDynamicBrCode(input: DynamicBrCodeInput): string {
  // The manual carries the location without a scheme: payers' apps always fetch it over https.
  const location = requiredAscii('location', input.location).replace(/^https?:\/\//i, '');
  return withCrc(
    tlv('00', '01') +
      tlv('01', '12') +
      tlv('26', tlv('00', PIX_GUI) + tlv('25', location)) +
      tlv('52', '0000') +
      tlv('53', '986') +
      (input.amountCents === undefined ? '' : tlv('54', formatAmountCents(input.amountCents))) +
      merchantFields(input.merchantName, input.merchantCity) +
      tlv('62', tlv('05', '***')),
  );
}

// EMV template IDs: merchant account information, additional data, language, unreserved templates.
function isTemplate(id: number): boolean {
  return (id >= 26 && id <= 51) || id === 62 || id === 64 || id >= 80;
}

type TlvResult =
  { ok: true; map: Record<string, string> } | { ok: false; map: Record<string, string>; error: string };

function parseTlv(text: string): TlvResult {
  const map: Record<string, string> = {};
  let at = 0;
  while (at < text.length) {
    const id = text.slice(at, at + 2);
    const len = text.slice(at + 2, at + 4);
    if (!/^\d\d$/.test(id) || !/^\d\d$/.test(len)) return { ok: false, map, error: `bad header at ${at}` };
    const end = at + 4 + Number(len);
    if (Number(len) === 0 || end > text.length) return { ok: false, map, error: `bad length of ${id}` };
    if (id in map) return { ok: false, map, error: `duplicate field ${id}` };
    map[id] = text.slice(at + 4, end);
    at = end;
  }
  return { ok: true, map };
}

/** Parses a BR Code into its fields and checks its structure and CRC. Never throws. */
export function parseBrCode(code: string): ParsedBrCode {
  const top = parseTlv(code);
  const fields: Record<string, string | BrCodeTemplate> = { ...top.map };
  if (!top.ok) return { valid: false, fields, error: top.error };

  for (const [id, value] of Object.entries(top.map)) {
    if (!isTemplate(Number(id))) continue;
    const nested = parseTlv(value);
    fields[id] = nested.map;
    if (!nested.ok) return { valid: false, fields, error: `field ${id}: ${nested.error}` };
  }

  if (!code.startsWith('000201')) return { valid: false, fields, error: 'does not start with 00=01' };
  if (code.length < 8 || code.slice(-8, -4) !== CRC_HEADER) {
    return { valid: false, fields, error: 'does not end with the CRC field 63' };
  }
  const expected = crc16CcittFalse(code.slice(0, -4));
  if (code.slice(-4) !== expected)
    return { valid: false, fields, error: `CRC mismatch, expected ${expected}` };
  return { valid: true, fields };
}
