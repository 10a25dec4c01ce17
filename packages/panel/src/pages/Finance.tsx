import { useState, type FormEvent } from 'react';
import {
  BalanceResponse,
  PixKeyType,
  WithdrawalListResponse,
  WithdrawalResponse,
  WithdrawalStatus,
} from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { money, parseReais } from '../format';
import { useIdempotencyKey, useListState, useLoad, useSubmit } from '../hooks';
import {
  ColumnHeads,
  Empty,
  ErrorMessage,
  Field,
  Pager,
  RefreshButton,
  Select,
  Status,
  SubmitButton,
  TableScroll,
  When,
} from '../ui';

const KEY_TYPES = [
  { value: 'email', label: 'E-mail' },
  { value: 'cpf', label: 'CPF' },
  { value: 'phone', label: 'Phone (+55…)' },
  { value: 'random', label: 'Random key (UUID)' },
] satisfies { value: PixKeyType; label: string }[];

export function FinancePage() {
  const balance = useLoad(() => request(BalanceResponse, apiPath('/finance/balance/')), []);
  const list = useListState({ status: '' });
  const { status } = list.filters;
  const { cursor } = list;
  const withdrawals = useLoad(
    () =>
      request(
        WithdrawalListResponse,
        apiPath('/finance/withdrawals/', { status: status || undefined, cursor }),
      ),
    [list.key],
  );
  const refresh = () => Promise.all([balance.reload(), withdrawals.reload()]);
  const b = balance.data?.data;
  const rows = withdrawals.data?.data.results ?? [];
  return (
    <>
      <h1>Finance</h1>
      <section aria-labelledby="balance">
        <h2 id="balance">Balance</h2>
        <ErrorMessage>{balance.error}</ErrorMessage>
        {b ? (
          <dl className="pairs">
            <dt>Available</dt>
            <dd>{money(b.available_amount)}</dd>
            <dt>In withdrawals under way</dt>
            <dd>{money(b.pending_amount)}</dd>
          </dl>
        ) : (
          <Status>Loading balance…</Status>
        )}
      </section>
      <RequestWithdrawal
        onRequested={async () => {
          // The new withdrawal is first on page 1.
          if (list.cursors.length > 0) list.firstPage();
          await refresh();
        }}
      />
      <section aria-labelledby="withdrawals">
        <h2 id="withdrawals">Withdrawals</h2>
        <div className="toolbar">
          <Select
            label="Status"
            value={status}
            onChange={list.setFilter('status')}
            options={[{ value: '', label: 'any' }, ...WithdrawalStatus.options]}
          />
          <RefreshButton onRefresh={refresh} />
        </div>
        <ErrorMessage>{withdrawals.error}</ErrorMessage>
        {withdrawals.data && rows.length === 0 ? (
          status ? (
            <Empty
              action={
                <button type="button" onClick={() => list.setFilter('status')('')}>
                  Show all withdrawals
                </button>
              }
            >
              No withdrawals with status {status}.
            </Empty>
          ) : (
            <Empty
              action={
                <button
                  type="button"
                  className="secondary"
                  onClick={() => document.getElementById('request-withdrawal')?.focus()}
                >
                  Request a withdrawal
                </button>
              }
            >
              No withdrawals yet: request one when the balance has money available.
            </Empty>
          )
        ) : null}
        {rows.length > 0 ? (
          <TableScroll label="Withdrawals">
            <table>
              <caption className="visually-hidden">Withdrawals, newest first</caption>
              <ColumnHeads
                columns={['Requested', 'Amount', 'PIX key', 'Status', 'Decided', 'Paid', 'Reason']}
                numeric={['Amount']}
              />
              <tbody>
                {rows.map((w) => (
                  <tr key={w.uuid}>
                    <th scope="row">
                      <When iso={w.requested_at} />
                    </th>
                    <td className="num">{money(w.amount)}</td>
                    <td>
                      {w.pix_key} <span className="hint">({w.pix_key_type})</span>
                    </td>
                    <td>{w.status}</td>
                    <td>
                      <When iso={w.decided_at} />
                    </td>
                    <td>
                      <When iso={w.paid_at} />
                    </td>
                    <td>{w.deny_reason ?? w.failure_reason ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        ) : null}
        <Pager
          label="withdrawals"
          page={list.cursors.length + 1}
          next={withdrawals.data?.data.next_cursor}
          onNext={list.next}
          onPrevious={list.previous}
        />
      </section>
    </>
  );
}

function RequestWithdrawal({ onRequested }: { onRequested: () => Promise<void> }) {
  const [amount, setAmount] = useState('');
  const [keyType, setKeyType] = useState<PixKeyType>('email');
  const [pixKey, setPixKey] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const { busy, error, fields, run, refuse } = useSubmit();
  const keyed = useIdempotencyKey();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setNotice(null);
    const cents = parseReais(amount);
    if (cents === null || cents <= 0) {
      refuse({ amount: ['Enter an amount in reais, such as 50,00.'] });
      return;
    }
    const body = { amount: cents, pix_key: pixKey.trim(), pix_key_type: keyType };
    void run(async () => {
      const res = await keyed(body, (idempotencyKey) =>
        request(WithdrawalResponse, apiPath('/finance/withdrawals/'), {
          method: 'POST',
          body,
          idempotencyKey,
        }),
      );
      setNotice(`Withdrawal of ${money(res.data.amount)} requested: ${res.data.status}.`);
      setAmount('');
      setPixKey('');
      await onRequested();
    });
  };

  return (
    <section aria-labelledby="request-withdrawal">
      <h2 id="request-withdrawal" tabIndex={-1}>
        Request a withdrawal
      </h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Amount (R$)"
          value={amount}
          onChange={setAmount}
          inputMode="decimal"
          required
          placeholder="50,00"
          errors={fields.amount}
        />
        <Select
          label="PIX key type"
          value={keyType}
          onChange={(v) => setKeyType(v as PixKeyType)}
          options={KEY_TYPES}
          errors={fields.pix_key_type}
        />
        <Field label="PIX key" value={pixKey} onChange={setPixKey} required errors={fields.pix_key} />
        <ErrorMessage>{error}</ErrorMessage>
        {notice ? <Status>{notice}</Status> : null}
        <SubmitButton busy={busy} label="Request withdrawal" busyLabel="Requesting…" />
      </form>
    </section>
  );
}
