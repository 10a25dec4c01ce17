import { cleanTaxId, isValidCnpj, isValidCpf, taxIdTypeOf, type TaxIdType } from '@seller-api/contracts';

/** What the Orders search box was given. */
export type SearchQuery =
  | { kind: 'none' }
  | { kind: 'order'; uuid: string }
  | { kind: 'email'; email: string }
  | { kind: 'tax_id'; taxId: string; type: TaxIdType }
  | { kind: 'invalid'; message: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An order's uuid (opened directly), a customer's e-mail, or a CPF/CNPJ typed with or without its
 * punctuation (sent as digits). Anything else is refused here, with what the box takes.
 */
export function classifySearch(text: string): SearchQuery {
  const s = text.trim();
  if (!s) return { kind: 'none' };
  if (UUID.test(s)) return { kind: 'order', uuid: s.toLowerCase() };
  if (s.includes('@')) {
    return EMAIL.test(s)
      ? { kind: 'email', email: s }
      : { kind: 'invalid', message: 'That e-mail address is incomplete, such as ana@example.com.' };
  }
  const clean = cleanTaxId(s);
  const type = taxIdTypeOf(clean);
  if (type === 'CPF')
    return isValidCpf(clean)
      ? { kind: 'tax_id', taxId: clean, type }
      : { kind: 'invalid', message: 'That CPF is not valid: check its digits.' };
  if (type === 'CNPJ')
    return isValidCnpj(clean)
      ? { kind: 'tax_id', taxId: clean, type }
      : { kind: 'invalid', message: 'That CNPJ is not valid: check its digits.' };
  return {
    kind: 'invalid',
    message: 'Search by order id, customer e-mail, or CPF/CNPJ (digits, with or without punctuation).',
  };
}

/** The order list's query parameters for a search. */
export function searchParams(query: SearchQuery): { customer_email?: string; customer_tax_id?: string } {
  if (query.kind === 'email') return { customer_email: query.email };
  if (query.kind === 'tax_id') return { customer_tax_id: query.taxId };
  return {};
}
