import { useState, type ReactNode } from 'react';
import {
  AmountDueResponse,
  DeliveryListResponse,
  DeliveryStatus,
  MessageResponse,
  OrderDetailResponse,
  PixCharge,
  dataResponse,
  type AmountPaid,
  type OrderDetail,
  type OrderDueDateDetail,
  type OrderRefundDetail,
  type WebhookDelivery,
} from '@seller-api/contracts';
import { apiPath, perform, request } from '../api';
import { componentRows, dueDateRules } from '../due-date';
import { money } from '../format';
import { href } from '../router';
import { useActions, useIdempotencyKey, useListState, useLoad, useSubmit } from '../hooks';
import {
  ColumnHeads,
  CopyButton,
  ErrorMessage,
  Pager,
  RefreshButton,
  Select,
  Status,
  TableScroll,
  When,
} from '../ui';

const PixChargeResponse = dataResponse(PixCharge);

export function OrderDetailPage({ uuid }: { uuid: string }) {
  const order = useLoad(() => request(OrderDetailResponse, apiPath(`/sellers/orders/${uuid}/`)), [uuid]);
  const o = order.data?.data;
  return (
    <>
      <p>
        <a href={href('orders')}>Back to orders</a>
      </p>
      <h1>
        Order <code className="wrap">{uuid}</code>
      </h1>
      <ErrorMessage>{order.error}</ErrorMessage>
      {order.loading && !o ? <Status>Loading order…</Status> : null}
      {o ? <Detail order={o} onRefunded={order.reload} /> : null}
      {o ? <PostbackDeliveries uuid={o.uuid} /> : null}
    </>
  );
}

function Detail({ order: o, onRefunded }: { order: OrderDetail; onRefunded: () => Promise<void> }) {
  const p = o.payment;
  return (
    <>
      <section aria-labelledby="payment">
        <h2 id="payment">Payment</h2>
        <dl className="pairs">
          <dt>Status</dt>
          <dd>{p.status}</dd>
          <dt>Method</dt>
          <dd>{p.method ?? '—'}</dd>
          <dt>Subtotal</dt>
          <dd>{money(p.subtotal_amount)}</dd>
          <dt>Shipping</dt>
          <dd>{money(p.shipping_amount)}</dd>
          <dt>Discount</dt>
          <dd>{money(p.discount_amount)}</dd>
          <dt>Commission</dt>
          <dd>{money(p.commission_amount)}</dd>
          <dt>Gross</dt>
          <dd>{money(p.gross_amount)}</dd>
          <dt>Fee</dt>
          <dd>{money(p.fee_amount)}</dd>
          <dt>Net</dt>
          <dd>{money(p.net_amount)}</dd>
          <dt>Expires</dt>
          <dd>
            <When iso={p.expires_at} />
          </dd>
          <dt>Created</dt>
          <dd>
            <When iso={o.timestamps.created_at} />
          </dd>
          <dt>Paid</dt>
          <dd>
            <When iso={o.timestamps.paid_at} />
          </dd>
        </dl>
      </section>
      {p.due_date ? <DueDate uuid={o.uuid} status={p.status} terms={p.due_date} /> : null}
      {p.amount_paid ? <AmountPaidSection paid={p.amount_paid} /> : null}
      <Refund order={o} onRefunded={onRefunded} />
      {p.status === 'PENDING' ? <PixQrCode uuid={o.uuid} /> : null}
      <section aria-labelledby="items">
        <h2 id="items">Items and tracking</h2>
        <TableScroll label="Items of the order">
          <table>
            <caption className="visually-hidden">Items of the order</caption>
            <ColumnHeads
              columns={['Item', 'Price', 'Quantity', 'Total', 'Tracking code', 'Shipping status']}
            />
            <tbody>
              {o.items.length === 0 ? (
                <tr>
                  <td colSpan={6}>No items: the order has an amount only.</td>
                </tr>
              ) : (
                o.items.map((i, n) => (
                  <tr key={`${i.uuid ?? 'item'}-${n}`}>
                    <th scope="row">{i.name ?? '—'}</th>
                    <td>{money(i.price)}</td>
                    <td>{i.quantity}</td>
                    <td>{money(i.line_total_amount)}</td>
                    <td>{i.tracking_code ?? '—'}</td>
                    <td>{i.shipping_status ?? '—'}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </TableScroll>
        <dl className="pairs">
          <dt>Estimated delivery</dt>
          <dd>{o.delivery.estimated_delivery_date ?? '—'}</dd>
          <dt>Delivered</dt>
          <dd>
            <When iso={o.delivery.delivered_at} />
          </dd>
          <dt>Signed by</dt>
          <dd>{o.delivery.signed_by ?? '—'}</dd>
        </dl>
      </section>
      <section aria-labelledby="customer">
        <h2 id="customer">Customer</h2>
        <dl className="pairs">
          <dt>Name</dt>
          <dd>{o.customer.name}</dd>
          <dt>{o.customer.tax_id_type}</dt>
          <dd>{o.customer.tax_id}</dd>
          <dt>E-mail</dt>
          <dd>{o.customer.email}</dd>
          <dt>Phone</dt>
          <dd>{o.customer.phone || '—'}</dd>
          <dt>Address</dt>
          <dd>{o.customer.address ?? '—'}</dd>
        </dl>
      </section>
      <section aria-labelledby="parties">
        <h2 id="parties">Parties</h2>
        <dl className="pairs">
          <dt>Seller</dt>
          <dd>{o.parties.seller?.name ?? '—'}</dd>
          <dt>Producer</dt>
          <dd>{o.parties.producer?.name ?? '—'}</dd>
          <dt>Affiliate</dt>
          <dd>{o.parties.affiliate?.name ?? '—'}</dd>
        </dl>
      </section>
    </>
  );
}

/** A component list: the original amount and what was taken off or added (due-date.ts componentRows). */
function Components({ rows }: { rows: ReturnType<typeof componentRows> }) {
  return (
    <>
      {rows.map((r) => (
        <Pair key={r.label} label={r.label}>
          {r.text}
        </Pair>
      ))}
    </>
  );
}

function Pair({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/**
 * A due-date charge (docs/pix.md, "Due-date charges"): its dates, its rules in words, whether it is
 * overdue, and, while it is PENDING, what is owed today as orders computes it (the amount-due route,
 * the same computation that decides what a payment must be).
 */
function DueDate({
  uuid,
  status,
  terms: d,
}: {
  uuid: string;
  status: OrderDetail['payment']['status'];
  terms: OrderDueDateDetail;
}) {
  return (
    <section aria-labelledby="due-date">
      <h2 id="due-date">Due date</h2>
      {d.overdue ? (
        <p className="warning">
          <strong className="badge">Overdue</strong> Not paid by the effective due date,{' '}
          {d.effective_due_date}. It can still be paid until {d.last_payable_date}
          {d.fine || d.interest ? ', with the fine and interest of the rules below' : ''}.
        </p>
      ) : null}
      <dl className="pairs">
        <Pair label="Due date">{d.due_date}</Pair>
        {d.effective_due_date !== d.due_date ? (
          <Pair label="Effective due date">{d.effective_due_date} (the due date is not a business day)</Pair>
        ) : null}
        <Pair label="Last payable date">{d.last_payable_date}</Pair>
      </dl>
      <h3 id="due-date-rules">Rules</h3>
      <ul aria-labelledby="due-date-rules">
        {dueDateRules(d).map((rule) => (
          <li key={rule}>{rule}</li>
        ))}
      </ul>
      {status === 'PENDING' ? <AmountDue uuid={uuid} /> : null}
    </section>
  );
}

/** What is owed today (São Paulo), or that the charge can no longer be paid. */
function AmountDue({ uuid }: { uuid: string }) {
  const due = useLoad(
    () => request(AmountDueResponse, apiPath(`/sellers/orders/${uuid}/amount-due/`)),
    [uuid],
  );
  const a = due.data?.data;
  return (
    <>
      <h3 id="owed-today">Owed today</h3>
      <ErrorMessage>{due.error}</ErrorMessage>
      {due.loading && !a ? <Status>Loading what is owed today…</Status> : null}
      {a && !a.payable ? (
        <p>
          <strong>No longer payable</strong>: the last payable date was {a.last_payable_date}. The order
          expires.
        </p>
      ) : null}
      {a?.payable && a.components && a.final !== null ? (
        <dl className="pairs" aria-labelledby="owed-today">
          <Pair label="Date">{a.date}</Pair>
          {a.overdue ? <Pair label="Days late">{a.days_late}</Pair> : null}
          <Components rows={componentRows(a.components)} />
          <Pair label="Total owed">
            <strong>{money(a.final)}</strong>
          </Pair>
        </dl>
      ) : null}
    </>
  );
}

/** What the payment paid, the day it was priced for, and what the amount is made of. */
function AmountPaidSection({ paid }: { paid: AmountPaid }) {
  return (
    <section aria-labelledby="amount-paid">
      <h2 id="amount-paid">Amount paid</h2>
      <dl className="pairs">
        <Pair label="Amount paid">{money(paid.amount)}</Pair>
        <Pair label="Paid on (São Paulo)">{paid.date}</Pair>
        <Components rows={componentRows(paid.components)} />
      </dl>
    </section>
  );
}

/** What each refund status means for the seller (docs/orders.md, "Refund an order"). */
const REFUND_STATUS: Record<OrderRefundDetail['status'], string> = {
  PROCESSING: 'In progress at the PSP',
  REFUNDED: 'Refunded',
  FAILED: 'Not made by the PSP',
};

/**
 * The order's latest refund, and the refund of a PAID order: not offered while one is in progress at
 * the PSP (payments would answer 409), offered again after one the PSP did not make. The refund asks
 * for a confirmation, and keeps its Idempotency-Key while retried after an unknown outcome.
 */
function Refund({ order: o, onRefunded }: { order: OrderDetail; onRefunded: () => Promise<void> }) {
  const r = o.payment.refund;
  const [confirming, setConfirming] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const { busy, error, run } = useSubmit();
  const keyed = useIdempotencyKey();
  const inProgress = r?.status === 'PROCESSING';
  const refund = () =>
    run(async () => {
      setNotice(null);
      try {
        const res = await keyed({ refund: o.uuid }, (idempotencyKey) =>
          request(MessageResponse, apiPath(`/sellers/orders/${o.uuid}/refund/`), {
            method: 'POST',
            idempotencyKey,
          }),
        );
        setNotice(res.message);
      } finally {
        // Refused too (a refund already in progress, a status that changed): show the order as it is.
        setConfirming(false);
        await onRefunded();
      }
    });
  // Nothing to show or offer: an order never refunded that is not PAID.
  if (!r && o.payment.status !== 'PAID' && !notice) return null;
  return (
    <section aria-labelledby="refund">
      <h2 id="refund">Refund</h2>
      {r ? (
        <dl className="pairs">
          <dt>Status</dt>
          <dd>{REFUND_STATUS[r.status]}</dd>
          <dt>Amount</dt>
          <dd>{money(r.amount)}</dd>
          <dt>Requested</dt>
          <dd>
            <When iso={r.requested_at} />
          </dd>
          <dt>{r.status === 'FAILED' ? 'Failed' : r.status === 'REFUNDED' ? 'Refunded' : 'Updated'}</dt>
          <dd>
            <When iso={r.updated_at} />
          </dd>
          {r.status === 'FAILED' ? (
            <>
              <dt>Reason</dt>
              <dd>{r.failure_reason ?? 'The PSP gave none.'}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {inProgress ? (
        <p>
          The PSP is making the refund. The order stays {o.payment.status} until the PSP confirms it, then
          becomes REFUNDED; it cannot be refunded again meanwhile.
        </p>
      ) : null}
      {r?.status === 'FAILED' && o.payment.status === 'PAID' ? (
        <p className="warning">
          The PSP did not make the refund: the payer has not been paid back and the order is still PAID. Its
          net amount goes back to your available balance. You can ask for the refund again.
        </p>
      ) : null}
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error}</ErrorMessage>
      {o.payment.status === 'PAID' && !inProgress ? (
        confirming ? (
          <div className="toolbar">
            <button type="button" className="danger" disabled={busy} onClick={() => void refund()}>
              {busy ? 'Refunding…' : `Confirm: refund ${money(o.payment.gross_amount)}`}
            </button>
            <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <div className="toolbar">
            <button type="button" onClick={() => setConfirming(true)}>
              Refund the order
            </button>
          </div>
        )
      ) : null}
    </section>
  );
}

function PixQrCode({ uuid }: { uuid: string }) {
  const pix = useLoad(() => request(PixChargeResponse, `/panel/api/orders/${uuid}/pix`), [uuid]);
  const charge = pix.data?.data;
  return (
    <section aria-labelledby="pix">
      <h2 id="pix">PIX QR code</h2>
      <ErrorMessage>{pix.error}</ErrorMessage>
      {charge?.qr_code_image_base64 ? (
        <img
          className="qr"
          src={`data:image/png;base64,${charge.qr_code_image_base64}`}
          alt={`PIX QR code to pay order ${uuid}`}
          width={240}
          height={240}
        />
      ) : null}
      {charge ? (
        <>
          <div className="field">
            <label htmlFor="copy-and-paste">PIX copy and paste code</label>
            <textarea id="copy-and-paste" readOnly rows={3} value={charge.copy_and_paste} />
          </div>
          <CopyButton text={charge.copy_and_paste} label="Copy PIX code" />
        </>
      ) : null}
    </section>
  );
}

/**
 * The deliveries to the order's postback_url (the webhook dispatcher's, through the same routes as an
 * API key: GET and resend under /sellers/orders/{uuid}/postback-deliveries/).
 */
function PostbackDeliveries({ uuid }: { uuid: string }) {
  const paging = useListState({ status: '' });
  const { status } = paging.filters;
  const { cursor } = paging;
  const list = useLoad(
    () =>
      request(
        DeliveryListResponse,
        apiPath(`/sellers/orders/${uuid}/postback-deliveries/`, { status: status || undefined, cursor }),
      ),
    [uuid, paging.key],
  );
  const { notice, error, act } = useActions(list.reload);
  const resend = (d: WebhookDelivery) =>
    act(async () => {
      await perform(apiPath(`/sellers/orders/${uuid}/postback-deliveries/${d.id}/resend/`), {
        method: 'POST',
      });
      return `Postback ${d.event_id} re-queued.`;
    });
  const rows = list.data?.data.results ?? [];
  return (
    <section aria-labelledby="postbacks">
      <h2 id="postbacks">Postback deliveries</h2>
      <div className="toolbar">
        <Select
          label="Postback status"
          value={status}
          onChange={paging.setFilter('status')}
          options={[{ value: '', label: 'all' }, ...DeliveryStatus.options]}
        />
        <RefreshButton onRefresh={list.reload} />
      </div>
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error ?? list.error}</ErrorMessage>
      {list.loading && !list.data ? <Status>Loading postback deliveries…</Status> : null}
      {list.data && rows.length === 0 ? (
        <p>
          {status
            ? `No postback deliveries with status ${status}.`
            : 'No postback deliveries: the order has no postback URL, or none was sent yet.'}
        </p>
      ) : null}
      {rows.length > 0 ? (
        <TableScroll label="Postback deliveries">
          <table>
            <caption className="visually-hidden">Deliveries to the postback URL of the order</caption>
            <ColumnHeads
              columns={[
                'Event',
                'Status',
                'Attempts',
                'Last response',
                'Created',
                'Last attempt',
                'Next attempt',
                'Actions',
              ]}
            />
            <tbody>
              {rows.map((d) => {
                const last = d.attempts.at(-1);
                return (
                  <tr key={d.id}>
                    <th scope="row">
                      {d.event} <code>{d.event_id}</code>
                    </th>
                    <td>{d.status}</td>
                    <td>{d.attempts.length}</td>
                    <td className="wrap">{last ? lastResponse(last) : '—'}</td>
                    <td>
                      <When iso={d.created_at} />
                    </td>
                    <td>
                      <When iso={last?.started_at} />
                    </td>
                    <td>
                      <When iso={d.next_attempt_at} />
                    </td>
                    <td>
                      <button
                        type="button"
                        onClick={() => void resend(d)}
                        aria-label={`Resend postback ${d.event_id}`}
                      >
                        Resend
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      <Pager
        label="postback deliveries"
        page={paging.cursors.length + 1}
        next={list.data?.data.next_cursor}
        onNext={paging.next}
        onPrevious={paging.previous}
      />
    </section>
  );
}

/** An attempt's outcome in a few words: its HTTP status and the start of the answer, or its error. */
function lastResponse(a: WebhookDelivery['attempts'][number]): string {
  if (a.response_status === null) return a.error ?? 'no answer';
  const body = a.response_body ? `: ${a.response_body.slice(0, 120)}` : '';
  return `HTTP ${a.response_status}${body}`;
}
