import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { WEBHOOK_VECTORS } from '../support/webhook-vectors';

/*
 * @seller-api/webhook-verify is installed from the tarball `npm run pack:webhook-verify` writes
 * (docs/webhooks.md, "Node.js (Express) with @seller-api/webhook-verify"): packed, installed offline
 * into an empty project with an empty npm cache (so it needs nothing from a registry), then used as
 * receivers use it, from CommonJS, ES modules and TypeScript.
 */

const ROOT = path.resolve(__dirname, '../..');
const PACKAGE = '@seller-api/webhook-verify';

let work: string;
let tarball: string;
let project: string;

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')}: exit ${result.status}\n${result.stderr}\n${result.stdout}`,
    );
  }
  return result.stdout;
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'webhook-verify-pack-'));
  const out = run('npm', ['run', '--silent', 'pack:webhook-verify', '--', path.join(work, 'packed')], ROOT);
  tarball = out.trim().split('\n').at(-1) as string;
  project = path.join(work, 'receiver');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'receiver', private: true }));
  run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--cache', path.join(work, 'cache'), tarball],
    project,
  );
}, 120_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const installed = () => path.join(project, 'node_modules', PACKAGE);

describe('the packed verification package', () => {
  it('holds compiled JS, types, source, README and LICENSE, and depends on nothing', () => {
    expect(tarball).toBe(path.join(work, 'packed', 'seller-api-webhook-verify-0.1.0.tgz'));
    const files = run('tar', ['tzf', tarball], work).trim().split('\n').sort();
    expect(files).toEqual(
      [
        'package/LICENSE',
        'package/README.md',
        'package/dist/index.d.ts',
        'package/dist/index.js',
        'package/dist/index.js.map',
        'package/package.json',
        'package/src/index.ts',
      ].sort(),
    );
    const manifest = JSON.parse(readFileSync(path.join(installed(), 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      name: PACKAGE,
      main: 'dist/index.js',
      types: 'dist/index.d.ts',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    });
    expect(manifest).not.toHaveProperty('dependencies');
    expect(manifest).not.toHaveProperty('peerDependencies');
  });

  it.each(WEBHOOK_VECTORS.map((v) => [v.name, v] as const))(
    'verifies the shared vector %s from CommonJS and ES modules',
    (_name, vector) => {
      const check = (api: string) => `
        const vector = ${JSON.stringify(vector)};
        const headers = {
          'x-webhook-event-id': vector.eventId,
          'x-webhook-timestamp': String(vector.timestamp),
          'x-webhook-signature': vector.signature,
        };
        const { verifyWebhook, signatureFor, standardSignatureFor, WebhookVerificationError } = ${api};
        const now = vector.timestamp * 1000;
        const delivery = verifyWebhook({ secret: vector.secret, headers, rawBody: Buffer.from(vector.body), now });
        let refused = 'accepted';
        try {
          verifyWebhook({ secret: vector.secret, headers, rawBody: vector.body.replace('"delivery_attempt":', '"delivery_attempt": '), now });
        } catch (error) {
          refused = error instanceof WebhookVerificationError ? error.code : String(error);
        }
        console.log(JSON.stringify({
          eventId: delivery.eventId,
          event: delivery.event,
          signature: signatureFor(vector.secret, vector.eventId, vector.timestamp, vector.body),
          standard: standardSignatureFor(vector.secret, vector.eventId, vector.timestamp, vector.body),
          refused,
        }));`;
      writeFileSync(path.join(project, 'check.cjs'), check(`require('${PACKAGE}')`));
      writeFileSync(path.join(project, 'check.mjs'), `import * as api from '${PACKAGE}';\n${check('api')}`);
      const expected = {
        eventId: vector.eventId,
        event: (JSON.parse(vector.body) as { event: string }).event,
        signature: vector.signature,
        standard: vector.standardSignature,
        // One added space changes the bytes, so the signature no longer matches.
        refused: 'invalid_signature',
      };
      for (const file of ['check.cjs', 'check.mjs']) {
        expect(JSON.parse(run(process.execPath, [file], project))).toEqual(expected);
      }
    },
  );

  it('gives TypeScript receivers its types', () => {
    const ok = `import { verifyWebhook, WebhookVerificationError } from '${PACKAGE}';
      const delivery = verifyWebhook<{ order: { uuid: string } }>({ secret: 'whsec_x', headers: {}, rawBody: '' });
      const id: string = delivery.eventId;
      const uuid: string = delivery.data.order.uuid;
      const code: string = new WebhookVerificationError('invalid_body', 'no').code;
      export { id, uuid, code };`;
    const wrong = `import { verifyWebhook } from '${PACKAGE}';
      const attempt: string = verifyWebhook({ secret: 'whsec_x', headers: {}, rawBody: '' }).deliveryAttempt;
      export { attempt };`;
    const files = { ok: path.join(project, 'ok.ts'), wrong: path.join(project, 'wrong.ts') };
    writeFileSync(files.ok, ok);
    writeFileSync(files.wrong, wrong);
    // One program for both files: loading Node's types is most of the cost.
    const program = ts.createProgram(Object.values(files), {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
    });
    const problems = (file: string) =>
      ts
        .getPreEmitDiagnostics(program, program.getSourceFile(file))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems(files.ok)).toEqual([]);
    expect(problems(files.wrong)).toEqual([
      expect.stringContaining("'number' is not assignable to type 'string'"),
    ]);
  });
});
