const BRL = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });

/** Integer cents to "R$ 1.234,56". */
export const money = (cents: number) => BRL.format(cents / 100);

/** ISO UTC datetime to "2026-11-23 03:10 UTC": the API speaks UTC, so does the panel. */
export const when = (iso: string | null | undefined) =>
  iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '—';

/** "50", "50,5", "1.234,56" or "1234.56" reais to integer cents; null when not an amount. */
export function parseReais(text: string): number | null {
  let s = text.trim().replace(/^R\$\s*/, '');
  if (s.includes(',')) s = s.replace(/\./g, '').replace(',', '.');
  if (!/^\d+(\.\d{1,2})?$/.test(s)) return null;
  const [whole = '0', fraction = ''] = s.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}
