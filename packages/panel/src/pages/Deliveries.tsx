import {
  BulkResendResponse,
  DeliveryListResponse,
  DeliveryStatus,
  WebhookResponse,
  type WebhookDelivery,
} from '@seller-api/contracts';
import { apiPath, perform, request } from '../api';
import { when } from '../format';
import { href } from '../router';
import { useActions, useFilters, useLoad } from '../hooks';
import { ColumnHeads, ErrorMessage, NextPageButton, RefreshButton, Select, Status } from '../ui';

export function DeliveriesPage({ webhookId }: { webhookId: string }) {
  const webhook = useLoad(
    () => request(WebhookResponse, apiPath(`/config/webhooks/${webhookId}/`)),
    [webhookId],
  );
  const { filters, setFilter, cursor, setCursor } = useFilters({ status: '' });
  const { status } = filters;
  const list = useLoad(
    () =>
      request(
        DeliveryListResponse,
        apiPath(`/config/webhooks/${webhookId}/deliveries/`, { status: status || undefined, cursor }),
      ),
    [webhookId, status, cursor],
  );
  const { notice, error, act } = useActions(list.reload);

  const resendOne = (d: WebhookDelivery) =>
    act(async () => {
      await perform(apiPath(`/config/webhooks/${webhookId}/deliveries/${d.id}/resend/`), { method: 'POST' });
      return `Delivery ${d.event_id} re-queued.`;
    });
  const resendDead = () =>
    act(async () => {
      const res = await request(
        BulkResendResponse,
        apiPath(`/config/webhooks/${webhookId}/deliveries/resend/`),
        { method: 'POST', body: { status: 'dead' } },
      );
      return `${res.data.count} dead deliveries re-queued.`;
    });

  const w = webhook.data?.data;
  const rows = list.data?.data.results ?? [];
  return (
    <>
      <p>
        <a href={href('webhooks')}>Back to webhooks</a>
      </p>
      <h1>Deliveries{w ? ` of ${w.event}` : ''}</h1>
      {w ? (
        <p>
          To <span className="wrap">{w.url}</span> ({w.status})
        </p>
      ) : null}
      <ErrorMessage>{webhook.error}</ErrorMessage>
      <div className="toolbar">
        <Select
          label="Status"
          value={status}
          onChange={setFilter('status')}
          options={[{ value: '', label: 'all' }, ...DeliveryStatus.options]}
        />
        <RefreshButton onRefresh={list.reload} />
        <button type="button" onClick={() => void resendDead()}>
          Resend all dead deliveries
        </button>
      </div>
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error ?? list.error}</ErrorMessage>
      {list.loading && !list.data ? <Status>Loading deliveries…</Status> : null}
      {list.data && rows.length === 0 ? <p>No deliveries{status ? ` with status ${status}` : ''}.</p> : null}
      {rows.map((d) => (
        <section key={d.id} className="delivery" aria-labelledby={`delivery-${d.id}`}>
          <h2 id={`delivery-${d.id}`}>
            {d.event} <code>{d.event_id}</code>: {d.status}
          </h2>
          <p>
            Created {when(d.created_at)}
            {d.next_attempt_at ? `; next attempt ${when(d.next_attempt_at)}` : ''}
          </p>
          <button
            type="button"
            onClick={() => void resendOne(d)}
            aria-label={`Resend delivery ${d.event_id}`}
          >
            Resend
          </button>
          {d.attempts.length === 0 ? (
            <p>No attempts yet.</p>
          ) : (
            <table>
              <caption>Attempts of {d.event_id}</caption>
              <ColumnHeads columns={['#', 'Started', 'HTTP status', 'Duration', 'Response', 'Error']} />
              <tbody>
                {d.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <th scope="row">{a.attempt}</th>
                    <td>{when(a.started_at)}</td>
                    <td>{a.response_status ?? '—'}</td>
                    <td>{a.duration_ms} ms</td>
                    <td className="wrap">
                      <code>{a.response_body ?? '—'}</code>
                    </td>
                    <td className="wrap">{a.error ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
      <NextPageButton next={list.data?.data.next_cursor} onNext={setCursor} />
    </>
  );
}
