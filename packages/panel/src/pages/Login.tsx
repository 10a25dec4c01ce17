import { useEffect, useRef, useState, type FormEvent } from 'react';
import { PanelSessionResponse, type PanelSession } from '@seller-api/contracts';
import { request, setSession } from '../api';
import { ErrorMessage, Field, fieldErrors, messageOf } from '../ui';

export function LoginPage({ onLoggedIn }: { onLoggedIn: (session: PanelSession) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await request(PanelSessionResponse, '/panel/api/login', {
        method: 'POST',
        body: { email, password },
      });
      setSession(res.data);
      onLoggedIn(res.data);
    } catch (err) {
      setError(messageOf(err));
      setFields(fieldErrors(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="login">
      <h1 tabIndex={-1} ref={heading}>
        Log in to the seller panel
      </h1>
      <form onSubmit={(e) => void submit(e)} noValidate aria-describedby={error ? 'login-error' : undefined}>
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
        <button type="submit" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}
