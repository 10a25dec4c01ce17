import { useState } from 'react';
import {
  OperatorWithdrawalListResponse,
  OperatorWithdrawalResponse,
  WithdrawalStatus,
  WithdrawalSuspensionListResponse,
  WithdrawalSuspensionResponse,
  type OperatorWithdrawal,
  type ReviewReason,
  type WithdrawalSuspension,
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

/** What each review reason means to an operator (docs/finance.md, "Payout controls"). */
const REVIEW_REASONS: Record<ReviewReason, string> = {
  auto_approval_off: 'Automatic approval off',
  amount_over_auto_limit: 'Above the automatic approval limit',
  daily_count_cap: 'Over the daily count cap',
  daily_amount_cap: 'Over the daily amount cap',
  new_pix_key: 'PIX key never paid to',
  seller_suspended: 'Waited while the seller was suspended',
};

type Action = 'approve' | 'deny' | 'cancel';

/**
 * Operators: withdrawals across sellers, PENDING first of all, to approve or deny, with why each waits
 * for them; APPROVED ones not sent to the PSP yet may be canceled; sellers whose withdrawals are
 * suspended are listed above the queue, to lift. Only those of the session's environment (switched
 * like a seller's): an operator never sees or decides the other's.
 */
export function OpsWithdrawalsPage() {
  const paging = useListState({ status: 'PENDING' });
  const { status } = paging.filters;
  const { cursor } = paging;
  const list = useLoad(
    () => request(OperatorWithdrawalListResponse, apiPath('/ops/withdrawals/', { status, cursor })),
    [paging.key],
  );
  const suspensions = useLoad(
    () => request(WithdrawalSuspensionListResponse, apiPath('/ops/withdrawals/suspensions/', {})),
    [paging.key],
  );
  const reload = async () => {
    await Promise.all([list.reload(), suspensions.reload()]);
  };
  const { notice, error, act } = useActions(reload);

  const decide = (w: OperatorWithdrawal, action: Action, reason?: string) =>
    act(async () => {
      const res = await request(
        OperatorWithdrawalResponse,
        apiPath(`/ops/withdrawals/${w.uuid}/${action}/`),
        { method: 'POST', body: action !== 'approve' && reason ? { reason } : {} },
      );
      return `Withdrawal of ${money(res.data.amount)} for ${w.seller.name}: ${res.data.status}.`;
    });
  const suspend = (sellerId: string, name: string, lift: boolean, reason: string) =>
    act(async () => {
      await request(
        WithdrawalSuspensionResponse,
        apiPath(`/ops/withdrawals/sellers/${sellerId}/${lift ? 'unsuspend' : 'suspend'}/`),
        { method: 'POST', body: { reason } },
      );
      return lift ? `Withdrawals of ${name} resumed.` : `Withdrawals of ${name} suspended.`;
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
      <ErrorMessage>{error ?? list.error ?? suspensions.error}</ErrorMessage>
      <Suspended
        rows={suspensions.data?.data.results ?? []}
        onLift={(s, reason) => void suspend(s.seller.id, s.seller.name ?? s.seller.id, true, reason)}
      />
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
              columns={[
                'Seller',
                'Environment',
                'Requested',
                'Amount',
                'PIX key',
                'Status',
                'Why it waits',
                'Decision',
              ]}
            />
            <tbody>
              {rows.map((w) => (
                <Row
                  key={w.uuid}
                  withdrawal={w}
                  onDecide={(action, reason) => void decide(w, action, reason)}
                  onSuspend={(reason) => void suspend(w.seller.id, w.seller.name, false, reason)}
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

/** Sellers whose withdrawals are suspended in this environment, each with its reason, to lift. */
function Suspended({
  rows,
  onLift,
}: {
  rows: WithdrawalSuspension[];
  onLift: (s: WithdrawalSuspension, reason: string) => void;
}) {
  if (rows.length === 0) return null;
  return (
    <section aria-labelledby="suspended-sellers">
      <h2 id="suspended-sellers">Suspended sellers</h2>
      <TableScroll label="Sellers whose withdrawals are suspended">
        <table>
          <caption className="visually-hidden">Sellers whose withdrawals are suspended</caption>
          <ColumnHeads columns={['Seller', 'Reason', 'Since', 'Lift']} />
          <tbody>
            {rows.map((s) => (
              <SuspendedRow key={s.id} suspension={s} onLift={(reason) => onLift(s, reason)} />
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function SuspendedRow({
  suspension: s,
  onLift,
}: {
  suspension: WithdrawalSuspension;
  onLift: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  const name = s.seller.name ?? s.seller.id;
  return (
    <tr>
      <th scope="row">{name}</th>
      <td>{s.reason}</td>
      <td>
        <When iso={s.suspended_at} />
      </td>
      <td className="actions">
        <label className="visually-hidden" htmlFor={`lift-${s.id}`}>
          Reason for lifting the suspension of {name}
        </label>
        <input
          id={`lift-${s.id}`}
          value={reason}
          placeholder="Reason (required)"
          onChange={(e) => setReason(e.target.value)}
        />
        <button
          type="button"
          disabled={reason.trim() === ''}
          onClick={() => onLift(reason.trim())}
          aria-label={`Lift the suspension of ${name}`}
        >
          Lift
        </button>
      </td>
    </tr>
  );
}

function Row({
  withdrawal: w,
  onDecide,
  onSuspend,
}: {
  withdrawal: OperatorWithdrawal;
  onDecide: (action: Action, reason?: string) => void;
  onSuspend: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  const what = `${money(w.amount)} for ${w.seller.name}`;
  const suspension = w.seller.suspension;
  return (
    <tr>
      <th scope="row">
        {w.seller.name}
        {suspension ? <span className="hint"> (withdrawals suspended: {suspension.reason})</span> : null}
      </th>
      <td>{w.environment}</td>
      <td>
        <When iso={w.requested_at} />
      </td>
      <td>{money(w.amount)}</td>
      <td>
        {w.pix_key} <span className="hint">({w.pix_key_type})</span>
      </td>
      <td>{w.status}</td>
      <td>{w.review_reasons.map((r) => REVIEW_REASONS[r]).join('; ') || '—'}</td>
      <td className="actions">
        {w.status === 'PENDING' || w.status === 'APPROVED' ? (
          <>
            {w.status === 'PENDING' && !suspension ? (
              <button
                type="button"
                onClick={() => onDecide('approve')}
                aria-label={`Approve withdrawal of ${what}`}
              >
                Approve
              </button>
            ) : null}
            <label className="visually-hidden" htmlFor={`reason-${w.uuid}`}>
              {w.status === 'PENDING' ? 'Reason for denying' : 'Reason for canceling'} the withdrawal of{' '}
              {what}
            </label>
            <input
              id={`reason-${w.uuid}`}
              value={reason}
              placeholder="Reason (optional)"
              onChange={(e) => setReason(e.target.value)}
            />
            {w.status === 'PENDING' ? (
              <button
                type="button"
                className="danger"
                onClick={() => onDecide('deny', reason.trim() || undefined)}
                aria-label={`Deny withdrawal of ${what}`}
              >
                Deny
              </button>
            ) : (
              <button
                type="button"
                className="danger"
                onClick={() => onDecide('cancel', reason.trim() || undefined)}
                aria-label={`Cancel withdrawal of ${what}`}
              >
                Cancel
              </button>
            )}
            {suspension ? null : (
              <button
                type="button"
                className="secondary"
                disabled={reason.trim() === ''}
                onClick={() => onSuspend(reason.trim())}
                aria-label={`Suspend seller ${w.seller.name} (stops their withdrawals)`}
                title="Needs a reason"
              >
                Suspend seller
              </button>
            )}
          </>
        ) : (
          (w.deny_reason ?? w.cancel_reason ?? <When iso={w.canceled_at ?? w.decided_at} />)
        )}
      </td>
    </tr>
  );
}
