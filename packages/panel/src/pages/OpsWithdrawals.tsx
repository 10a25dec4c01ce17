import { useState } from 'react';
import {
  Environment,
  OperatorWithdrawalListResponse,
  WithdrawalResponse,
  WithdrawalStatus,
  type OperatorWithdrawal,
} from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { money, when } from '../format';
import { ErrorMessage, Select, Status, messageOf, useLoad } from '../ui';

/** Operators: withdrawals across sellers, PENDING first of all, to approve or deny. */
export function OpsWithdrawalsPage() {
  const [status, setStatus] = useState('PENDING');
  const [environment, setEnvironment] = useState('');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const list = useLoad(
    () =>
      request(
        OperatorWithdrawalListResponse,
        apiPath('/ops/withdrawals/', { status, environment: environment || undefined, cursor }),
      ),
    [status, environment, cursor],
  );
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const decide = async (w: OperatorWithdrawal, action: 'approve' | 'deny', reason?: string) => {
    setError(null);
    try {
      const res = await request(WithdrawalResponse, apiPath(`/ops/withdrawals/${w.uuid}/${action}/`), {
        method: 'POST',
        body: action === 'deny' && reason ? { reason } : {},
      });
      setNotice(`Withdrawal of ${money(res.data.amount)} for ${w.seller.name}: ${res.data.status}.`);
      await list.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const rows = list.data?.data.results ?? [];
  return (
    <>
      <h1>Withdrawals queue</h1>
      <div className="toolbar">
        <Select
          label="Status"
          value={status}
          onChange={(v) => {
            setCursor(undefined);
            setStatus(v);
          }}
          options={WithdrawalStatus.options}
        />
        <Select
          label="Environment"
          value={environment}
          onChange={(v) => {
            setCursor(undefined);
            setEnvironment(v);
          }}
          options={[{ value: '', label: 'both' }, ...Environment.options]}
        />
        <button type="button" onClick={() => void list.reload()}>
          Refresh
        </button>
      </div>
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error ?? list.error}</ErrorMessage>
      {list.loading && !list.data ? <Status>Loading withdrawals…</Status> : null}
      {list.data && rows.length === 0 ? <p>No {status.toLowerCase()} withdrawals.</p> : null}
      {rows.length > 0 ? (
        <table>
          <caption className="visually-hidden">Withdrawals across sellers</caption>
          <thead>
            <tr>
              <th scope="col">Seller</th>
              <th scope="col">Environment</th>
              <th scope="col">Requested</th>
              <th scope="col">Amount</th>
              <th scope="col">PIX key</th>
              <th scope="col">Status</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
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
      ) : null}
      {list.data?.data.next_cursor ? (
        <button type="button" onClick={() => setCursor(list.data?.data.next_cursor ?? undefined)}>
          Next page
        </button>
      ) : null}
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
      <td>{when(w.requested_at)}</td>
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
          (w.deny_reason ?? when(w.decided_at))
        )}
      </td>
    </tr>
  );
}
