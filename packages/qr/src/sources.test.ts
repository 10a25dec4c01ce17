import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { create } from 'qrcode';
import * as qr from './index';

/*
 * The package runs on Node alone: its code imports Node's built-ins and its own files, nothing else.
 * `qrcode` is a devDependency, the reference the tests compare with; no deep import of its internals
 * (`qrcode/lib/...`, untyped and free to change in any release) anywhere.
 */
const sources = readdirSync(__dirname).filter((file) => file.endsWith('.ts'));
const specifiers = (file: string): string[] =>
  [
    ...readFileSync(path.join(__dirname, file), 'utf8').matchAll(/(?:from|require\(|import\()\s*'([^']+)'/g),
  ].map((m) => m[1] ?? '');

describe('@seller-api/qr sources', () => {
  it('import only node: built-ins and their own files', () => {
    const code = sources.filter((file) => !file.endsWith('.test.ts'));
    expect(code.length).toBeGreaterThanOrEqual(4);
    const foreign = code.flatMap((file) =>
      specifiers(file)
        .filter((s) => !s.startsWith('node:') && !s.startsWith('./'))
        .map((s) => `${file}: ${s}`),
    );
    expect(foreign).toEqual([]);
  });

  it('reach qrcode, in the tests, through its public entry only', () => {
    const deep = sources.flatMap((file) =>
      specifiers(file)
        .filter((s) => s.startsWith('qrcode/'))
        .map((s) => `${file}: ${s}`),
    );
    expect(deep).toEqual([]);
  });

  it('export the encoder, the PNG and the segments', () => {
    expect(Object.keys(qr).sort()).toEqual([
      'optimalSegments',
      'qrMatrix',
      'renderQrPng',
      'renderQrPngBase64',
      'versionClass',
    ]);
    // What optimalSegments returns is what QRCode.create takes.
    expect(create(qr.optimalSegments('PIX 0123456789 pix', 1), { errorCorrectionLevel: 'M' }).version).toBe(
      1,
    );
  });
});
