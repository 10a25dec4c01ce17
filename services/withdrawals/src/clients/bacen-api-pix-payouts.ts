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
 * A PSP that cannot be asked (network, 5xx, 408, 429, our credentials refused, a wrong URL) throws, and
 * the worker asks again later. A refusal fails the withdrawal (its funds go back to the seller) only
 * once a GET of the transfer answers 404: an earlier PUT that timed out on our side may have paid.
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
      const refused = refusal(`PUT ${path}`, put.status, put.text);
      // Not an answer about this transfer (the PSP's trouble, our credentials, a redirect, a wrong
      // URL): the payout waits and is asked again.
      if (put.status < 400 || put.status > 499 || refused.retryable || [401, 403, 404].includes(put.status)) {
        throw retryable(refused);
      }
      // A 409, or any refusal: an earlier PUT of this idEnvio may have gone through (it timed out on
      // our side, say) and a PSP may check the body before its idempotency. Only the PSP's record of
      // the transfer decides: it exists (its status is the outcome) or it does not (refused for good).
      const get = await client.send('GET', path);
      if (get.status >= 200 && get.status <= 299) return outcome(`GET ${path}`, get, expected, id);
      if (get.status !== 404 || put.status === 409)
        throw retryable(refusal(`GET ${path}`, get.status, get.text));
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
