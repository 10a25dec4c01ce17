// Mean time per PIX QR image: our renderQrPng (@seller-api/qr, packages/qr/src/png.ts) against
// qrcode.toBuffer, on a typical BR Code. Needs the compiled service and the packages it uses:
//   npx turbo run build --filter=@seller-api/payments && node bench/create-order/qr.mjs [iterations]
// Wall time is what a request waits; CPU time (process-wide) is steadier when the box is busy.
// run.mjs imports `measureQr` to report the same figures with fewer iterations.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

// Resolve from the payments package: its dependency @seller-api/qr, and `qrcode` (the QR package's
// devDependency, in the root node_modules).
const require = createRequire(new URL('../../services/payments/package.json', import.meta.url));
const QRCode = require('qrcode');
const { renderQrPng, qrMatrix } = require('@seller-api/qr');
const { buildStaticBrCode } = require('./dist/domain/brcode.js');

// A typical sandbox charge: UUID key, amount, name, city, 25-character txid.
export const text = buildStaticBrCode({
  pixKey: '123e4567-e12b-12d1-a456-426655440000',
  amountCents: 15000,
  merchantName: 'Fulano de Tal',
  merchantCity: 'BRASILIA',
  txid: '7f3a9c2e1b4d4e8f9a0b1c2d3e',
});

// `await` only for the async ones, so the sync ones are not charged a microtask each.
async function measure(fn, isAsync, iterations, warmup) {
  const run = isAsync
    ? async (n) => {
        for (let i = 0; i < n; i++) await fn();
      }
    : async (n) => {
        for (let i = 0; i < n; i++) fn();
      };
  await run(warmup);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run(iterations);
  const wallUs = ((performance.now() - start) * 1000) / iterations;
  const used = process.cpuUsage(cpu);
  return { wallUs, cpuUs: (used.user + used.system) / iterations };
}

const toBufferScale6 = { errorCorrectionLevel: 'M', margin: 4, scale: 6 };
// [name, fn, isAsync, image for its size or null]
const CASES = [
  ['renderQrPng (scale 6)', () => renderQrPng(text), false, () => renderQrPng(text)],
  ['  of which qrMatrix', () => qrMatrix(text), false, null],
  ['QRCode.create, for reference', () => QRCode.create(text, { errorCorrectionLevel: 'M' }), false, null],
  ['qrcode.toBuffer (defaults)', () => QRCode.toBuffer(text), true, () => QRCode.toBuffer(text)],
  [
    'qrcode.toBuffer (scale 6)',
    () => QRCode.toBuffer(text, toBufferScale6),
    true,
    () => QRCode.toBuffer(text, toBufferScale6),
  ],
];

/**
 * Mean wall and CPU time per call of each case (all of them, or those named in `only`), in µs, with
 * the image's width and size for those that make one. `onResult` sees each as soon as it is measured.
 */
export async function measureQr({ iterations, warmup, only, onResult }) {
  const results = [];
  for (const [name, fn, isAsync, image] of CASES) {
    if (only && !only.includes(name.trim())) continue;
    const png = image ? await image() : null;
    const r = { name, ...(await measure(fn, isAsync, iterations, warmup)) };
    if (png) Object.assign(r, { width: png.readUInt32BE(16), bytes: png.length });
    results.push(r);
    onResult?.(r);
  }
  return results;
}

export function formatResult(r) {
  const image = r.width ? `   ${r.width} px, ${r.bytes} B` : '';
  return `${r.name.padEnd(30)} wall ${r.wallUs.toFixed(1).padStart(8)} µs   cpu ${r.cpuUs.toFixed(1).padStart(8)} µs${image}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const iterations = Number(process.argv[2] ?? 2000);
  // Long enough for the optimising compiler to be done, or its threads show up in the CPU time.
  const warmup = Math.max(1000, Math.floor(iterations / 2));
  console.log(`BR Code of ${text.length} characters; ${iterations} iterations after ${warmup} of warm-up`);
  const results = await measureQr({ iterations, warmup, onResult: (r) => console.log(formatResult(r)) });
  const [ours, , , defaults, scale6] = results;
  const factor = (them, key) => (them[key] / ours[key]).toFixed(1);
  console.log(
    `speed-up vs toBuffer (defaults): ${factor(defaults, 'wallUs')}x wall, ${factor(defaults, 'cpuUs')}x cpu`,
  );
  console.log(
    `speed-up vs toBuffer (scale 6):  ${factor(scale6, 'wallUs')}x wall, ${factor(scale6, 'cpuUs')}x cpu`,
  );
}
