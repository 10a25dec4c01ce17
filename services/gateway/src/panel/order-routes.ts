import type { Router } from 'express';
import { Charge, OrderPathParams, type PixCharge } from '@seller-api/contracts';
import { HttpError, parseOrThrow } from '@seller-api/service-kit';
import { authorize } from '../http/auth';
import { matchRoute } from '../http/routing';
import { callerOf, identityOf } from './caller';
import type { PanelContext } from './deps';
import { upstreamHeaders } from './upstream-headers';

/** What the panel shows of an order beyond the public API's routes: a PENDING order's PIX code. */
export function mountOrderRoutes(api: Router, { deps, spendUserBudget }: PanelContext): void {
  // The order detail carries no charge data; payments has the PIX code of a PENDING order.
  api.get('/orders/:uuid/pix', async (req, res) => {
    const { uuid } = parseOrThrow(OrderPathParams, req.params, 'Invalid order id.');
    const caller = callerOf(res);
    const identity = identityOf(caller);
    // The rules and budget of the order routes it stands beside (GET /sellers/orders/{uuid}/).
    const rule = matchRoute(`/sellers/orders/${uuid}/`);
    if (!rule) throw new HttpError(404, 'not_found', 'Order routes are not configured.');
    authorize({ ...identity, suspended: caller.user.seller_status === 'SUSPENDED' }, rule);
    await spendUserBudget(caller, res);
    const upstreamPath = `/internal/charges/${uuid}/`;
    const answer = await deps.upstreams.send(
      'payments',
      'GET',
      upstreamPath,
      upstreamHeaders(deps, req, 'payments', identity, 'GET', upstreamPath, null),
      null,
    );
    if (answer.status !== 200) {
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const charge = chargeOf(answer.body);
    const pix: PixCharge = {
      qr_code_id: charge.txid,
      copy_and_paste: charge.copy_and_paste,
      qr_code_image_base64: charge.qr_code_image_base64,
      transaction_uuid: charge.transaction_uuid,
    };
    res.json({ message: 'PIX charge retrieved.', data: pix });
  });
}

/** The charge in payments' answer; an answer outside the contract is payments' fault (502). */
function chargeOf(body: Buffer): Charge {
  let data: unknown;
  try {
    data = (JSON.parse(body.toString('utf8')) as { data?: unknown } | null)?.data;
  } catch {
    data = undefined;
  }
  const parsed = Charge.safeParse(data);
  if (!parsed.success) {
    throw new HttpError(502, 'bad_gateway', 'The payments service gave an invalid answer. Retry later.');
  }
  return parsed.data;
}
