import { useState, type FormEvent } from 'react';
import {
  ApiKeyListResponse,
  CreatedApiKeyResponse,
  Environment,
  type CreatedApiKey,
} from '@seller-api/contracts';
import { request } from '../api';
import { useLoad, useSubmit } from '../hooks';
import {
  ColumnHeads,
  ErrorMessage,
  Field,
  Select,
  ShownOnce,
  Status,
  SubmitButton,
  TableScroll,
  When,
} from '../ui';

export function KeysPage() {
  const keys = useLoad(() => request(ApiKeyListResponse, '/panel/api/keys'), []);
  const [environment, setEnvironment] = useState<Environment>('test');
  const [label, setLabel] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const { busy, error, fields, run } = useSubmit();

  const generate = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const res = await request(CreatedApiKeyResponse, '/panel/api/keys', {
        method: 'POST',
        body: { environment, label: label.trim() || null },
      });
      setCreated(res.data);
      setLabel('');
      await keys.reload();
    });
  };

  const results = keys.data?.data.results ?? [];
  return (
    <>
      <h1>Settings: API keys</h1>
      <p>
        Each user has one active key per environment. <code>test</code> keys reach the sandbox;{' '}
        <code>live</code> keys move real money.
      </p>
      <section aria-labelledby="active-keys">
        <h2 id="active-keys">Active keys</h2>
        {keys.loading && !keys.data ? <Status>Loading keys…</Status> : null}
        <ErrorMessage>{keys.error}</ErrorMessage>
        <TableScroll label="Active keys">
          <table>
            <caption className="visually-hidden">Active API key of each environment</caption>
            <ColumnHeads columns={['Environment', 'Label', 'Key', 'Created']} />
            <tbody>
              {Environment.options.map((env) => {
                const key = results.find((k) => k.environment === env);
                return (
                  <tr key={env}>
                    <th scope="row">{env}</th>
                    {key ? (
                      <>
                        <td>{key.label ?? '—'}</td>
                        <td>
                          <code>
                            {key.prefix}…{key.last4}
                          </code>
                        </td>
                        <td>
                          <When iso={key.created_at} />
                        </td>
                      </>
                    ) : (
                      <td colSpan={3}>No active key</td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      </section>

      {created ? (
        <ShownOnce
          title={`Your new ${created.environment} key`}
          label="New API key"
          value={created.key}
          warning={
            <>
              this key is shown only once: store it now. The previous <code>{created.environment}</code> key,
              if there was one, is revoked now and stops working on its next request.
            </>
          }
        />
      ) : null}

      <section aria-labelledby="generate-key">
        <h2 id="generate-key">Generate a new key</h2>
        <form onSubmit={generate} noValidate>
          <Select
            label="Environment"
            value={environment}
            onChange={(v) => setEnvironment(v as Environment)}
            options={Environment.options}
            errors={fields.environment}
          />
          <Field
            label="Label (optional)"
            value={label}
            onChange={setLabel}
            hint="For example the system that will use it."
            errors={fields.label}
          />
          <p className="warning">Generating a key revokes the current key of that environment at once.</p>
          <ErrorMessage>{error}</ErrorMessage>
          <SubmitButton busy={busy} label="Generate key" busyLabel="Generating…" />
        </form>
      </section>
    </>
  );
}
