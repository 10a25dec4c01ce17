import { useEffect, useState, type FormEvent } from 'react';
import { OrderListResponse, OrderStatus, ShippingStatus } from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { money } from '../format';
import { href, navigate } from '../router';
import { classifySearch, searchParams } from '../search';
import { useListState, useLoad } from '../hooks';
import { ColumnHeads, Empty, ErrorMessage, Field, Pager, Select, Status, TableScroll, When } from '../ui';

interface Filters extends Record<string, string> {
  q: string;
  status: string;
  shipping_status: string;
  created_from: string;
  created_to: string;
}
const NO_FILTERS: Filters = { q: '', status: '', shipping_status: '', created_from: '', created_to: '' };

export function OrdersPage() {
  const list = useListState(NO_FILTERS);
  const { filters, cursor } = list;
  const search = classifySearch(filters.q);
  const { q: _q, ...rest } = filters;
  const orders = useLoad(
    () =>
      request(
        OrderListResponse,
        apiPath('/sellers/orders/', { ...rest, ...searchParams(search), cursor, limit: '20' }),
      ),
    [list.key],
  );
  const rows = orders.data?.data.results ?? [];
  const filtered = Object.values(filters).some(Boolean);

  return (
    <>
      <h1>Orders</h1>
      <OrderFilters applied={filters} onApply={list.setFilters} />
      {search.kind === 'invalid' ? <ErrorMessage>{search.message}</ErrorMessage> : null}
      <ErrorMessage>{orders.error}</ErrorMessage>
      {orders.loading ? <Status>Loading orders…</Status> : null}
      {orders.data && rows.length === 0 ? (
        filtered ? (
          <Empty
            action={
              <button type="button" onClick={() => list.setFilters(NO_FILTERS)}>
                Clear the search and filters
              </button>
            }
          >
            No orders match these filters.
          </Empty>
        ) : (
          <Empty action={<a href={href('settings')}>Get an API key in Settings</a>}>
            No orders yet: create one with <code>POST /api/v1/sellers/orders/</code> and an API key.
          </Empty>
        )
      ) : null}
      {rows.length > 0 ? (
        <TableScroll label="Orders">
          <table>
            <caption className="visually-hidden">Orders, newest first</caption>
            <ColumnHeads
              columns={['Order', 'Created', 'Customer', 'Amount', 'Status', 'Tracking']}
              numeric={['Amount']}
            />
            <tbody>
              {rows.map((o) => (
                <tr key={o.uuid}>
                  <th scope="row">
                    <a href={href('orders', o.uuid)} aria-label={`Order ${o.uuid}`}>
                      <code>{o.uuid.slice(0, 8)}</code>
                    </a>
                  </th>
                  <td>
                    <When iso={o.created_at} />
                  </td>
                  <td>
                    {o.customer.name}
                    <div className="hint wrap">{o.customer.email}</div>
                  </td>
                  <td className="num">{money(o.payment.gross_amount)}</td>
                  <td>{o.status}</td>
                  <td>
                    {o.tracking.shipping_status ?? '—'}
                    {o.tracking.tracking_code ? <div className="hint">{o.tracking.tracking_code}</div> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      <Pager
        label="orders"
        page={list.cursors.length + 1}
        next={orders.data?.data.next_cursor}
        onNext={list.next}
        onPrevious={list.previous}
      />
    </>
  );
}

/** The search box and filters, edited here and applied together (to the URL) on submit. */
function OrderFilters({ applied, onApply }: { applied: Filters; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState<Filters>(applied);
  const [searchError, setSearchError] = useState<string[] | undefined>(undefined);
  const set = (key: keyof Filters) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  // Back, Forward or a link change the applied filters: the form shows them.
  const appliedKey = JSON.stringify(applied);
  useEffect(() => setDraft(applied), [appliedKey]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const search = classifySearch(draft.q);
    if (search.kind === 'invalid') {
      setSearchError([search.message]);
      return;
    }
    setSearchError(undefined);
    // An order id opens that order: there is nothing to list.
    if (search.kind === 'order') navigate('orders', search.uuid);
    else onApply({ ...draft, q: draft.q.trim() });
  };

  return (
    <form className="filters" onSubmit={apply} aria-label="Order search and filters" noValidate>
      <div className="search">
        <Field
          label="Search"
          type="search"
          value={draft.q}
          onChange={set('q')}
          hint="Order id, customer e-mail, or CPF/CNPJ"
          errors={searchError}
        />
      </div>
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
      <div className="buttons">
        <button type="submit">Search</button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setSearchError(undefined);
            onApply(NO_FILTERS);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
