// How many PIX QR codes one core encodes per second, and how big their PNGs are: @seller-api/qr
// alone (packages/qr), no service, no database. For three typical BR Codes it times the module matrix
// (qrMatrix), the PNG (renderQrPng, the default scale 6 and quiet zone 4, as payments draws it) and
// the base64 that `pix.qr_code_image_base64` carries (renderQrPngBase64).
//
//   npm run bench:qr                      builds packages/qr, then runs this
//   BENCH_DURATION=5 node bench/qr/run.mjs
//
// BENCH_DURATION (default 2) is the seconds measured per case, after BENCH_WARMUP (default 1) seconds
// of unmeasured calls. Encodes/s is over wall time, on one thread; CPU µs per encode (process-wide)
// is steadier when the machine is busy. A report, not a test: no target, exit 0.
// bench/create-order/qr.mjs times the same renderer against qrcode.toBuffer.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const { qrMatrix, renderQrPng, renderQrPngBase64 } = require('@seller-api/qr');

function secondsFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 60) {
    console.error(`${name} must be a number of seconds in (0, 60], got "${raw}"`);
    process.exit(1);
  }
  return value;
}
const DURATION = secondsFromEnv('BENCH_DURATION', 2);
const WARMUP = secondsFromEnv('BENCH_WARMUP', 1);

// BR Codes as payments builds them (the same as packages/qr/src/golden.test.ts pins).
const BR_CODES = [
  [
    'dynamic (location)',
    '00020101021226520014br.gov.bcb.pix2530pix.example.com/qr/v2/9d36b84f5204000053039865802BR5904Loja6006Recife62070503***63042B13',
  ],
  [
    'static (key, amount, txid)',
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406150.005802BR5913Fulano de Tal6008BRASILIA622905257f3a9c2e1b4d4e8f9a0b1c2d3630421C7',
  ],
  [
    'static, long (description)',
    '00020126990014br.gov.bcb.pix0134financeiro+pix@loja-exemplo.com.br0239Pedido 8f0e2d9c-4b1a-4e7f-9a3b-2c1d0e9f52040000530398654139999999999.995802BR5925Comercio de Utilidades Do6015Sao Jose dos Ca62290525a1b2c3d4e5f6g7h8i9j0k1l2m6304386C',
  ],
];

/** Calls `fn` for `seconds`, in batches so the clock is read rarely; returns the calls made. */
function runFor(fn, seconds) {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  let batch = 16;
  while (performance.now() < end) {
    for (let i = 0; i < batch; i++) fn();
    calls += batch;
    if (batch < 1024) batch *= 2;
  }
  return calls;
}

function measure(fn) {
  runFor(fn, WARMUP);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const calls = runFor(fn, DURATION);
  const wallS = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { perSecond: calls / wallS, cpuUs: (used.user + used.system) / calls };
}

const rows = [['BR Code', 'chars', 'version', 'step', 'encodes/s', 'cpu µs', 'output']];
for (const [name, text] of BR_CODES) {
  const matrix = qrMatrix(text);
  const png = renderQrPng(text);
  const base64 = renderQrPngBase64(text);
  const cases = [
    ['qrMatrix', () => qrMatrix(text), `${matrix.size}x${matrix.size} modules, mask ${matrix.maskPattern}`],
    ['renderQrPng', () => renderQrPng(text), `${png.readUInt32BE(16)} px, ${png.length} B PNG`],
    ['renderQrPngBase64', () => renderQrPngBase64(text), `${base64.length} B base64`],
  ];
  cases.forEach(([step, fn, output], i) => {
    const r = measure(fn);
    rows.push([
      i === 0 ? name : '',
      i === 0 ? String(text.length) : '',
      i === 0 ? String(matrix.version) : '',
      step,
      Math.round(r.perSecond).toLocaleString('en'),
      r.cpuUs.toFixed(1),
      output,
    ]);
  });
}

console.log(`@seller-api/qr, Node ${process.version}: ${DURATION} s per case after ${WARMUP} s of warm-up`);
const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
const numeric = new Set([1, 2, 4, 5]);
for (const row of rows) {
  console.log(
    row
      .map((cell, c) => (numeric.has(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd(),
  );
}
