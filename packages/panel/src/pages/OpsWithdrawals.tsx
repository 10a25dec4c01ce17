import { useState } from 'react';
import {
  OperatorWithdrawalListResponse,
  WithdrawalResponse,
  WithdrawalStatus,
  type OperatorWithdrawal,
} from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { money } from '../format';
import { useActions, useListState, useLoad } from '../hooks';
import {
  ColumnHeads,
  Empty,
  ErrorMessage,
  Pager,
  RefreshButton,
  Select,
  Status,
  TableScroll,
  When,
} from '../ui';

/**
 * Operators: withdrawals across sellers, PENDING first of all, to approve or deny. Only those of the
 * session's environment (switched like a seller's): an operator never sees or decides the other's.
 */
export function OpsWithdrawalsPage() {
  const paging = useListState({ status: 'PENDING' });
  const { status } = paging.filters;
  const { cursor } = paging;
  const list = useLoad(
    () => request(OperatorWithdrawalListResponse, apiPath('/ops/withdrawals/', { status, cursor })),
    [paging.key],
  );
  const { notice, error, act } = useActions(list.reload);

  const decide = (w: OperatorWithdrawal, action: 'approve' | 'deny', reason?: string) =>
    act(async () => {
      const res = await request(WithdrawalResponse, apiPath(`/ops/withdrawals/${w.uuid}/${action}/`), {
        method: 'POST',
        body: action === 'deny' && reason ? { reason } : {},
      });
      return `Withdrawal of ${money(res.data.amount)} for ${w.seller.name}: ${res.data.status}.`;
    });

  const rows = list.data?.data.results ?? [];
  return (
    <>
      <h1>Withdrawals queue</h1>
      <div className="toolbar">
        <Select
          label="Status"
          value={status}
          onChange={paging.setFilter('status')}
          options={WithdrawalStatus.options}
        />
        <RefreshButton onRefresh={list.reload} />
      </div>
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error ?? list.error}</ErrorMessage>
      {list.loading && !list.data ? <Status>Loading withdrawals…</Status> : null}
      {list.data && rows.length === 0 ? (
        <Empty
          action={
            <button type="button" className="secondary" onClick={() => void list.reload()}>
              Check again
            </button>
          }
        >
          No {status.toLowerCase()} withdrawals: nothing to decide now. Sellers' requests appear here.
        </Empty>
      ) : null}
      {rows.length > 0 ? (
        <TableScroll label="Withdrawals across sellers">
          <table>
            <caption className="visually-hidden">Withdrawals across sellers</caption>
            <ColumnHeads
              columns={['Seller', 'Environment', 'Requested', 'Amount', 'PIX key', 'Status', 'Decision']}
            />
            <tbody>
              {rows.map((w) => (
                <Row
                  key={w.uuid}
                  withdrawal={w}
                  onDecide={(action, reason) => void decide(w, action, reason)}
                />
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      <Pager
        label="withdrawals"
        page={paging.cursors.length + 1}
        next={list.data?.data.next_cursor}
        onNext={paging.next}
        onPrevious={paging.previous}
      />
    </>
  );
}

function Row({
  withdrawal: w,
  onDecide,
}: {
  withdrawal: OperatorWithdrawal;
  onDecide: (action: 'approve' | 'deny', reason?: string) => void;
}) {
  const [reason, setReason] = useState('');
  const what = `${money(w.amount)} for ${w.seller.name}`;
  return (
    <tr>
      <th scope="row">{w.seller.name}</th>
      <td>{w.environment}</td>
      <td>
        <When iso={w.requested_at} />
      </td>
      <td>{money(w.amount)}</td>
      <td>
        {w.pix_key} <span className="hint">({w.pix_key_type})</span>
      </td>
      <td>{w.status}</td>
      <td className="actions">
        {w.status === 'PENDING' ? (
          <>
            <button
              type="button"
              onClick={() => onDecide('approve')}
              aria-label={`Approve withdrawal of ${what}`}
            >
              Approve
            </button>
            <label className="visually-hidden" htmlFor={`reason-${w.uuid}`}>
              Reason for denying the withdrawal of {what}
            </label>
            <input
              id={`reason-${w.uuid}`}
              value={reason}
              placeholder="Reason (optional)"
              onChange={(e) => setReason(e.target.value)}
            />
            <button
              type="button"
              className="danger"
              onClick={() => onDecide('deny', reason.trim() || undefined)}
              aria-label={`Deny withdrawal of ${what}`}
            >
              Deny
            </button>
          </>
        ) : (
          (w.deny_reason ?? <When iso={w.decided_at} />)
        )}
      </td>
    </tr>
  );
}
