import { useState, type FormEvent } from 'react';
import { OrderListResponse, OrderStatus, ShippingStatus } from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { money, when } from '../format';
import { href } from '../router';
import { useLoad } from '../hooks';
import { ColumnHeads, ErrorMessage, Field, Select, Status } from '../ui';

interface Filters {
  status: string;
  shipping_status: string;
  created_from: string;
  created_to: string;
}
const NO_FILTERS: Filters = { status: '', shipping_status: '', created_from: '', created_to: '' };

export function OrdersPage() {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  // Keyset pages: the cursors of the pages before this one, to go back.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(
    () => request(OrderListResponse, apiPath('/sellers/orders/', { ...applied, cursor, limit: '20' })),
    [applied, cursor],
  );

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setCursors([]);
    setApplied(draft);
  };
  const set = (key: keyof Filters) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const rows = list.data?.data.results ?? [];

  return (
    <>
      <h1>Orders</h1>
      <form className="filters" onSubmit={apply} aria-label="Order filters">
        <Select
          label="Status"
          value={draft.status}
          onChange={set('status')}
          options={[{ value: '', label: 'any' }, ...OrderStatus.options]}
        />
        <Select
          label="Shipping status"
          value={draft.shipping_status}
          onChange={set('shipping_status')}
          options={[{ value: '', label: 'any' }, ...ShippingStatus.options]}
        />
        <Field label="Created from" type="date" value={draft.created_from} onChange={set('created_from')} />
        <Field label="Created to" type="date" value={draft.created_to} onChange={set('created_to')} />
        <button type="submit">Apply filters</button>
        <button
          type="button"
          onClick={() => {
            setDraft(NO_FILTERS);
            setCursors([]);
            setApplied(NO_FILTERS);
          }}
        >
          Clear filters
        </button>
      </form>
      <ErrorMessage>{list.error}</ErrorMessage>
      {list.loading ? <Status>Loading orders…</Status> : null}
      {list.data && rows.length === 0 ? <p>No orders match.</p> : null}
      {rows.length > 0 ? (
        <table>
          <caption className="visually-hidden">Orders, newest first</caption>
          <ColumnHeads columns={['Order', 'Created', 'Customer', 'Amount', 'Status', 'Tracking']} />
          <tbody>
            {rows.map((o) => (
              <tr key={o.uuid}>
                <th scope="row">
                  <a href={href('orders', o.uuid)} aria-label={`Order ${o.uuid}`}>
                    <code>{o.uuid.slice(0, 8)}</code>
                  </a>
                </th>
                <td>{when(o.created_at)}</td>
                <td>
                  {o.customer.name}
                  <div className="hint">{o.customer.email}</div>
                </td>
                <td>{money(o.payment.gross_amount)}</td>
                <td>{o.status}</td>
                <td>
                  {o.tracking.shipping_status ?? '—'}
                  {o.tracking.tracking_code ? <div className="hint">{o.tracking.tracking_code}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="toolbar">
        {cursors.length > 0 ? (
          <button type="button" onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {list.data?.data.next_cursor ? (
          <button type="button" onClick={() => setCursors((c) => [...c, list.data?.data.next_cursor ?? ''])}>
            Next page
          </button>
        ) : null}
      </div>
    </>
  );
}
