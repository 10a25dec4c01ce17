import {
  PspError,
  apiPixClient,
  clip,
  refusal,
  valor,
  type ApiPixAnswer,
  type ApiPixClientOptions,
} from '@seller-api/api-pix';
import { z } from 'zod';
import type { PayoutAdapter, PayoutOutcome, PayoutRequest } from '../domain/payouts';

/*
 * `bacen-api-pix` payouts: sending a PIX through a PSP's API of the API Pix family (the "envio de Pix"
 * that PSPs add beside the Central Bank's receiving API, same OAuth2 and problem conventions):
 *
 *   PUT {apiUrl}/pix/envio/{idEnvio}   {valor, pagador: {chave}, favorecido: {chave}}
 *   GET {apiUrl}/pix/envio/{idEnvio}   the transfer, to ask again about one in progress
 *
 * Both answer {idEnvio, e2eId, valor, horario, status} with status EM_PROCESSAMENTO, REALIZADO or
 * NAO_REALIZADO (with `motivo`). `idEnvio` is the withdrawal's id without dashes, so the PSP is
 * idempotent on it: a PUT after a crash answers the transfer already made (or a 409, and we GET it).
 * A PSP that cannot be asked (network, 5xx, 408, 429) throws, and the worker asks again later; a 4xx
 * refusal (other than 401 and 403: our credentials) fails the withdrawal with the PSP's words, and its
 * funds go back to the seller.
 */

export interface BacenApiPixPayoutsOptions extends ApiPixClientOptions {
  /** Our paying key at the PSP (`pagador.chave`): the account the payouts leave from. */
  pixKey: string;
}

export interface BacenApiPixPayouts extends PayoutAdapter {
  close(): Promise<void>;
}

const Envio = z.object({
  idEnvio: z.string().optional(),
  e2eId: z.string().min(1).optional(),
  valor: z.string().optional(),
  status: z.string(),
  motivo: z.string().optional(),
});

/** API Pix ids are 1 to 35 letters and digits; a UUID without its dashes is 32. */
export function idEnvioOf(withdrawalId: string): string {
  return withdrawalId.replace(/-/g, '');
}

export function bacenApiPixPayouts(options: BacenApiPixPayoutsOptions): BacenApiPixPayouts {
  const client = apiPixClient(options);

  function outcome(what: string, answer: ApiPixAnswer, expected: string, id: string): PayoutOutcome {
    const envio = Envio.safeParse(answer.json);
    if (!envio.success) {
      throw new PspError(`PSP answered ${what} without a transfer status`, { retryable: true });
    }
    const e = envio.data;
    if ((e.idEnvio !== undefined && e.idEnvio !== id) || (e.valor !== undefined && e.valor !== expected)) {
      // Not the transfer we asked for: never record it as paid; an operator must look.
      throw new PspError(
        `PSP answered ${what} with another transfer (${e.idEnvio ?? id}, ${e.valor ?? ''})`,
        {
          retryable: true,
        },
      );
    }
    switch (e.status) {
      case 'REALIZADO':
        if (!e.e2eId) throw new PspError(`PSP answered ${what} REALIZADO without e2eId`, { retryable: true });
        return { status: 'paid', reference: e.e2eId };
      case 'NAO_REALIZADO':
        return {
          status: 'failed',
          reason: `Payout refused by the PSP${e.motivo ? `: ${clip(e.motivo)}` : ''}`,
        };
      case 'EM_PROCESSAMENTO':
        return { status: 'processing' };
      default:
        throw new PspError(`PSP answered ${what} with transfer status ${clip(e.status)}`, {
          retryable: true,
        });
    }
  }

  return {
    name: 'bacen-api-pix',

    async pay(request: PayoutRequest): Promise<PayoutOutcome> {
      const id = idEnvioOf(request.withdrawalId);
      const expected = valor(request.amount);
      const path = `/pix/envio/${encodeURIComponent(id)}`;
      const put = await client.send('PUT', path, {
        valor: expected,
        pagador: { chave: options.pixKey },
        favorecido: { chave: request.pixKey },
      });
      if (put.status >= 200 && put.status <= 299) return outcome(`PUT ${path}`, put, expected, id);
      if (put.status === 409) {
        // Asked before (a crash between the PSP's answer and our commit): the transfer is the PSP's.
        const get = await client.send('GET', path);
        if (get.status >= 200 && get.status <= 299) return outcome(`GET ${path}`, get, expected, id);
        throw retryable(refusal(`GET ${path}`, get.status, get.text));
      }
      const refused = refusal(`PUT ${path}`, put.status, put.text);
      // Our credentials refused is ours to mend, not the seller's: the payout waits for it.
      if (refused.retryable || put.status === 401 || put.status === 403) throw retryable(refused);
      const words = refused.message.replace(/^PSP answered .*? with /, '');
      return { status: 'failed', reason: `Payout refused by the PSP (${words})` };
    },

    close: () => client.close(),
  };
}

/** Whatever the GET of a transfer we already sent answers, the transfer exists: ask again later. */
function retryable(error: PspError): PspError {
  return new PspError(error.message, { retryable: true, status: error.status });
}
