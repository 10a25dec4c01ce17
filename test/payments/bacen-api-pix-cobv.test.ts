import { PspPixNotification } from '@seller-api/contracts';
import { addDays, amountDue, brazilCalendar, todayInSaoPaulo, type DueDateTerms } from '@seller-api/due-date';
import {
  API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
  bacenApiPix,
  type BacenApiPixAdapter,
  type BacenApiPixOptions,
} from '../../services/payments/src/clients/bacen-api-pix';
import {
  DueDateChargePaidError,
  type DueDateChargeInput,
} from '../../services/payments/src/clients/bacen-api-pix-cobv';
import { buildDynamicBrCode, parseBrCode } from '../../services/payments/src/domain/brcode';

import { txid, rejection } from '../support/api-pix';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { CobvPaymentRefused } from '../support/psp-simulator-cobv';
import { startReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

// Due-date charges (API Pix cobv) of the bacen-api-pix adapter against the PSP simulator: real HTTP, no
// database or broker needed.

const CLIENT_ID = 'seller-api-client';
const CLIENT_SECRET = 'client-secret-0123456789';
const PIX_KEY = 'pix@seller.example';
const WEBHOOK_SECRET = 'psp-webhook-secret-0123456789';
const today = todayInSaoPaulo();
const calendar = brazilCalendar();

let sim: PspSimulator;
const adapters: BacenApiPixAdapter[] = [];

beforeAll(async () => {
  sim = await startPspSimulator({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
});
afterAll(async () => {
  await Promise.all(adapters.map((made) => made.close()));
  await sim.close();
});

function adapter(overrides: Partial<BacenApiPixOptions> = {}): BacenApiPixAdapter {
  const made = bacenApiPix({
    apiUrl: sim.url,
    tokenUrl: sim.tokenUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
    pixKey: PIX_KEY,
    merchantName: 'Seller API',
    merchantCity: 'Sao Paulo',
    timeoutMs: 5000,
    ...overrides,
  });
  adapters.push(made);
  return made;
}

/** Every part: fine, interest, rebate and a discount tier, due in 20 days. */
const TERMS: DueDateTerms = {
  due_date: addDays(today, 20),
  days_after_due: 30,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: { type: 'fixed', amount: 5000 },
  discount: { type: 'fixed_until', tiers: [{ until: addDays(today, 10), value: 3000 }] },
};

function input(overrides: Partial<DueDateChargeInput> = {}): DueDateChargeInput {
  return {
    txid: txid(),
    amountCents: 100_000,
    terms: TERMS,
    debtorName: 'Empresa de Alimentos SA',
    debtorDocument: '56.989.000/0195-33',
    description: 'Fatura 42',
    ...overrides,
  };
}

describe('bacen-api-pix due-date charges', () => {
  it('creates a cobv with our txid and terms, and answers the PSP dynamic BR Code', async () => {
    const made = input();
    const from = sim.requests.length;
    const charge = await adapter().dueDate.create(made);

    const put = sim.requests.slice(from).find((r) => r.method === 'PUT');
    expect(put?.path).toBe(`/cobv/${made.txid}`);
    expect(JSON.parse(put?.body ?? '')).toEqual({
      calendario: { dataDeVencimento: TERMS.due_date, validadeAposVencimento: 30 },
      devedor: { cnpj: '56989000019533', nome: 'Empresa de Alimentos SA' },
      valor: {
        original: '1000.00',
        multa: { modalidade: 2, valorPerc: '2.00' },
        juros: { modalidade: 3, valorPerc: '1.00' },
        abatimento: { modalidade: 1, valorPerc: '50.00' },
        desconto: { modalidade: 1, descontoDataFixa: [{ data: addDays(today, 10), valorPerc: '30.00' }] },
      },
      chave: PIX_KEY,
      solicitacaoPagador: 'Fatura 42',
    });

    const stored = sim.cobvs.get(made.txid);
    expect(charge).toEqual({ copyAndPaste: stored?.pixCopiaECola, location: stored?.location, revision: 0 });
    const code = parseBrCode(charge.copyAndPaste);
    expect(code.valid).toBe(true);
    expect(code.fields['26']).toEqual({ '00': 'br.gov.bcb.pix', '25': charge.location });
    expect(code.fields['54']).toBeUndefined();
  });

  it('reads the charge back: status, revision and our terms', async () => {
    const made = input({ debtorDocument: '529.982.247-25' });
    const psp = adapter();
    const created = await psp.dueDate.create(made);
    await expect(psp.dueDate.read(made.txid)).resolves.toEqual({
      txid: made.txid,
      status: 'ACTIVE',
      revision: 0,
      location: created.location,
      amountCents: 100_000,
      terms: TERMS,
      payments: [],
    });
    await expect(psp.dueDate.read(txid())).resolves.toBeNull();
  });

  it('the same create again is the same charge; other terms revise it while active', async () => {
    const made = input();
    const psp = adapter();
    const first = await psp.dueDate.create(made);
    await expect(psp.dueDate.create(made)).resolves.toEqual(first);
    const revised = await psp.dueDate.create({ ...made, amountCents: 120_000 });
    expect(revised).toEqual({ ...first, revision: 1 });
    expect((await psp.dueDate.read(made.txid))?.amountCents).toBe(120_000);
  });

  it('cancels with PATCH status REMOVIDA_PELO_USUARIO_RECEBEDOR, and again is fine', async () => {
    const made = input();
    const psp = adapter();
    await psp.dueDate.create(made);
    const from = sim.requests.length;
    const removed = await psp.dueDate.cancel(made.txid);
    expect(removed.status).toBe('REMOVED_BY_RECEIVER');
    const patch = sim.requests.slice(from).find((r) => r.method === 'PATCH');
    expect(patch?.path).toBe(`/cobv/${made.txid}`);
    expect(JSON.parse(patch?.body ?? '')).toEqual({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
    await expect(psp.dueDate.cancel(made.txid)).resolves.toMatchObject({ status: 'REMOVED_BY_RECEIVER' });
    // A removed charge is not written again under its txid.
    const again = await rejection(psp.dueDate.create(made));
    expect(again.retryable).toBe(false);
    expect(again.status).toBe(400);
  });

  it('a paid charge cannot be cancelled: a clear, not retryable error', async () => {
    const made = input();
    const psp = adapter();
    await psp.dueDate.create(made);
    // Nobody listens on port 9: the notification fails, the payment stands.
    await sim.payCobv(made.txid, { webhookUrl: 'http://127.0.0.1:9/none', secret: null });
    expect(sim.cobvs.get(made.txid)?.status).toBe('CONCLUIDA');
    const err = await rejection(psp.dueDate.cancel(made.txid));
    expect(err).toBeInstanceOf(DueDateChargePaidError);
    expect((err as DueDateChargePaidError).code).toBe('PAID');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/paid/);
  });

  it('refuses what the spec refuses, with the PSP words, not retryable; a 503 is retryable', async () => {
    const psp = adapter();
    const past = await rejection(
      psp.dueDate.create(input({ terms: { ...TERMS, due_date: addDays(today, -1), discount: null } })),
    );
    expect(past.retryable).toBe(false);
    expect(past.status).toBe(400);
    expect(past.message).toMatch(/cobv\.calendario\.dataDeVencimento/);
    const late = await rejection(
      psp.dueDate.create(
        input({
          terms: {
            ...TERMS,
            discount: { type: 'fixed_until', tiers: [{ until: addDays(today, 21), value: 1 }] },
          },
        }),
      ),
    );
    expect(late.message).toMatch(/after the due date/);
    const tooBig = await rejection(
      psp.dueDate.create(input({ terms: { ...TERMS, rebate: { type: 'fixed', amount: 100_000 } } })),
    );
    expect(tooBig.message).toMatch(/abatimento: Must be below the amount/);
    // Refused before any call: no txid API Pix takes, no CPF or CNPJ.
    const calls = sim.requests.length;
    await expect(rejection(psp.dueDate.create(input({ txid: 'short' })))).resolves.toMatchObject({
      retryable: false,
    });
    await expect(rejection(psp.dueDate.create(input({ debtorDocument: '123' })))).resolves.toMatchObject({
      retryable: false,
    });
    expect(sim.requests.length).toBe(calls);

    sim.failNext(503, 1, 'PUT');
    const down = await rejection(psp.dueDate.create(input()));
    expect(down.retryable).toBe(true);
    expect(down.status).toBe(503);
  });

  it('refuses a PSP code with an amount or another location, and builds one from a bare location', async () => {
    const location = 'pix.psp.example/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25';
    const merchant = { merchantName: 'PSP', merchantCity: 'Brasilia' };
    let answer: Record<string, unknown> = {};
    const psp = adapter({
      fetchImpl: async (url) => ({
        status: url.endsWith('/oauth/token') ? 200 : 201,
        text: async () =>
          JSON.stringify(
            url.endsWith('/oauth/token')
              ? { access_token: 't', token_type: 'Bearer', expires_in: 60 }
              : answer,
          ),
      }),
    });
    const made = input();
    const cobv = {
      txid: made.txid,
      revisao: 0,
      status: 'ATIVA',
      calendario: { dataDeVencimento: TERMS.due_date, validadeAposVencimento: 30 },
      valor: { original: '1000.00' },
      location,
    };
    answer = { ...cobv, pixCopiaECola: buildDynamicBrCode({ location, amountCents: 100_000, ...merchant }) };
    const priced = await rejection(psp.dueDate.create(made));
    expect(priced.message).toMatch(/amount \(54\)/);
    expect(priced.retryable).toBe(false);
    answer = {
      ...cobv,
      pixCopiaECola: buildDynamicBrCode({ location: 'pix.psp.example/other', ...merchant }),
    };
    await expect(rejection(psp.dueDate.create(made))).resolves.toMatchObject({
      message: expect.stringMatching(/not the charge location/),
    });
    answer = cobv;
    const built = await psp.dueDate.create(made);
    expect(built.location).toBe(location);
    expect(parseBrCode(built.copyAndPaste).fields['54']).toBeUndefined();
  });

  it('a token without cobv.write is refused (403), not retryable', async () => {
    const psp = adapter({ scopes: ['cob.write', 'cobv.read'] });
    const err = await rejection(psp.dueDate.create(input()));
    expect(err.status).toBe(403);
    expect(err.retryable).toBe(false);
  });
});

describe('paying a due-date charge at the simulator', () => {
  it('a late payment of the day amount notifies pix[] with componentesValor, read back as ours', async () => {
    const receiver = await startReceiver();
    try {
      const made = input();
      const psp = adapter();
      await psp.dueDate.create(made);
      const due = amountDue(made.amountCents, TERMS, addDays(TERMS.due_date, 10), calendar);
      if (!due.payable) throw new Error('the test date must be payable');
      // Our answer for that day is the only amount the PSP takes: one cent more is refused.
      await expect(
        sim.payCobv(made.txid, {
          date: due.date,
          amount: due.final + 1,
          webhookUrl: `${receiver.url}/api/v1/psp/webhook`,
          secret: WEBHOOK_SECRET,
        }),
      ).rejects.toThrow(CobvPaymentRefused);
      expect(sim.cobvs.get(made.txid)?.status).toBe('ATIVA');

      const paid = await sim.payCobv(made.txid, {
        date: due.date,
        amount: due.final,
        webhookUrl: `${receiver.url}/api/v1/psp/webhook`,
        secret: WEBHOOK_SECRET,
      });
      expect(paid.status).toBe(200);
      const hook = await waitFor(() => receiver.received[0], { what: 'the PSP notification' });
      expect(hook.path).toBe('/api/v1/psp/webhook/pix');
      const cents = (value: number) => `${Math.floor(value / 100)}.${String(value % 100).padStart(2, '0')}`;
      expect(PspPixNotification.parse(JSON.parse(hook.rawBody)).pix).toEqual([
        {
          endToEndId: paid.endToEndId,
          txid: made.txid,
          valor: cents(due.final),
          horario: `${due.date}T15:00:00.000Z`,
          componentesValor: {
            original: { valor: '1000.00' },
            multa: { valor: cents(due.components.fine) },
            juros: { valor: cents(due.components.interest) },
            abatimento: { valor: '50.00' },
          },
        },
      ]);
      expect(due.components.fine).toBe(1900);
      expect(due.components.interest).toBeGreaterThan(0);

      const read = await psp.dueDate.read(made.txid);
      expect(read?.status).toBe('PAID');
      expect(read?.payments).toEqual([
        {
          endToEndId: paid.endToEndId,
          amountCents: due.final,
          paidAt: `${due.date}T15:00:00.000Z`,
          components: due.components,
        },
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a date after the last payable date, and leaves the charge active', async () => {
    const made = input();
    await adapter().dueDate.create(made);
    const last = amountDue(made.amountCents, TERMS, today, calendar).last_payable_date;
    await expect(
      sim.payCobv(made.txid, { date: addDays(last, 1), webhookUrl: 'http://127.0.0.1:9/none', secret: null }),
    ).rejects.toThrow(/last payable date/);
    expect(sim.cobvs.get(made.txid)?.status).toBe('ATIVA');
  });
});
