import { useState, type FormEvent } from 'react';
import {
  CreateWebhookResponse,
  EVENT_NAMES,
  WebhookListResponse,
  WebhookResponse,
  type Webhook,
  type WebhookWithSecret,
} from '@seller-api/contracts';
import { apiPath, perform, request } from '../api';
import { href } from '../router';
import { useActions, useIdempotencyKey, useListState, useLoad, useSubmit } from '../hooks';
import {
  ColumnHeads,
  Empty,
  ErrorMessage,
  Field,
  Pager,
  Select,
  ShownOnce,
  Status,
  SubmitButton,
  TableScroll,
  When,
} from '../ui';

export function WebhooksPage() {
  const paging = useListState({});
  const { cursor } = paging;
  const list = useLoad(
    () => request(WebhookListResponse, apiPath('/config/webhooks/', { cursor })),
    [paging.key],
  );
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const { notice, error, act, clearNotice } = useActions(list.reload);

  const toggle = (w: Webhook) =>
    act(async () => {
      await request(WebhookResponse, apiPath(`/config/webhooks/${w.id}/`), {
        method: 'PATCH',
        body: { status: w.status === 'ACTIVE' ? 'DISABLED' : 'ACTIVE' },
      });
      return w.status === 'ACTIVE' ? `Webhook for ${w.event} disabled.` : `Webhook for ${w.event} enabled.`;
    });
  const remove = (w: Webhook) =>
    act(async () => {
      await perform(apiPath(`/config/webhooks/${w.id}/`), { method: 'DELETE' });
      return `Webhook for ${w.event} deleted.`;
    });

  const rows = list.data?.data.results ?? [];
  return (
    <>
      <h1>Webhooks</h1>
      <p>One URL per event; each delivery is signed with the webhook's secret.</p>
      {created ? (
        <ShownOnce
          title={`Webhook registered for ${created.event}`}
          label="Signing secret"
          value={created.secret}
          warning="the secret is shown only once: store it now to verify the X-Webhook-Signature of each delivery."
        />
      ) : null}
      <section aria-labelledby="webhook-list">
        <h2 id="webhook-list">Registered webhooks</h2>
        {notice ? <Status>{notice}</Status> : null}
        <ErrorMessage>{error ?? list.error}</ErrorMessage>
        {list.loading && !list.data ? <Status>Loading webhooks…</Status> : null}
        {list.data && rows.length === 0 ? (
          <Empty
            action={
              <button
                type="button"
                className="secondary"
                onClick={() => document.getElementById('new-webhook')?.focus()}
              >
                Add a webhook
              </button>
            }
          >
            No webhooks yet: add one below to be told when an order is created, paid or refunded.
          </Empty>
        ) : null}
        {rows.length > 0 ? (
          <TableScroll label="Registered webhooks">
            <table>
              <caption className="visually-hidden">Registered webhooks</caption>
              <ColumnHeads columns={['Event', 'URL', 'Status', 'Created', 'Actions']} />
              <tbody>
                {rows.map((w) => (
                  <WebhookRow
                    key={w.id}
                    webhook={w}
                    onToggle={() => void toggle(w)}
                    onDelete={() => void remove(w)}
                  />
                ))}
              </tbody>
            </table>
          </TableScroll>
        ) : null}
        <Pager
          label="webhooks"
          page={paging.cursors.length + 1}
          next={list.data?.data.next_cursor}
          onNext={paging.next}
          onPrevious={paging.previous}
        />
      </section>
      <CreateWebhook
        onCreated={async (w) => {
          setCreated(w);
          clearNotice();
          await list.reload();
        }}
      />
    </>
  );
}

function WebhookRow({
  webhook: w,
  onToggle,
  onDelete,
}: {
  webhook: Webhook;
  onToggle: () => void;
  onDelete: () => void;
}) {
  const [confirming, setConfirming] = useState(false);
  return (
    <tr>
      <th scope="row">{w.event}</th>
      <td className="wrap">
        {w.url}
        {w.description ? <div className="hint">{w.description}</div> : null}
      </td>
      <td>{w.status}</td>
      <td>
        <When iso={w.created_at} />
      </td>
      <td className="actions">
        <a href={href('webhooks', w.id)} aria-label={`Deliveries of the ${w.event} webhook`}>
          Deliveries
        </a>
        <button
          type="button"
          onClick={onToggle}
          aria-label={`${w.status === 'ACTIVE' ? 'Disable' : 'Enable'} the ${w.event} webhook`}
        >
          {w.status === 'ACTIVE' ? 'Disable' : 'Enable'}
        </button>
        {confirming ? (
          <>
            <button
              type="button"
              className="danger"
              onClick={onDelete}
              aria-label={`Confirm: delete the ${w.event} webhook`}
            >
              Confirm delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button
            type="button"
            onClick={() => setConfirming(true)}
            aria-label={`Delete the ${w.event} webhook`}
          >
            Delete
          </button>
        )}
      </td>
    </tr>
  );
}

function CreateWebhook({ onCreated }: { onCreated: (w: WebhookWithSecret) => Promise<void> }) {
  const [url, setUrl] = useState('');
  const [event, setEvent] = useState<string>(EVENT_NAMES[0]);
  const [description, setDescription] = useState('');
  const { busy, error, fields, run } = useSubmit();
  const keyed = useIdempotencyKey();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body = { url: url.trim(), event, description: description.trim() || null };
    void run(async () => {
      const res = await keyed(body, (idempotencyKey) =>
        request(CreateWebhookResponse, apiPath('/config/webhooks/'), {
          method: 'POST',
          body,
          idempotencyKey,
        }),
      );
      setUrl('');
      setDescription('');
      await onCreated(res.data);
    });
  };

  return (
    <section aria-labelledby="new-webhook">
      <h2 id="new-webhook" tabIndex={-1}>
        Register a webhook
      </h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="URL"
          type="url"
          inputMode="url"
          value={url}
          onChange={setUrl}
          required
          placeholder="https://example.com/hooks"
          errors={fields.url}
        />
        <Select label="Event" value={event} onChange={setEvent} options={EVENT_NAMES} errors={fields.event} />
        <Field
          label="Description (optional)"
          value={description}
          onChange={setDescription}
          errors={fields.description}
        />
        <ErrorMessage>{error}</ErrorMessage>
        <SubmitButton busy={busy} label="Register webhook" busyLabel="Registering…" />
      </form>
    </section>
  );
}
