import type { PixKeyType } from './common';
import { cleanTaxId, taxIdTypeOf } from './taxid';

/**
 * Masking of personal data in event payloads (docs/events.md, "Masking"). Every function keeps
 * the length of what it hides (one `*` per hidden character) and, on input it does not recognise,
 * hides everything but the edges rather than leak it.
 */

/** Keeps `start` leading and `end` trailing characters; all stars when nothing would stay hidden. */
export function maskMiddle(value: string, start: number, end: number): string {
  if (value.length <= start + end) return '*'.repeat(value.length);
  return value.slice(0, start) + '*'.repeat(value.length - start - end) + value.slice(value.length - end);
}

/** CPF as `123.***.***-00`: first 3 and last 2 digits. */
export function maskCpf(value: string): string {
  const clean = cleanTaxId(value);
  if (!/^\d{11}$/.test(clean)) return maskMiddle(clean, 3, 2);
  return `${clean.slice(0, 3)}.***.***-${clean.slice(9)}`;
}

// CNPJ (numeric or alphanumeric) as 12.3**.***/****-00: first 3 and last 2 characters.
export function maskCnpj(value: string): string {
  const clean = cleanTaxId(value);
  if (!/^[0-9A-Z]{14}$/.test(clean)) return maskMiddle(clean, 3, 2);
  return `${clean.slice(0, 2)}.${clean.slice(2, 3)}**.***/****-${clean.slice(12)}`;
}

/** CPF or CNPJ, whichever the cleaned length says. */
export function maskTaxId(value: string): string {
  const clean = cleanTaxId(value);
  return taxIdTypeOf(clean) === 'CNPJ' ? maskCnpj(clean) : maskCpf(clean);
}

/** Keeps the first 3 characters of the local part (1 when it has 3 or fewer) and the domain. */
export function maskEmail(value: string): string {
  const at = value.lastIndexOf('@');
  const local = at === -1 ? value : value.slice(0, at);
  const domain = at === -1 ? '' : value.slice(at);
  // Literal rule: a local part of 3 or fewer characters keeps one, so a one-character one stays as is.
  const keep = local.length <= 3 ? 1 : 3;
  return local.slice(0, keep) + '*'.repeat(Math.max(0, local.length - keep)) + domain;
}

/** Phone key `+55` + area code + number: keeps `+55`, the area code and the last 4 digits. */
export function maskPhone(value: string): string {
  const match = /^\+55(\d{2})(\d{8,9})$/.exec(value);
  if (!match) return maskMiddle(value, 3, 4);
  const [, area = '', number = ''] = match;
  return `+55${area}${maskMiddle(number, 0, 4)}`;
}

/** Random (EVP) key: keeps the first 4 and last 4 characters. */
export function maskRandomKey(value: string): string {
  return maskMiddle(value, 4, 4);
}

/** PIX key masked according to its type. */
export function maskPixKey(key: string, type: PixKeyType): string {
  switch (type) {
    case 'email':
      return maskEmail(key);
    case 'cpf':
      return maskCpf(key);
    case 'phone':
      return maskPhone(key);
    case 'random':
      return maskRandomKey(key);
  }
}

const SEPARATORS = '[\\s.\\-/()]*';

/** A pattern for a run of digits written with or without separators (`123.456.789-09`, `11 98765-4321`). */
function digitsPattern(digits: string): string {
  return digits.split('').join(SEPARATORS);
}

/**
 * A text from elsewhere (a PSP's refusal, say) with every appearance of this PIX key replaced by its
 * mask: as written, or, for a CPF or a phone, as digits with or without separators (a phone with or
 * without its +55). The text can then be stored and shown where the key itself may not be.
 */
export function redactPixKey(text: string, key: string, type: PixKeyType): string {
  const masked = maskPixKey(key, type);
  const escape = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const patterns = [escape(key)];
  const digits = key.replace(/\D/g, '');
  if (type === 'cpf' && digits.length === 11) patterns.push(digitsPattern(digits));
  if (type === 'phone' && digits.startsWith('55') && digits.length >= 12) {
    patterns.push(`\\+?${digitsPattern(digits)}`, `\\(?${digitsPattern(digits.slice(2))}`);
  }
  // The longest form first, so a match never leaves part of the key behind.
  return text.replace(new RegExp(patterns.join('|'), 'gi'), masked);
}
