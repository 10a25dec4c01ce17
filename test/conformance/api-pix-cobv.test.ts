import { COBV_PATCH, COBV_PUT, runCobvConformance } from './api-pix-cobv';
import { API_BASE, checkRequest, loadSpec, type Captured } from './api-pix';

// Due-date charges (cobv) against the Central Bank's API Pix OpenAPI document: the adapter's requests,
// the spec's example answers, and the PSP simulator's answers and location payloads.

describe('API Pix conformance of due-date charges', () => {
  it('the adapter and the simulator speak cobv as API Pix 2.9.0 defines it', async () => {
    const report = await runCobvConformance();
    expect(report.failures).toEqual([]);
    expect(report.rows.map((r) => [r.operation, r.requests, r.examples, r.result])).toEqual([
      ['PUT /cobv/{txid}', 4, 1, 'ok'],
      ['PATCH /cobv/{txid}', 1, 0, 'ok'],
      ['GET /cobv/{txid}', 1, 1, 'ok'],
      ['POST {tokenUrl} (cobv scopes)', 1, 0, 'ok'],
      ['PSP simulator: GET /cobv answers, location payloads', 0, 8, 'ok'],
    ]);
    // The spec's contradictions met on the way (COBV_DEFECTS, SPEC_DEFECTS): a fixed one leaves this list.
    expect(report.defectsSeen.sort()).toEqual([
      'cobResponse4-without-location',
      'desconto-oneOf-both',
      'loc-without-criacao-txid',
      'location-without-scheme',
      'recebedor-address-at-root',
    ]);
  });

  const spec = loadSpec();
  const request = (method: string, body: unknown): Captured => ({
    method,
    path: `${API_BASE}/cobv/${'a'.repeat(35)}`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
    body: JSON.stringify(body),
  });

  it('catches a cobv request the spec refuses', () => {
    const cobv = {
      calendario: { dataDeVencimento: '2030-01-10', validadeAposVencimento: 30 },
      devedor: { cpf: '52998224725', nome: 'Maria' },
      valor: { original: '10.00', multa: { modalidade: 2, valorPerc: '2.00' } },
      chave: 'k',
    };
    expect(checkRequest(spec, COBV_PUT, request('PUT', cobv))).toEqual([]);
    expect(
      checkRequest(
        spec,
        COBV_PUT,
        request('PUT', {
          ...cobv,
          valor: { original: '10.00', multa: { modalidade: 3, valorPerc: '2.00' } },
        }),
      ),
    ).not.toEqual([]);
    expect(
      checkRequest(spec, COBV_PATCH, request('PATCH', { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })),
    ).toEqual([]);
    expect(checkRequest(spec, COBV_PATCH, request('PATCH', { status: 'APAGADA' }))).not.toEqual([]);
  });
});
