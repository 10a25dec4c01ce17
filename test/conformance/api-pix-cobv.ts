import type { ErrorObject } from 'ajv';
import { addDays, todayInSaoPaulo, type DueDateTerms } from '@seller-api/due-date';
import {
  API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
  bacenApiPix,
} from '../../services/payments/src/clients/bacen-api-pix';
import type { DueDateChargeInput } from '../../services/payments/src/clients/bacen-api-pix-cobv';
import { buildDynamicBrCode, parseBrCode } from '../../services/payments/src/domain/brcode';
import { startPspSimulator } from '../support/psp-simulator';
import {
  SPEC_DEFECTS,
  SPEC_PATH,
  checkRequest,
  checkTokenRequest,
  conformanceAdapter,
  type Captured,
  describeErrors,
  loadSpec,
  responseExamples,
  rowRecorder,
  startCaptureServer,
  type ConformanceRow,
  type Operation,
  type Spec,
} from './api-pix';

/*
 * The due-date charges (API Pix `cobv`) checked against the spec as test/conformance/api-pix.ts checks
 * the immediate ones: every request the adapter makes (create with each modality, cancel, read) is
 * validated against its operation; the spec's example answers are fed back to the adapter; and the
 * PSP simulator's own answers and location payload are validated against the spec's schemas, so the
 * simulator the other tests trust speaks the spec too.
 */

export const COBV_PUT: Operation = { name: 'PUT /cobv/{txid}', template: '/cobv/{txid}', method: 'put' };
export const COBV_PATCH: Operation = { ...COBV_PUT, name: 'PATCH /cobv/{txid}', method: 'patch' };
export const COBV_GET: Operation = { ...COBV_PUT, name: 'GET /cobv/{txid}', method: 'get' };

/**
 * Where API Pix 2.9.0 contradicts itself for cobv, beyond SPEC_DEFECTS: each explains a schema error
 * of a request, an example or a simulator answer in exactly that way, and the run reports which it saw.
 */
export const COBV_DEFECTS: readonly {
  id: string;
  why: string;
  explains: (value: unknown, error: ErrorObject) => boolean;
}[] = [
  {
    id: 'cobResponse4-without-location',
    why: 'cobResponse4, the only cobv answer example, has `loc.location` but not `location`, which CobVGerada requires.',
    explains: (_value, error) =>
      error.instancePath === '' &&
      error.keyword === 'required' &&
      error.params.missingProperty === 'location',
  },
  {
    id: 'recebedor-address-at-root',
    why: 'DadosRecebedor lists logradouro, cidade, uf and cep as `required` of the charge itself, beside `recebedor`, where no answer (the spec examples included) has them.',
    explains: (_value, error) =>
      error.instancePath === '' &&
      error.keyword === 'required' &&
      ['logradouro', 'cidade', 'uf', 'cep'].includes(String(error.params.missingProperty)),
  },
  {
    id: 'desconto-oneOf-both',
    why: 'CobVValor.desconto is a oneOf whose first branch requires nothing, so a per-day discount (modalidade 3 to 6, `valorPerc` alone) matches both branches and no such request can pass.',
    explains: (value, error) => {
      const desconto = (value as { valor?: { desconto?: Record<string, unknown> } }).valor?.desconto;
      return (
        error.instancePath === '/valor/desconto' &&
        error.keyword === 'oneOf' &&
        desconto?.valorPerc !== undefined &&
        desconto.descontoDataFixa === undefined
      );
    },
  },
];

export interface CobvConformance {
  rows: ConformanceRow[];
  failures: string[];
  /** The ids of the defects (COBV_DEFECTS, SPEC_DEFECTS) the run met. */
  defectsSeen: string[];
}

const seen = new Set<string>();

/** The schema errors of `value` that no known defect explains (those that do are recorded as seen). */
function unexplained(name: string, value: unknown, errors: ErrorObject[] | null | undefined): ErrorObject[] {
  return (errors ?? []).filter((error) => {
    if (error.keyword === 'oneOf' && error.instancePath !== '/valor/desconto') return false;
    if (['anyOf', 'if'].includes(error.keyword)) return false;
    const defect =
      COBV_DEFECTS.find((d) => d.explains(value, error)) ??
      SPEC_DEFECTS.find((d) => d.explains?.(name, error));
    if (defect) seen.add(defect.id);
    return !defect;
  });
}

/** checkRequest, with the body's errors that a known defect explains left out. */
function requestProblems(spec: Spec, operation: Operation, request: Captured): string[] {
  const problems = checkRequest(spec, operation, request).filter((p) => !p.startsWith('body: '));
  const item = spec.deref<Record<string, unknown>>(
    (spec.doc.paths as Record<string, unknown>)[operation.template],
  );
  const op = spec.deref<{ requestBody?: unknown }>(item[operation.method]);
  if (op.requestBody === undefined) return problems;
  const content = spec.deref<{ content: Record<string, { schema: { $ref: string } }> }>(
    op.requestBody,
  ).content;
  const ref = content['application/json']?.schema.$ref ?? '';
  const body = JSON.parse(request.body) as unknown;
  const validate = spec.validator(ref);
  if (validate(body)) return problems;
  const left = unexplained('request', body, validate.errors);
  return left.length === 0 ? problems : [...problems, `body: ${describeErrors(left)}`];
}

const txid = (seed: string) => seed.repeat(35).slice(0, 35);

/** Charges covering every modality and both documents. */
function inputs(): DueDateChargeInput[] {
  const today = todayInSaoPaulo();
  const due = addDays(today, 30);
  const base = { debtorName: 'Maria Silva', debtorDocument: '529.982.247-25', amountCents: 123_45 };
  const terms = (more: Partial<DueDateTerms>): DueDateTerms => ({
    due_date: due,
    days_after_due: 30,
    ...more,
  });
  return [
    { ...base, txid: txid('a1'), terms: terms({}) },
    {
      ...base,
      txid: txid('b2'),
      debtorName: 'Empresa SA',
      debtorDocument: '11.222.333/0001-81',
      description: 'Fatura 7',
      terms: terms({
        fine: { type: 'fixed', amount: 500 },
        interest: { type: 'amount_per_day', value: 10, days: 'business' },
        rebate: { type: 'percent', rate: 150 },
        discount: {
          type: 'percent_until',
          tiers: [
            { until: addDays(today, 5), value: 300 },
            { until: addDays(today, 10), value: 200 },
            { until: due, value: 100 },
          ],
        },
      }),
    },
    {
      ...base,
      txid: txid('C3d'),
      debtorDocument: '12.ABC.345/01DE-35',
      terms: terms({
        days_after_due: 0,
        fine: { type: 'percent', rate: 200 },
        interest: { type: 'percent_per_year', value: 1200, days: 'calendar' },
        discount: { type: 'amount_per_day_early', value: 5, days: 'business' },
      }),
    },
    {
      ...base,
      txid: 'x'.repeat(26),
      amountCents: 999_999_999_999,
      terms: terms({
        days_after_due: 365,
        interest: { type: 'percent_per_day', value: 33, days: 'business' },
        discount: { type: 'percent_per_day_early', value: 10, days: 'calendar' },
        rebate: { type: 'fixed', amount: 1 },
      }),
    },
  ];
}

export async function runCobvConformance(file = SPEC_PATH): Promise<CobvConformance> {
  const spec = loadSpec(file);
  const server = await startCaptureServer();
  const rows: ConformanceRow[] = [];
  const failures: string[] = [];
  const psp = conformanceAdapter(server.url, API_PIX_CHARGE_AND_DUE_DATE_SCOPES);
  const row = rowRecorder(rows, failures);
  const apiRequests = (from: number) => server.requests.slice(from).filter((r) => r.path !== '/oauth/token');
  const location = 'pix.example.com/qr/c2/cobv/9d36b84fc70b478fb95c12729b90ca25';
  const example = responseExamples(spec, COBV_PUT, '201');

  try {
    // PUT: our requests (answered as a PSP would, with its code), then the spec's example answer.
    {
      const problems: string[] = [];
      let requests = 0;
      for (const input of inputs()) {
        const code = buildDynamicBrCode({ location, merchantName: 'PSP', merchantCity: 'Brasilia' });
        server.answer({
          status: 201,
          body: { ...(example[0]?.[1] as object), txid: input.txid, location, pixCopiaECola: code },
        });
        const from = server.requests.length;
        await psp.dueDate
          .create(input)
          .catch((err: Error) => problems.push(`create ${input.txid}: ${err.message}`));
        for (const request of apiRequests(from)) {
          requests += 1;
          problems.push(
            ...requestProblems(spec, COBV_PUT, request).map((p) => `request ${input.txid}: ${p}`),
          );
        }
      }
      let examples = 0;
      for (const [name, value, ref] of example) {
        problems.push(...exampleProblems(spec, name, value, ref));
        server.answer({ status: 201, body: value });
        const cobv = value as { txid: string; loc: { location: string } };
        examples += 1;
        const made = await psp.dueDate
          .create({ ...(inputs()[0] as DueDateChargeInput), txid: cobv.txid })
          .catch((err: Error) => {
            problems.push(`example ${name}: ${err.message}`);
            return null;
          });
        const account = made ? parseBrCode(made.copyAndPaste).fields['26'] : undefined;
        if (
          made &&
          (made.location !== cobv.loc.location ||
            typeof account !== 'object' ||
            account['25'] !== made.location)
        )
          problems.push(`example ${name}: the BR Code does not point at ${cobv.loc.location}`);
      }
      row(COBV_PUT.name, requests, examples, problems);
    }

    // PATCH: the cancel request; GET: the read request and the example answer.
    for (const operation of [COBV_PATCH, COBV_GET]) {
      const problems: string[] = [];
      let requests = 0;
      let examples = 0;
      for (const [name, value, ref] of example) {
        const status = operation === COBV_PATCH ? 'REMOVIDA_PELO_USUARIO_RECEBEDOR' : 'ATIVA';
        if (operation === COBV_GET) {
          problems.push(...exampleProblems(spec, name, value, ref));
          examples += 1;
        }
        server.answer({ status: 200, body: { ...(value as object), status } });
        const id = (value as { txid: string }).txid;
        const from = server.requests.length;
        const state = await (operation === COBV_PATCH ? psp.dueDate.cancel(id) : psp.dueDate.read(id)).catch(
          (err: Error) => {
            problems.push(`${operation.name} ${id}: ${err.message}`);
            return null;
          },
        );
        if (state && (state.txid !== id || state.amountCents !== 12345))
          problems.push(`${name} read as ${JSON.stringify(state)}`);
        for (const request of apiRequests(from)) {
          requests += 1;
          problems.push(...requestProblems(spec, operation, request).map((p) => `request ${id}: ${p}`));
        }
      }
      row(operation.name, requests, examples, problems);
    }

    {
      const tokens = server.requests.filter((r) => r.path === '/oauth/token');
      const problems = tokens.flatMap((request) =>
        checkTokenRequest(spec, request, [COBV_PUT, COBV_PATCH, COBV_GET]),
      );
      if (tokens.length === 0) problems.push('no token request');
      row('POST {tokenUrl} (cobv scopes)', tokens.length, 0, problems);
    }

    const simulator = await simulatorRow(spec);
    row(simulator.operation, 0, simulator.checked, simulator.problems);
  } finally {
    await psp.close();
    await server.close();
  }
  const defectsSeen = [...seen];
  seen.clear();
  return { rows, failures, defectsSeen };
}

/** The simulator's answers (CobVGerada, CobVCompleta) and its location payload (CobVPayload). */
async function simulatorRow(spec: Spec): Promise<{ operation: string; checked: number; problems: string[] }> {
  const sim = await startPspSimulator({ clientId: 'c', clientSecret: 's' });
  const psp = bacenApiPix({
    apiUrl: sim.url,
    tokenUrl: sim.tokenUrl,
    clientId: 'c',
    clientSecret: 's',
    scopes: API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
    pixKey: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
    merchantName: 'Loja',
    merchantCity: 'Brasilia',
    timeoutMs: 5000,
  });
  const problems: string[] = [];
  let checked = 0;
  const check = (what: string, value: unknown, ref: string) => {
    checked += 1;
    const validate = spec.validator(ref);
    const left = validate(value) ? [] : unexplained(what, value, validate.errors);
    if (left.length > 0) problems.push(`${what} against ${ref}: ${describeErrors(left)}`);
  };
  try {
    for (const input of inputs()) {
      const from = sim.requests.length;
      await psp.dueDate.create(input);
      const put = sim.requests.slice(from).find((r) => r.method === 'PUT');
      // The answer as the adapter got it is the stored charge; ask again for the body itself.
      const answer = await fetch(`${sim.url}/cobv/${input.txid}`, {
        headers: { authorization: put?.headers.authorization ?? '' },
      });
      check(`GET /cobv/${input.txid}`, await answer.json(), '#/components/schemas/CobVCompleta');
      const stored = sim.cobvs.get(input.txid);
      const jws = await fetch(`http://${stored?.location}?DPP=${addDays(todayInSaoPaulo(), 1)}`).then((r) =>
        r.text(),
      );
      const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString()) as unknown;
      check(`location of ${input.txid}`, payload, '#/components/schemas/CobVPayload');
    }
  } catch (err) {
    problems.push((err as Error).message);
  } finally {
    await psp.close();
    await sim.close();
  }
  return { operation: 'PSP simulator: GET /cobv answers, location payloads', checked, problems };
}

/** The schema errors of an example that no known defect explains. */
function exampleProblems(spec: Spec, name: string, value: unknown, ref: string): string[] {
  const validate = spec.validator(ref);
  const left = validate(value) ? [] : unexplained(name, value, validate.errors);
  return left.length === 0 ? [] : [`${name} against ${ref}: ${describeErrors(left)}`];
}
