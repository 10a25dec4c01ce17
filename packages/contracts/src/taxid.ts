import type { TaxIdType } from './common';

/** Removes the punctuation people type (`.`, `-`, `/`, spaces) and uppercases the letters of a CNPJ. */
export function cleanTaxId(value: string): string {
  return value.replace(/[.\-/\s]/g, '').toUpperCase();
}

/** Mod-11 check digit: remainder under 2 gives 0, otherwise 11 minus the remainder. */
function mod11Digit(sum: number): number {
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

/** One repeated character passes the arithmetic but is never issued, so it is refused. */
export function isRepeated(value: string): boolean {
  return /^(.)\1*$/.test(value);
}

function cpfDigit(digits: string): number {
  // Weights run from length+1 down to 2 (10..2 for the first digit, 11..2 for the second).
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[i]) * (digits.length + 1 - i);
  return mod11Digit(sum);
}

/** `clean` must already be cleaned: exactly 11 digits with both check digits right. */
export function isValidCpf(clean: string): boolean {
  if (!/^\d{11}$/.test(clean) || isRepeated(clean)) return false;
  const first = cpfDigit(clean.slice(0, 9));
  const second = cpfDigit(clean.slice(0, 9) + String(first));
  return clean.slice(9) === `${first}${second}`;
}

/**
 * CNPJ check digit over numeric or alphanumeric bases: each character is worth its char code minus 48
 * ('0'..'9' → 0..9, 'A' → 17 ... 'Z' → 42), weights 2..9 cycle from the right (Receita Federal, 2026).
 */
function cnpjDigit(base: string): number {
  let sum = 0;
  for (let i = 0; i < base.length; i++) {
    const weight = 2 + ((base.length - 1 - i) % 8);
    sum += (base.charCodeAt(i) - 48) * weight;
  }
  return mod11Digit(sum);
}

/** `clean` must already be cleaned: 12 characters [0-9A-Z] then 2 numeric check digits. */
export function isValidCnpj(clean: string): boolean {
  if (!/^[0-9A-Z]{12}\d{2}$/.test(clean) || isRepeated(clean)) return false;
  const first = cnpjDigit(clean.slice(0, 12));
  const second = cnpjDigit(clean.slice(0, 12) + String(first));
  return clean.slice(12) === `${first}${second}`;
}

/** Type by length of a cleaned tax id: 11 digits is a CPF, 14 characters a CNPJ, anything else null. */
export function taxIdTypeOf(clean: string): TaxIdType | null {
  if (/^\d{11}$/.test(clean)) return 'CPF';
  if (/^[0-9A-Z]{14}$/.test(clean)) return 'CNPJ';
  return null;
}

/** Valid CPF or CNPJ (cleaned first), whichever its length says it is. */
export function isValidTaxId(value: string): boolean {
  const clean = cleanTaxId(value);
  const type = taxIdTypeOf(clean);
  if (type === 'CPF') return isValidCpf(clean);
  if (type === 'CNPJ') return isValidCnpj(clean);
  return false;
}
