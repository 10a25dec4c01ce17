import { useEffect, useRef, useState } from 'react';
import {
  CurrentSessionResponse,
  PanelSessionResponse,
  type Environment,
  type PanelSession,
} from '@seller-api/contracts';
import { perform, request, setSession, whenUnauthorized } from './api';
import { href, navigate, navigateTo, useRoute } from './router';
import { ErrorMessage, messageOf } from './ui';
import { LoginPage } from './pages/Login';
import { HomePage } from './pages/Home';
import { KeysPage } from './pages/Keys';
import { WebhooksPage } from './pages/Webhooks';
import { DeliveriesPage } from './pages/Deliveries';
import { OrdersPage } from './pages/Orders';
import { OrderDetailPage } from './pages/OrderDetail';
import { FinancePage } from './pages/Finance';
import { OpsWithdrawalsPage } from './pages/OpsWithdrawals';

export function App() {
  const [session, setCurrent] = useState<PanelSession | null>(null);
  const [checked, setChecked] = useState(false);
  // After a login the login form is gone: focus goes to the new page instead of getting lost.
  const [fromLogin, setFromLogin] = useState(false);

  const adopt = (next: PanelSession | null) => {
    setSession(next);
    setCurrent(next);
  };

  useEffect(() => {
    whenUnauthorized(() => adopt(null));
    request(CurrentSessionResponse, '/panel/api/session')
      .then((res) => adopt(res.data))
      .catch(() => adopt(null))
      .finally(() => setChecked(true));
  }, []);

  if (!checked) return <p role="status">Loading…</p>;
  if (!session)
    return (
      <LoginPage
        onLoggedIn={(next) => {
          setFromLogin(true);
          adopt(next);
        }}
      />
    );
  return <Shell session={session} onSession={adopt} focusOnMount={fromLogin} />;
}

interface NavItem {
  route: string;
  label: string;
}

function navFor(session: PanelSession): NavItem[] {
  if (session.role === 'operator')
    return [
      { route: 'ops', label: 'Withdrawals queue' },
      { route: 'settings', label: 'Settings: API keys' },
    ];
  return [
    { route: 'home', label: 'Home' },
    { route: 'orders', label: 'Orders' },
    { route: 'webhooks', label: 'Webhooks' },
    { route: 'finance', label: 'Finance' },
    { route: 'settings', label: 'Settings: API keys' },
  ];
}

function Shell({
  session,
  onSession,
  focusOnMount,
}: {
  session: PanelSession;
  onSession: (s: PanelSession | null) => void;
  focusOnMount: boolean;
}) {
  const route = useRoute();
  const items = navFor(session);
  const page = route[0] ?? items[0]?.route ?? 'settings';
  const [error, setError] = useState<string | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const main = useRef<HTMLElement>(null);

  // A new page moves focus to its content, so keyboard and screen reader users start there.
  const key = route.join('/');
  const focusedFor = useRef<string | null>(focusOnMount ? null : key);
  useEffect(() => {
    setMenuOpen(false);
    if (focusedFor.current === key) return;
    focusedFor.current = key;
    main.current?.focus();
  }, [key]);

  const switchEnvironment = async (environment: Environment) => {
    try {
      const res = await request(PanelSessionResponse, '/panel/api/session/environment', {
        method: 'POST',
        body: { environment },
      });
      onSession(res.data);
      // Filters and cursors belong to the other environment's data: start the page afresh.
      navigateTo(route);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const logout = async () => {
    try {
      await perform('/panel/api/logout', { method: 'POST' });
    } finally {
      onSession(null);
      navigate('');
    }
  };

  return (
    <>
      <a
        className="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          main.current?.focus();
        }}
      >
        Skip to content
      </a>
      <header className="top">
        <p className="brand">Seller panel</p>
        <p className="who">
          {session.email}
          {session.seller_name ? ` · ${session.seller_name}` : ''} · {session.role}
        </p>
        <div className="field inline">
          <label htmlFor="environment">Panel environment</label>
          <select
            id="environment"
            value={session.environment}
            onChange={(e) => void switchEnvironment(e.target.value as Environment)}
          >
            <option value="test">test (sandbox)</option>
            <option value="live">live</option>
          </select>
        </div>
        <button type="button" onClick={() => void logout()}>
          Log out
        </button>
      </header>
      <nav aria-label="Main" className={menuOpen ? 'main-nav open' : 'main-nav'}>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-menu"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <ul id="main-menu">
          {items.map((item) => (
            <li key={item.route}>
              <a href={href(item.route)} aria-current={page === item.route ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1} ref={main}>
        <ErrorMessage>{error}</ErrorMessage>
        <Page route={route} page={page} session={session} />
      </main>
    </>
  );
}

function Page({ route, page, session }: { route: string[]; page: string; session: PanelSession }) {
  const env = session.environment;
  switch (page) {
    case 'home':
      return <HomePage key={env} />;
    case 'settings':
      return <KeysPage />;
    case 'webhooks':
      return route[1] ? (
        <DeliveriesPage key={`${env}-${route[1]}`} webhookId={route[1]} />
      ) : (
        <WebhooksPage key={env} />
      );
    case 'orders':
      return route[1] ? (
        <OrderDetailPage key={`${env}-${route[1]}`} uuid={route[1]} />
      ) : (
        <OrdersPage key={env} />
      );
    case 'finance':
      return <FinancePage key={env} />;
    case 'ops':
      return <OpsWithdrawalsPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            <a href={href('')}>Go to the start page</a>
          </p>
        </>
      );
  }
}
