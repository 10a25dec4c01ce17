const BRL = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' });

/** Integer cents to "R$ 1.234,56". */
export const money = (cents: number) => BRL.format(cents / 100);

const PERCENT = new Intl.NumberFormat('pt-BR', { style: 'percent', maximumFractionDigits: 2 });

/** Integer basis points (1 % = 100, docs/pix.md "Due-date charges") to "2%", "2,5%", "0,03%". */
export const percent = (bps: number) => PERCENT.format(bps / 10_000);

/** A count with Brazilian digit grouping: "1.234". */
export const count = (n: number) => n.toLocaleString('pt-BR');

/** The browser's IANA time zone ("America/Sao_Paulo"): the panel shows times in it. */
export const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

function parts(iso: string, timeZone: string): Record<string, string> {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const out: Record<string, string> = {};
  for (const p of format.formatToParts(new Date(iso))) out[p.type] = p.value;
  return out;
}

/** ISO UTC datetime to "2026-11-23 03:10 UTC": what the API says, shown on hover. */
export const utcText = (iso: string | null | undefined) =>
  iso ? `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—';

/** ISO UTC datetime to "2026-11-23 00:10" in `timeZone` (the browser's by default). */
export function localText(iso: string | null | undefined, timeZone = browserTimeZone()): string {
  if (!iso) return '—';
  const p = parts(iso, timeZone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}

/** A bucket's label on the Home chart: "14h" for an hour, "23/11" for a day, in `timeZone`. */
export function bucketLabel(iso: string, granularity: 'hour' | 'day', timeZone = browserTimeZone()): string {
  const p = parts(iso, timeZone);
  return granularity === 'hour' ? `${p.hour}h` : `${p.day}/${p.month}`;
}

/** "50", "50,5", "1.234,56" or "1234.56" reais to integer cents; null when not an amount. */
export function parseReais(text: string): number | null {
  let s = text.trim().replace(/^R\$\s*/, '');
  if (s.includes(',')) s = s.replace(/\./g, '').replace(',', '.');
  if (!/^\d+(\.\d{1,2})?$/.test(s)) return null;
  const [whole = '0', fraction = ''] = s.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}
