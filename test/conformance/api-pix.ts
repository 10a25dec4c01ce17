import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { PspPixNotification, PspPixPayment } from '@seller-api/contracts';
import {
  API_PIX_CHARGE_SCOPES,
  bacenApiPix,
  type BacenApiPixAdapter,
  type BacenApiPixOptions,
} from '../../services/payments/src/clients/bacen-api-pix';
import { parseBrCode } from '../../services/payments/src/domain/brcode';
import type { PspChargeInput, PspRefund } from '../../services/payments/src/domain/psp';

/*
 * The charge adapter checked against the Central Bank's API Pix OpenAPI document itself
 * (packages/api-pix/spec/openapi.yaml, 2.9.0; packages/api-pix/spec/README.md says how): the adapter
 * runs over real HTTP against a local capture server; every request it makes is validated against its
 * operation in the spec (method, path parameters, body, token form) with a JSON Schema validator, the
 * spec's regular expressions anchored; every example answer the spec gives for the operations we use is
 * fed back to the adapter; the spec's callback (webhook) examples go through our notification schema.
 *
 * The spec's own examples break its schemas in a few places. Those known defects are listed in
 * SPEC_DEFECTS, each matched precisely: an example is accepted when every schema error it has is one of
 * them, and a defect that no longer shows up is reported (so the list shrinks when the spec is fixed).
 */

export const SPEC_PATH = path.join(__dirname, '../../packages/api-pix/spec/openapi.yaml');

export interface ConformanceRow {
  operation: string;
  requests: number;
  examples: number;
  /** `ok`, `not API Pix`, or the failures. */
  result: string;
}

export interface ConformanceReport {
  version: string;
  rows: ConformanceRow[];
  failures: string[];
  /** The known defects of the spec that its examples still show (see SPEC_DEFECTS). */
  defectsSeen: string[];
}

// ---------------------------------------------------------------------------------------------------
// The spec's known defects
// ---------------------------------------------------------------------------------------------------

interface SpecDefect {
  id: string;
  why: string;
  /** True for a schema error of an example that this defect explains. */
  explains?: (example: string, error: ErrorObject) => boolean;
}

/**
 * Where API Pix 2.9.0 contradicts itself. The schema fixes (PATTERN_FIXES) are applied before any
 * validation; the others tolerate an example that breaks its own schema in exactly that way.
 */
export const SPEC_DEFECTS: readonly SpecDefect[] = [
  {
    id: 'unanchored-patterns',
    why: 'Every `pattern` is unanchored (`[a-zA-Z0-9]{26,35}` matches inside a longer string): anchored here with ^(?:...)$.',
  },
  {
    id: 'cpf-pattern-slashes',
    why: 'PessoaFisica.cpf (and the cpf query filters) are written "/^\\d{11}$/", JavaScript slashes included, which matches no CPF: read as ^\\d{11}$.',
  },
  {
    id: 'loc-without-criacao-txid',
    why: 'cobResponse1/5/6/7 have `loc` without `criacao` (required by PayloadLocation) nor `txid` (required by CobGerada.loc).',
    explains: (_example, error) =>
      error.instancePath === '/loc' &&
      error.keyword === 'required' &&
      ['criacao', 'txid'].includes(String(error.params.missingProperty)),
  },
  {
    id: 'location-without-scheme',
    why: '`location` is declared `format: uri`, but API Pix writes it without a scheme ("pix.example.com/qr/..."), as every example does: no URI by RFC 3986.',
    explains: (_example, error) =>
      /^(\/loc)?\/location$/.test(error.instancePath) && error.keyword === 'format',
  },
  {
    id: 'pixWebhook1-devolucoes-object',
    why: 'pixWebhook1 has `devolucoes` as one object; Pix.devolucoes is an array.',
    explains: (example, error) =>
      example === 'pixWebhook1' && error.instancePath === '/pix/0/devolucoes' && error.keyword === 'type',
  },
  {
    id: 'pixResponse-e2eid-34',
    why: 'pixResponse2 and pixResponse3 have end-to-end ids of 34 characters; EndToEndId is exactly 32.',
    explains: (example, error) =>
      /^pixResponse[23]$/.test(example) &&
      error.instancePath === '/pix/0/endToEndId' &&
      ['maxLength', 'pattern'].includes(error.keyword),
  },
];

/** What an example needs before our schema can read it, for the defects that change its shape. */
function repairExample(name: string, item: Record<string, unknown>): Record<string, unknown> {
  // (`devolucoes` as one object, pixWebhook1's, needs no repair: our schema reads it as one refund.)
  const repaired = { ...item };
  const e2e = repaired.endToEndId;
  if (/^pixResponse[23]$/.test(name) && typeof e2e === 'string') repaired.endToEndId = e2e.slice(0, 32);
  return repaired;
}

// ---------------------------------------------------------------------------------------------------
// The spec, its schemas anchored
// ---------------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

export interface Spec {
  version: string;
  doc: Json;
  ajv: Ajv;
  validator(ref: string): ValidateFunction;
  /** Follows a local `$ref` (`#/components/...`), as deep as it goes. */
  deref<T = Json>(node: unknown): T;
}

/** `pattern` as the spec means it: the whole value, JavaScript slashes dropped. */
export function anchorPattern(pattern: string): string {
  const slashed = /^\/(.*)\/$/.exec(pattern);
  const body = slashed?.[1] ?? pattern;
  const bare = body.replace(/^\^/, '').replace(/\$$/, '');
  return `^(?:${bare})$`;
}

function anchorAll(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(anchorAll);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    // `example`/`examples` are data, not schemas.
    if (key === 'example' || key === 'examples') out[key] = value;
    else if (key === 'pattern' && typeof value === 'string') out[key] = anchorPattern(value);
    else out[key] = anchorAll(value);
  }
  return out;
}

export function loadSpec(file = SPEC_PATH): Spec {
  const doc = parseYaml(readFileSync(file, 'utf8')) as Json;
  const info = doc.info as { version: string };
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const int = (bits: number) => (n: number) =>
    Number.isInteger(n) && n >= -(2 ** (bits - 1)) && n < 2 ** (bits - 1);
  ajv.addFormat('int32', { type: 'number', validate: int(32) });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addSchema({ components: anchorAll(doc.components) }, 'spec');
  const compiled = new Map<string, ValidateFunction>();
  const deref = <T = Json>(node: unknown): T => {
    let current = node as Json;
    while (current && typeof current.$ref === 'string') {
      const parts = current.$ref.replace(/^#\//, '').split('/');
      current = parts.reduce<Json>((at, part) => at[part.replace(/~1/g, '/')] as Json, doc);
    }
    return current as T;
  };
  return {
    version: info.version,
    doc,
    ajv,
    deref,
    validator(ref) {
      let validate = compiled.get(ref);
      if (!validate) {
        validate = ajv.compile({ $ref: `spec${ref.startsWith('#') ? ref : `#${ref}`}` });
        compiled.set(ref, validate);
      }
      return validate;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// A capture server: answers what the scenario says, keeps every request
// ---------------------------------------------------------------------------------------------------

export interface Captured {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export type Answer = { status: number; body: unknown };

export interface CaptureServer {
  url: string;
  requests: Captured[];
  /** The answer of the next API call (not token requests); the default is a 500. */
  answer(next: Answer): void;
  close(): Promise<void>;
}

export async function startCaptureServer(): Promise<CaptureServer> {
  const requests: Captured[] = [];
  let next: Answer | null = null;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const captured = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(captured);
      const answer =
        captured.path === '/oauth/token'
          ? {
              status: 200,
              body: { access_token: 'conformance-token', token_type: 'Bearer', expires_in: 3600 },
            }
          : (next ?? { status: 500, body: { title: 'no answer scripted' } });
      if (captured.path !== '/oauth/token') next = null;
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer(value) {
      next = value;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------------

export const API_BASE = '/api/v2';

/** One operation of the spec as we call it: its path template and method. */
export interface Operation {
  name: string;
  template: string;
  method: 'put' | 'get' | 'patch';
}

export const COB: Operation = { name: 'PUT /cob/{txid}', template: '/cob/{txid}', method: 'put' };
export const REFUND: Operation = {
  name: 'PUT /pix/{e2eid}/devolucao/{id}',
  template: '/pix/{e2eid}/devolucao/{id}',
  method: 'put',
};
export const REFUND_GET: Operation = { ...REFUND, name: 'GET /pix/{e2eid}/devolucao/{id}', method: 'get' };

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`).join('; ');
}

/** The problems of one captured request against its operation: method, path parameters, body. */
export function checkRequest(spec: Spec, operation: Operation, request: Captured): string[] {
  const problems: string[] = [];
  const item = spec.deref<Json>((spec.doc.paths as Json)[operation.template]);
  const op = spec.deref<Json>(item[operation.method]);
  if (request.method !== operation.method.toUpperCase()) problems.push(`method ${request.method}`);
  const names: string[] = [];
  const pattern = operation.template.replace(/\{(\w+)\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/?]+)';
  });
  const match = new RegExp(`^${API_BASE}${pattern}$`).exec(request.path);
  if (!match) return [...problems, `path ${request.path} is not ${operation.template}`];
  const parameters = [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])].map(
    (p) => spec.deref<{ name: string; in: string; schema: Json }>(p),
  );
  names.forEach((name, i) => {
    const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
    const value = decodeURIComponent(match[i + 1] ?? '');
    if (!parameter) return problems.push(`path parameter ${name} is not in the spec`);
    const validate = spec.ajv.compile(anchorAll(refToSpec(parameter.schema)) as Json);
    if (!validate(value))
      problems.push(`path parameter ${name}=${value}: ${describeErrors(validate.errors)}`);
  });
  const requestBody = op.requestBody ? spec.deref<Json>(op.requestBody) : null;
  if (requestBody) {
    const schema = ((requestBody.content as Json)['application/json'] as Json).schema as Json;
    if (!/^application\/json\b/.test(String(request.headers['content-type']))) {
      problems.push(`content-type ${String(request.headers['content-type'])}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      return [...problems, 'body is not JSON'];
    }
    const validate = spec.ajv.compile(anchorAll(refToSpec(schema)) as Json);
    if (!validate(body)) problems.push(`body: ${describeErrors(validate.errors)}`);
  } else if (request.body !== '') {
    problems.push('a body where the operation takes none');
  }
  if (!/^Bearer \S+$/.test(String(request.headers.authorization))) problems.push('no bearer token');
  return problems;
}

/** `$ref: '#/...'` made to point into the schema registered as `spec`. */
function refToSpec(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(refToSpec);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? `spec${value}` : refToSpec(value);
  }
  return out;
}

/** The token request as OAuth2 client credentials with the scopes the operations need. */
export function checkTokenRequest(spec: Spec, request: Captured, operations: Operation[]): string[] {
  const problems: string[] = [];
  const schemes = (spec.doc.components as Json).securitySchemes as Json;
  const flow = ((schemes.OAuth2 as Json).flows as Json).clientCredentials as { scopes: Json };
  if (request.method !== 'POST') problems.push(`token request by ${request.method}`);
  if (request.headers['content-type'] !== 'application/x-www-form-urlencoded') {
    problems.push(`token request content-type ${String(request.headers['content-type'])}`);
  }
  if (!/^Basic [A-Za-z0-9+/]+=*$/.test(String(request.headers.authorization))) {
    problems.push('token request without HTTP Basic client authentication');
  }
  const form = new URLSearchParams(request.body);
  if (form.get('grant_type') !== 'client_credentials') problems.push('grant_type is not client_credentials');
  const asked = (form.get('scope') ?? '').split(' ').filter(Boolean);
  for (const scope of asked) if (!(scope in flow.scopes)) problems.push(`scope ${scope} is not in the spec`);
  for (const operation of operations) {
    const item = spec.deref<Json>((spec.doc.paths as Json)[operation.template]);
    const security = (spec.deref<Json>(item[operation.method]).security ?? []) as Json[];
    for (const needed of security.flatMap((s) => (s.OAuth2 as string[] | undefined) ?? [])) {
      if (!asked.includes(needed)) problems.push(`no scope ${needed} for ${operation.name}`);
    }
  }
  return problems;
}

/** The example answers of an operation's response, by name (e.g. cobResponse1). */
export function responseExamples(
  spec: Spec,
  operation: Operation,
  status: string,
): [string, unknown, string][] {
  const item = spec.deref<Json>((spec.doc.paths as Json)[operation.template]);
  const response = spec.deref<Json>((spec.deref<Json>(item[operation.method]).responses as Json)[status]);
  const media = (response.content as Json)['application/json'] as Json;
  const schema = String((media.schema as Json).$ref);
  return Object.values(media.examples as Json).map((ref) => {
    const name = String((ref as Json).$ref)
      .split('/')
      .pop() as string;
    return [name, spec.deref<{ value: unknown }>(ref).value, schema];
  });
}

/** The problems of an example against its schema that no known defect explains, and the defects seen. */
export function checkExample(
  spec: Spec,
  name: string,
  value: unknown,
  ref: string,
  seen: Set<string>,
): string[] {
  const validate = spec.validator(ref);
  if (validate(value)) return [];
  const unexplained: ErrorObject[] = [];
  for (const error of validate.errors ?? []) {
    // oneOf/anyOf summaries follow from their branches' errors.
    if (['oneOf', 'anyOf', 'if'].includes(error.keyword)) continue;
    const defect = SPEC_DEFECTS.find((d) => d.explains?.(name, error));
    if (defect) seen.add(defect.id);
    else unexplained.push(error);
  }
  return unexplained.length === 0 ? [] : [`${name} against ${ref}: ${describeErrors(unexplained)}`];
}

function expectedRefund(example: unknown): PspRefund {
  const { status, motivo } = example as { status: string; motivo?: string };
  const mapped = { DEVOLVIDO: 'REFUNDED', EM_PROCESSAMENTO: 'PROCESSING', NAO_REALIZADO: 'FAILED' } as const;
  return {
    status: mapped[status as keyof typeof mapped],
    reason: status === 'NAO_REALIZADO' ? (motivo ?? null) : null,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

// ---------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------

const E2E = 'E12345678202009091221abcdef12345';

/** Charges that cover the request's variants: CPF, CNPJ (alphanumeric too), none, long texts, bounds. */
function chargeInputs(now: number): PspChargeInput[] {
  const txid = (seed: string) => seed.repeat(35).slice(0, 35);
  return [
    {
      txid: txid('a1'),
      amountCents: 15000,
      expiresAt: new Date(now + 3600_000),
      debtorName: 'Maria Silva',
      debtorDocument: '529.982.247-25',
    },
    {
      txid: txid('B2'),
      amountCents: 1,
      expiresAt: new Date(now + 60_000),
      debtorName: 'Empresa SA',
      debtorDocument: '11.222.333/0001-81',
      description: 'Pedido 42',
    },
    {
      txid: txid('c3d'),
      amountCents: 999_999_999_999,
      expiresAt: new Date(now - 5000),
      debtorName: 'Loja',
      debtorDocument: '12.ABC.345/01DE-35',
    },
    {
      txid: 'x'.repeat(26),
      amountCents: 4250,
      expiresAt: new Date(now + 2 ** 42),
      debtorName: null,
      debtorDocument: null,
    },
    {
      txid: txid('Z9'),
      amountCents: 100,
      expiresAt: new Date(now + 86_400_000),
      debtorName: `${'N'.repeat(199)}😀 e mais`,
      debtorDocument: '52998224725',
      description: `${'d'.repeat(139)}🎉 e mais`,
    },
  ];
}

/** The adapter under test, pointed at a capture server. */
export function conformanceAdapter(
  serverUrl: string,
  scopes: BacenApiPixOptions['scopes'],
): BacenApiPixAdapter {
  return bacenApiPix({
    apiUrl: `${serverUrl}${API_BASE}`,
    tokenUrl: `${serverUrl}/oauth/token`,
    clientId: 'conformance',
    clientSecret: 'conformance-secret',
    scopes,
    pixKey: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
    merchantName: 'Loja Conformidade',
    merchantCity: 'Brasilia',
    timeoutMs: 5000,
  });
}

/** Adds an operation's row to the table, and its problems to the failures. */
export function rowRecorder(rows: ConformanceRow[], failures: string[]) {
  return (operation: string, requests: number, examples: number, problems: string[]): void => {
    rows.push({
      operation,
      requests,
      examples,
      result: problems.length === 0 ? 'ok' : `FAIL (${problems.length})`,
    });
    failures.push(...problems.map((p) => `${operation}: ${p}`));
  };
}

export async function runApiPixConformance(file = SPEC_PATH): Promise<ConformanceReport> {
  const spec = loadSpec(file);
  const server = await startCaptureServer();
  const seen = new Set<string>();
  const rows: ConformanceRow[] = [];
  const failures: string[] = [];
  const psp = conformanceAdapter(server.url, API_PIX_CHARGE_SCOPES);
  const row = rowRecorder(rows, failures);
  /** Runs one call, returning its value or the problem it raised. */
  const attempt = async <T>(
    what: string,
    run: () => Promise<T>,
  ): Promise<{ value?: T; problem?: string }> => {
    try {
      return { value: await run() };
    } catch (err) {
      return { problem: `${what}: ${(err as Error).message}` };
    }
  };

  try {
    // PUT /cob/{txid}: our requests, then the spec's example answers.
    {
      const problems: string[] = [];
      let requests = 0;
      const now = Date.now();
      for (const input of chargeInputs(now)) {
        const location = 'pix.example.com/qr/9d36b84fc70b478fb95c12729b90ca25';
        server.answer({ status: 201, body: { txid: input.txid, location } });
        const from = server.requests.length;
        const result = await attempt(`createCharge ${input.txid}`, () => psp.createCharge(input));
        if (result.problem) problems.push(result.problem);
        for (const request of server.requests.slice(from).filter((r) => r.path !== '/oauth/token')) {
          requests += 1;
          problems.push(...checkRequest(spec, COB, request).map((p) => `request ${input.txid}: ${p}`));
        }
      }
      let examples = 0;
      for (const [name, value, ref] of responseExamples(spec, COB, '201')) {
        problems.push(...checkExample(spec, name, value, ref, seen));
        const cob = value as {
          txid: string;
          valor: { original: string };
          location?: string;
          loc?: { location?: string };
        };
        const cents = Math.round(Number(cob.valor.original) * 100) || 100;
        const input: PspChargeInput = {
          txid: cob.txid,
          amountCents: cents,
          expiresAt: new Date(Date.now() + 3600_000),
          debtorName: null,
          debtorDocument: null,
        };
        server.answer({ status: 201, body: value });
        const result = await attempt(`example ${name}`, () => psp.createCharge(input));
        examples += 1;
        if (result.problem) {
          problems.push(result.problem);
          continue;
        }
        const expected = cob.location ?? cob.loc?.location;
        const code = parseBrCode(result.value?.copyAndPaste ?? '');
        const account = code.fields['26'] as Record<string, string> | undefined;
        if (result.value?.location !== expected || !code.valid || account?.['25'] !== expected) {
          problems.push(`example ${name}: the BR Code does not point at ${String(expected)}`);
        }
      }
      row(COB.name, requests, examples, problems);
    }

    // PUT /pix/{e2eid}/devolucao/{id}
    {
      const problems: string[] = [];
      let requests = 0;
      const refunds = [
        { endToEndId: E2E, refundId: 'D0123456789abcdef0123456789abcdef', amountCents: 789 },
        { endToEndId: E2E, refundId: `L${E2E}`.slice(0, 35), amountCents: 15000 },
        { endToEndId: E2E, refundId: '1', amountCents: 999_999_999_999 },
      ];
      for (const refund of refunds) {
        server.answer({
          status: 201,
          body: {
            id: refund.refundId,
            rtrId: 'D12345678202009091000abcde123456',
            valor: '7.89',
            horario: { solicitacao: '2020-09-11T15:25:59.411Z' },
            status: 'DEVOLVIDO',
          },
        });
        const from = server.requests.length;
        const result = await attempt(`refund ${refund.refundId}`, () => psp.refund(refund));
        if (result.problem) problems.push(result.problem);
        for (const request of server.requests.slice(from).filter((r) => r.path !== '/oauth/token')) {
          requests += 1;
          problems.push(
            ...checkRequest(spec, REFUND, request).map((p) => `request ${refund.refundId}: ${p}`),
          );
        }
      }
      let examples = 0;
      for (const [name, value, ref] of responseExamples(spec, REFUND, '201')) {
        problems.push(...checkExample(spec, name, value, ref, seen));
        server.answer({ status: 201, body: value });
        const { id } = value as { id: string };
        const result = await attempt(`example ${name}`, () =>
          psp.refund({ endToEndId: E2E, refundId: id, amountCents: 789 }),
        );
        examples += 1;
        if (result.problem) problems.push(result.problem);
        else if (!same(result.value, expectedRefund(value))) {
          problems.push(`example ${name}: read as ${JSON.stringify(result.value)}`);
        }
      }
      row(REFUND.name, requests, examples, problems);
    }

    // GET /pix/{e2eid}/devolucao/{id}
    {
      const problems: string[] = [];
      let requests = 0;
      let examples = 0;
      for (const [name, value, ref] of responseExamples(spec, REFUND_GET, '200')) {
        problems.push(...checkExample(spec, name, value, ref, seen));
        server.answer({ status: 200, body: value });
        const { id } = value as { id: string };
        const from = server.requests.length;
        const result = await attempt(`example ${name}`, () =>
          psp.lookupRefund({ endToEndId: E2E, refundId: id }),
        );
        examples += 1;
        if (result.problem) problems.push(result.problem);
        else if (!same(result.value, expectedRefund(value))) {
          problems.push(`example ${name}: read as ${JSON.stringify(result.value)}`);
        }
        for (const request of server.requests.slice(from).filter((r) => r.path !== '/oauth/token')) {
          requests += 1;
          problems.push(...checkRequest(spec, REFUND_GET, request).map((p) => `request ${id}: ${p}`));
        }
      }
      server.answer({ status: 404, body: { title: 'Não encontrado', status: 404 } });
      const missing = await attempt('lookupRefund 404', () =>
        psp.lookupRefund({ endToEndId: E2E, refundId: 'D404' }),
      );
      requests += 1;
      if (missing.problem) problems.push(missing.problem);
      else if (missing.value !== null) problems.push('a 404 is not read as no refund');
      row(REFUND_GET.name, requests, examples, problems);
    }

    // The token: every token request made above.
    {
      const tokens = server.requests.filter((r) => r.path === '/oauth/token');
      const problems = tokens.flatMap((request) =>
        checkTokenRequest(spec, request, [COB, REFUND, REFUND_GET]),
      );
      if (tokens.length === 0) problems.push('no token request');
      row('POST {tokenUrl} (OAuth2 client credentials)', tokens.length, 0, problems);
    }

    // The callback (webhook) the PSP POSTs to {webhookUrl}/pix, through our notification schema.
    {
      const problems: string[] = [];
      const callbacks = (spec.deref<Json>((spec.doc.paths as Json)['/webhook/{chave}']).put as Json)
        .callbacks as Json;
      const post = ((callbacks.listaPix as Json)['{$request.body#/webhookUrl}/pix'] as Json).post as Json;
      const body = spec.deref<Json>(post.requestBody);
      const media = (body.content as Json)['application/json'] as Json;
      const listed = ((media.schema as Json).properties as Json).pix as Json;
      // The callback's own examples (pixWebhook1/2), and the Pix answers (pixResponse1/2/3): the same schema.
      const names = [
        ...((listed.example as Json[]) ?? []).flatMap((entry) =>
          ((entry.allOf as Json[]) ?? []).map((part) => String(part.$ref).split('/')[3] as string),
        ),
        ...responseExamples(
          spec,
          { name: 'GET /pix/{e2eid}', template: '/pix/{e2eid}', method: 'get' },
          '200',
        ).map(([name]) => name),
      ];
      const envelopeSchema = refToSpec(anchorAll(media.schema)) as Json;
      const validateEnvelope = spec.ajv.compile(envelopeSchema);
      for (const name of names) {
        const item = spec.deref<{ value: Json }>(
          ((spec.doc.components as Json).examples as Json)[name],
        ).value;
        const envelope = { pix: [item] };
        if (!validateEnvelope(envelope)) {
          const unexplained = (validateEnvelope.errors ?? []).filter((error) => {
            if (['oneOf', 'anyOf'].includes(error.keyword)) return false;
            const defect = SPEC_DEFECTS.find((d) => d.explains?.(name, error));
            if (defect) seen.add(defect.id);
            return !defect;
          });
          if (unexplained.length > 0)
            problems.push(`${name} against the callback body: ${describeErrors(unexplained)}`);
        }
        const ours = PspPixNotification.safeParse({ pix: [repairExample(name, item)] });
        const payment = ours.success ? PspPixPayment.safeParse(ours.data.pix[0]) : null;
        if (!ours.success || !payment?.success) {
          const issues = (ours.success ? payment?.error?.issues : ours.error.issues) ?? [];
          problems.push(
            `${name} refused by PspPixNotification: ${issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
          );
        }
      }
      row('POST {webhookUrl}/pix (callback, our PspPixNotification)', 0, names.length, problems);
    }

    rows.push({
      operation: 'PUT/GET /pix/envio/{idEnvio} (payouts)',
      requests: 0,
      examples: 0,
      result: 'not API Pix',
    });
    for (const defect of SPEC_DEFECTS) {
      if (defect.explains && !seen.has(defect.id)) {
        failures.push(`known spec defect ${defect.id} no longer shows: drop it from SPEC_DEFECTS`);
      }
    }
  } finally {
    await psp.close();
    await server.close();
  }
  return { version: spec.version, rows, failures, defectsSeen: [...seen] };
}

/** The report as a plain-text table. */
export function formatConformance(report: ConformanceReport): string {
  const header = ['operation', 'requests validated', 'examples parsed', 'result'];
  const lines = report.rows.map((r) => [r.operation, String(r.requests), String(r.examples), r.result]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join(' | ')
      .trimEnd();
  return [
    `API Pix ${report.version} conformance (packages/api-pix/spec/openapi.yaml)`,
    fmt(header),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...lines.map(fmt),
    `spec defects worked around: ${SPEC_DEFECTS.filter(
      (d) => !d.explains || report.defectsSeen.includes(d.id),
    )
      .map((d) => d.id)
      .join(', ')}`,
    ...report.failures.map((f) => `FAIL ${f}`),
  ].join('\n');
}
