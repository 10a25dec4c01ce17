import {
  BulkResendResponse,
  DeliveryListResponse,
  DeliveryStatus,
  WebhookResponse,
  type WebhookDelivery,
} from '@seller-api/contracts';
import { apiPath, perform, request } from '../api';
import { href } from '../router';
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

export function DeliveriesPage({ webhookId }: { webhookId: string }) {
  const webhook = useLoad(
    () => request(WebhookResponse, apiPath(`/config/webhooks/${webhookId}/`)),
    [webhookId],
  );
  const list = useListState({ status: '' });
  const { status } = list.filters;
  const { cursor } = list;
  const deliveries = useLoad(
    () =>
      request(
        DeliveryListResponse,
        apiPath(`/config/webhooks/${webhookId}/deliveries/`, { status: status || undefined, cursor }),
      ),
    [webhookId, list.key],
  );
  const { notice, error, act } = useActions(deliveries.reload);

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
  const rows = deliveries.data?.data.results ?? [];
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
          onChange={list.setFilter('status')}
          options={[{ value: '', label: 'all' }, ...DeliveryStatus.options]}
        />
        <RefreshButton onRefresh={deliveries.reload} />
        <button type="button" onClick={() => void resendDead()}>
          Resend all dead deliveries
        </button>
      </div>
      {notice ? <Status>{notice}</Status> : null}
      <ErrorMessage>{error ?? deliveries.error}</ErrorMessage>
      {deliveries.loading && !deliveries.data ? <Status>Loading deliveries…</Status> : null}
      {deliveries.data && rows.length === 0 ? (
        status ? (
          <Empty
            action={
              <button type="button" onClick={() => list.setFilter('status')('')}>
                Show all deliveries
              </button>
            }
          >
            No deliveries with status {status}.
          </Empty>
        ) : (
          <Empty>
            No deliveries yet: one is made each time {w ? `an ${w.event}` : 'its'} event happens while the
            webhook is active.
          </Empty>
        )
      ) : null}
      {rows.map((d) => (
        <section key={d.id} className="delivery" aria-labelledby={`delivery-${d.id}`}>
          <h2 id={`delivery-${d.id}`}>
            {d.event} <code>{d.event_id}</code>: {d.status}
          </h2>
          <p>
            Created <When iso={d.created_at} />
            {d.next_attempt_at ? (
              <>
                ; next attempt <When iso={d.next_attempt_at} />
              </>
            ) : null}
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
            <TableScroll label={`Attempts of ${d.event_id}`}>
              <table>
                <caption>Attempts of {d.event_id}</caption>
                <ColumnHeads columns={['#', 'Started', 'HTTP status', 'Duration', 'Response', 'Error']} />
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={a.attempt}>
                      <th scope="row">{a.attempt}</th>
                      <td>
                        <When iso={a.started_at} />
                      </td>
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
            </TableScroll>
          )}
        </section>
      ))}
      <Pager
        label="deliveries"
        page={list.cursors.length + 1}
        next={deliveries.data?.data.next_cursor}
        onNext={list.next}
        onPrevious={list.previous}
      />
    </>
  );
}
