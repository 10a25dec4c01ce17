import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import {
  addDays,
  amountDue,
  brazilCalendar,
  todayInSaoPaulo,
  type DueDateTerms,
  type IsoDate,
} from '@seller-api/due-date';
import {
  API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
  bacenApiPix,
  type BacenApiPixAdapter,
} from '../../services/payments/src/clients/bacen-api-pix';
import {
  LocationPayloadError,
  fetchCobvPayload,
  verifyCobvPayloadJws,
  type LocationPayloadProblem,
} from '../../services/payments/src/clients/location-payload';
import { txid } from '../support/api-pix';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';

// The location of a due-date charge as a payer's bank reads it, against the PSP simulator: the JWS and
// its key set, and the amounts of each day, which must be our amount-due answer.

const today = todayInSaoPaulo();
const calendar = brazilCalendar();
const TERMS: DueDateTerms = {
  due_date: addDays(today, 20),
  days_after_due: 10,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: { type: 'fixed', amount: 5000 },
  discount: { type: 'fixed_until', tiers: [{ until: addDays(today, 10), value: 3000 }] },
};
const AMOUNT = 100_000;

let sim: PspSimulator;
let psp: BacenApiPixAdapter;

beforeAll(async () => {
  sim = await startPspSimulator({ clientId: 'id', clientSecret: 'secret' });
  psp = bacenApiPix({
    apiUrl: sim.url,
    tokenUrl: sim.tokenUrl,
    clientId: 'id',
    clientSecret: 'secret',
    scopes: API_PIX_CHARGE_AND_DUE_DATE_SCOPES,
    pixKey: 'pix@seller.example',
    merchantName: 'Seller API',
    merchantCity: 'Sao Paulo',
    timeoutMs: 5000,
  });
});
afterAll(async () => {
  await psp.close();
  await sim.close();
});

async function created(terms: DueDateTerms = TERMS): Promise<{ txid: string; location: string }> {
  const id = txid();
  const charge = await psp.dueDate.create({
    txid: id,
    amountCents: AMOUNT,
    terms,
    debtorName: 'Maria Silva',
    debtorDocument: '52998224725',
  });
  return { txid: id, location: charge.location };
}

const read = (location: string, date: IsoDate, municipality?: string) =>
  fetchCobvPayload(location, { date, timeoutMs: 5000, scheme: 'http', municipality });

async function problemOf(promise: Promise<unknown>): Promise<LocationPayloadProblem> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof LocationPayloadError))
    throw new Error(`expected a LocationPayloadError, got ${String(err)}`);
  return err.problem;
}

/** The simulator's JWS for a date, fetched without checking it. */
async function rawJws(location: string, date: IsoDate): Promise<string> {
  const res = await fetch(`http://${location}?DPP=${date}`);
  expect(res.headers.get('content-type')).toBe('application/jose');
  return res.text();
}

const simJwks = (url: string) => fetch(url).then((res) => res.text());

describe('the location of a due-date charge', () => {
  it('answers, for each payable day, the amounts of our amount-due answer, signed', async () => {
    const charge = await created();
    const last = amountDue(AMOUNT, TERMS, today, calendar).last_payable_date;
    const effective = amountDue(AMOUNT, TERMS, today, calendar).effective_due_date;
    // Before the due date with the discount, the last day of the discount, on the due date, late (fine
    // and interest), the last payable day.
    const dates = [addDays(today, 2), addDays(today, 10), TERMS.due_date, addDays(effective, 5), last];
    for (const date of dates) {
      const due = amountDue(AMOUNT, TERMS, date, calendar);
      if (!due.payable) throw new Error(`${date} should be payable`);
      const verified = await read(charge.location, date);
      expect({ date, final: verified.finalCents, components: verified.components }).toEqual({
        date,
        final: due.final,
        components: due.components,
      });
      expect(verified.payload).toMatchObject({ txid: charge.txid, status: 'ATIVA', revisao: 0 });
      expect(sim.locationKeyIds).toContain(verified.kid);
    }
    // Spot checks by hand: the discount tier, nothing off on the due date, a fine of 2 % of 950.00.
    expect((await read(charge.location, addDays(today, 2))).finalCents).toBe(92_000);
    expect((await read(charge.location, TERMS.due_date)).finalCents).toBe(95_000);
    expect((await read(charge.location, addDays(effective, 5))).components.fine).toBe(1900);
  });

  it('answers 400 for a day that cannot be paid: after the last payable date, or before today', async () => {
    const charge = await created();
    const last = amountDue(AMOUNT, TERMS, today, calendar).last_payable_date;
    await expect(problemOf(read(charge.location, addDays(last, 1)))).resolves.toBe('not_payable');
    await expect(problemOf(read(charge.location, addDays(today, -1)))).resolves.toBe('not_payable');
  });

  it('counts the holidays of the payer municipality (codMun)', async () => {
    const charge = await created();
    const date = addDays(today, 25);
    const verified = await read(charge.location, date, '3550308');
    const due = amountDue(AMOUNT, TERMS, date, brazilCalendar({ municipality: '3550308' }));
    expect(verified.finalCents).toBe(due.final);
    await expect(problemOf(read(charge.location, date, '9999999'))).resolves.toBe('not_payable');
  });

  it('is gone once the charge is removed', async () => {
    const charge = await created();
    await psp.dueDate.cancel(charge.txid);
    await expect(problemOf(read(charge.location, addDays(today, 1)))).resolves.toBe('not_found');
  });
});

describe('verifying the JWS of a location', () => {
  const split = (jws: string) => {
    const [header, payload, signature] = jws.split('.') as [string, string, string];
    return {
      header: JSON.parse(Buffer.from(header, 'base64url').toString()) as Record<string, unknown>,
      payload: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>,
      parts: [header, payload, signature] as const,
    };
  };
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

  it('refuses a payload changed after signing', async () => {
    const charge = await created();
    const jws = await rawJws(charge.location, addDays(today, 1));
    await expect(
      verifyCobvPayloadJws(jws, { location: charge.location, scheme: 'http', fetchJwks: simJwks }),
    ).resolves.toMatchObject({
      payload: { txid: charge.txid },
    });
    const { payload, parts } = split(jws);
    const valor = { ...(payload.valor as object), final: '0.01' };
    const tampered = `${parts[0]}.${b64({ ...payload, valor })}.${parts[2]}`;
    await expect(
      problemOf(
        verifyCobvPayloadJws(tampered, { location: charge.location, scheme: 'http', fetchJwks: simJwks }),
      ),
    ).resolves.toBe('bad_signature');
  });

  it('refuses a signature by another key under the published kid', async () => {
    const charge = await created();
    const { header, payload } = split(await rawJws(charge.location, addDays(today, 1)));
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const input = `${b64(header)}.${b64(payload)}`;
    const forged = `${input}.${sign('RSA-SHA256', Buffer.from(input), privateKey).toString('base64url')}`;
    await expect(
      problemOf(
        verifyCobvPayloadJws(forged, { location: charge.location, scheme: 'http', fetchJwks: simJwks }),
      ),
    ).resolves.toBe('bad_signature');
  });

  it('refuses a jku on another host without fetching it', async () => {
    const charge = await created();
    const { header, parts } = split(await rawJws(charge.location, addDays(today, 1)));
    const fetched: string[] = [];
    for (const jku of [
      'http://attacker.example/qr/v2/jwks',
      'https://127.0.0.1/qr/v2/jwks',
      'http://127.0.0.1:1/jwks',
    ]) {
      const moved = `${b64({ ...header, jku })}.${parts[1]}.${parts[2]}`;
      await expect(
        problemOf(
          verifyCobvPayloadJws(moved, {
            location: charge.location,
            scheme: 'http',
            fetchJwks: async (url) => {
              fetched.push(url);
              return simJwks(url);
            },
          }),
        ),
      ).resolves.toBe('foreign_jku');
    }
    expect(fetched).toEqual([]);
  });

  it('refuses a kid the key set no longer has (a rotated key), and an unsigned JWS', async () => {
    const charge = await created();
    const jws = await rawJws(charge.location, addDays(today, 1));
    const before = sim.locationKeyIds;
    sim.rotateLocationKey();
    expect(sim.locationKeyIds).not.toEqual(before);
    await expect(
      problemOf(verifyCobvPayloadJws(jws, { location: charge.location, scheme: 'http', fetchJwks: simJwks })),
    ).resolves.toBe('unknown_key');
    // A fresh read is signed by the new key and verifies.
    await expect(read(charge.location, addDays(today, 1))).resolves.toMatchObject({
      kid: sim.locationKeyIds[0],
    });

    const { header, parts } = split(jws);
    const none = `${b64({ ...header, alg: 'none' })}.${parts[1]}.`;
    await expect(
      problemOf(
        verifyCobvPayloadJws(none, { location: charge.location, scheme: 'http', fetchJwks: simJwks }),
      ),
    ).resolves.toBe('bad_header');
  });

  it('checks x5t against the named key when the header has one', async () => {
    const location = 'pix.psp.example/qr/v2/cobv/abc';
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const certificate = randomBytes(64).toString('base64');
    const x5t = createHash('sha1').update(Buffer.from(certificate, 'base64')).digest('base64url');
    const jwks = JSON.stringify({
      keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', x5c: [certificate] }],
    });
    const payload = {
      txid: 'a'.repeat(26),
      revisao: 0,
      status: 'ATIVA',
      chave: 'k',
      calendario: {
        criacao: '2026-01-01T00:00:00Z',
        apresentacao: '2026-01-01T00:00:00Z',
        validadeAposVencimento: 30,
      },
      devedor: { nome: 'Maria', cpf: '52998224725' },
      recebedor: { nome: 'Loja' },
      valor: { original: '10.00', final: '10.00' },
    };
    const signed = (thumb: string) => {
      const input = `${b64({ alg: 'RS256', kid: 'k1', jku: 'https://pix.psp.example/jwks', x5t: thumb })}.${b64(payload)}`;
      return `${input}.${sign('RSA-SHA256', Buffer.from(input), privateKey).toString('base64url')}`;
    };
    const context = { location, fetchJwks: async () => jwks };
    await expect(verifyCobvPayloadJws(signed(x5t), context)).resolves.toMatchObject({
      finalCents: 1000,
      kid: 'k1',
    });
    await expect(problemOf(verifyCobvPayloadJws(signed('AAAA'), context))).resolves.toBe('unknown_key');
  });
});
