import { useEffect, useRef, useState, type FormEvent } from 'react';
import { PanelSessionResponse, type PanelSession } from '@seller-api/contracts';
import { request, setSession } from '../api';
import { useSubmit } from '../hooks';
import { ErrorMessage, Field, SubmitButton } from '../ui';

export function LoginPage({ onLoggedIn }: { onLoggedIn: (session: PanelSession) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, fields, run } = useSubmit();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const res = await request(PanelSessionResponse, '/panel/api/login', {
        method: 'POST',
        body: { email, password },
      });
      setSession(res.data);
      onLoggedIn(res.data);
    });
  };

  return (
    <main id="main" className="login">
      <h1 tabIndex={-1} ref={heading}>
        Log in to the seller panel
      </h1>
      <form onSubmit={submit} noValidate aria-describedby={error ? 'login-error' : undefined}>
        <Field
          label="E-mail"
          type="email"
          value={email}
          onChange={setEmail}
          required
          autoComplete="username"
          errors={fields.email}
        />
        <Field
          label="Password"
          type="password"
          value={password}
          onChange={setPassword}
          required
          autoComplete="current-password"
          errors={fields.password}
        />
        <div id="login-error">
          <ErrorMessage>{error}</ErrorMessage>
        </div>
        <SubmitButton busy={busy} label="Log in" busyLabel="Logging in…" />
      </form>
    </main>
  );
}
