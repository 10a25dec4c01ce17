import {
  BalanceResponse,
  OrderSummaryResponse,
  WITHDRAWAL_STATUSES_UNDER_WAY,
  WebhooksHealthResponse,
  WithdrawalListResponse,
  type OrderSummary,
  type WebhooksHealth,
} from '@seller-api/contracts';
import { apiPath, request } from '../api';
import { BarChart, StackBar, StackSwatch, type StackPart } from '../Chart';
import { percentOf } from '../chart';
import { browserTimeZone, bucketLabel, count, localText, money } from '../format';
import { useLoad } from '../hooks';
import { isPeriod, PERIODS, periodRange, type Period } from '../period';
import { href, hrefTo, navigateTo, useLocation } from '../router';
import { ColumnHeads, Empty, ErrorMessage, RefreshButton, Status, TableScroll, When } from '../ui';

const DEFAULT_PERIOD: Period = '7d';

/**
 * The seller's start page. Every number comes from an API route that adds it up in the database: the
 * order summary, the webhooks' delivery health, the balance and the withdrawals under way.
 */
export function HomePage() {
  const { path, query } = useLocation();
  const asked = query.get('period');
  const period: Period = isPeriod(asked) ? asked : DEFAULT_PERIOD;
  const timeZone = browserTimeZone();
  const summary = useLoad(() => {
    const range = periodRange(period);
    return request(
      OrderSummaryResponse,
      apiPath('/sellers/orders/summary/', {
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        granularity: range.granularity,
        time_zone: timeZone,
      }),
    );
  }, [period, timeZone]);
  const health = useLoad(() => request(WebhooksHealthResponse, apiPath('/config/webhooks/health/')), []);
  const balance = useLoad(() => request(BalanceResponse, apiPath('/finance/balance/')), []);
  const underWay = useLoad(
    () =>
      request(
        WithdrawalListResponse,
        apiPath('/finance/withdrawals/', { status: WITHDRAWAL_STATUSES_UNDER_WAY.join(','), limit: '5' }),
      ),
    [],
  );
  const refresh = () => Promise.all([summary.reload(), health.reload(), balance.reload(), underWay.reload()]);
  const s = summary.data?.data;
  const periodLabel = PERIODS.find((p) => p.value === period)?.label ?? '';

  return (
    <>
      <h1>Home</h1>
      <div className="toolbar">
        <fieldset className="periods">
          <legend>Period</legend>
          {PERIODS.map((p) => (
            <label key={p.value}>
              <input
                type="radio"
                name="period"
                value={p.value}
                checked={period === p.value}
                onChange={() => navigateTo(path, new URLSearchParams({ period: p.value }))}
              />
              {p.label}
            </label>
          ))}
        </fieldset>
        <RefreshButton onRefresh={refresh} />
      </div>
      <p className="hint">
        Times in your time zone, {timeZone}
        {s ? (
          <>
            : <When iso={s.from} /> to <When iso={s.to} />
          </>
        ) : null}
        .
      </p>

      <section aria-labelledby="sales">
        <h2 id="sales">Sales: {periodLabel.toLowerCase()}</h2>
        <ErrorMessage>{summary.error}</ErrorMessage>
        {summary.loading && !s ? <Status>Loading the summary…</Status> : null}
        {s ? <Sales summary={s} timeZone={timeZone} /> : null}
      </section>

      <section aria-labelledby="webhook-health">
        <h2 id="webhook-health">Webhooks: the last 24 hours</h2>
        <ErrorMessage>{health.error}</ErrorMessage>
        {health.loading && !health.data ? <Status>Loading webhook health…</Status> : null}
        {health.data ? <Health health={health.data.data} /> : null}
      </section>

      <section aria-labelledby="money">
        <h2 id="money">Balance and withdrawals under way</h2>
        <ErrorMessage>{balance.error ?? underWay.error}</ErrorMessage>
        {balance.data ? (
          <dl className="figures">
            <div>
              <dt>Available</dt>
              <dd>{money(balance.data.data.available_amount)}</dd>
            </div>
            <div>
              <dt>In withdrawals under way</dt>
              <dd>{money(balance.data.data.pending_amount)}</dd>
            </div>
          </dl>
        ) : (
          <Status>Loading the balance…</Status>
        )}
        {underWay.data ? <UnderWay list={underWay.data.data} /> : null}
      </section>
    </>
  );
}

function Sales({ summary: s, timeZone }: { summary: OrderSummary; timeZone: string }) {
  const t = s.totals;
  const unit = s.granularity === 'hour' ? 'hour' : 'day';
  const labels = s.buckets.map((b) => bucketLabel(b.start, s.granularity, timeZone));
  const full = s.buckets.map((b) => {
    const text = localText(b.start, timeZone);
    return s.granularity === 'hour' ? text : text.slice(0, 10);
  });
  const outcomes: StackPart[] = [
    { key: 'paid', label: 'Paid', value: t.orders_paid, pattern: 'solid' },
    { key: 'expired', label: 'Expired', value: t.orders_expired, pattern: 'hatched' },
    { key: 'refunded', label: 'Refunded', value: t.orders_refunded, pattern: 'dotted' },
    { key: 'canceled', label: 'Canceled', value: t.orders_canceled, pattern: 'plain' },
  ];
  const outcomeTotal = outcomes.reduce((sum, o) => sum + o.value, 0);
  return (
    <>
      <dl className="figures" aria-label="Totals of the period">
        <div>
          <dt>Orders created</dt>
          <dd data-figure="orders_created">{count(t.orders_created)}</dd>
        </div>
        <div>
          <dt>Orders paid</dt>
          <dd data-figure="orders_paid">{count(t.orders_paid)}</dd>
        </div>
        <div>
          <dt>Amount paid</dt>
          <dd data-figure="amount_paid">{money(t.amount_paid)}</dd>
        </div>
        <div>
          <dt>Fees</dt>
          <dd data-figure="fees">{money(t.fees)}</dd>
        </div>
        <div>
          <dt>Net</dt>
          <dd data-figure="net">{money(t.net)}</dd>
        </div>
      </dl>

      <h3>Amount paid per {unit}</h3>
      <BarChart
        title={`Amount paid per ${unit}`}
        description={`Bars of the amount paid in each ${unit}; the table below gives every value.`}
        labels={labels}
        fullLabels={full}
        axisFormat={(v) => money(v).replace(/,00$/, '')}
        series={[
          {
            key: 'amount_paid',
            label: 'Amount paid',
            values: s.buckets.map((b) => b.amount_paid),
            fill: 'solid',
            format: money,
          },
        ]}
      />
      <h3>Orders created and paid per {unit}</h3>
      <BarChart
        title={`Orders created and paid per ${unit}`}
        description={`Pairs of bars per ${unit}: created (hatched) and paid (solid); the table below gives every value.`}
        labels={labels}
        fullLabels={full}
        axisFormat={(v) => (Number.isInteger(v) ? count(v) : '')}
        series={[
          {
            key: 'created',
            label: 'Created',
            values: s.buckets.map((b) => b.orders_created),
            fill: 'hatched',
            format: count,
          },
          {
            key: 'paid',
            label: 'Paid',
            values: s.buckets.map((b) => b.orders_paid),
            fill: 'solid',
            format: count,
          },
        ]}
      />
      <details>
        <summary>The figures of each {unit} as a table</summary>
        <TableScroll label={`Figures per ${unit}`}>
          <table>
            <caption className="visually-hidden">Figures per {unit}</caption>
            <ColumnHeads
              columns={[unit === 'hour' ? 'Hour' : 'Day', 'Created', 'Paid', 'Amount paid', 'Fees', 'Net']}
              numeric={['Created', 'Paid', 'Amount paid', 'Fees', 'Net']}
            />
            <tbody>
              {s.buckets.map((b, i) => (
                <tr key={b.start}>
                  <th scope="row">
                    <time dateTime={b.start}>{full[i]}</time>
                  </th>
                  <td className="num">{count(b.orders_created)}</td>
                  <td className="num">{count(b.orders_paid)}</td>
                  <td className="num">{money(b.amount_paid)}</td>
                  <td className="num">{money(b.fees)}</td>
                  <td className="num">{money(b.net)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </details>

      <h3>Paid, expired, refunded and canceled</h3>
      {outcomeTotal === 0 ? (
        <Empty action={<a href={href('orders')}>See the orders</a>}>
          No paid, expired, refunded or canceled orders in this period yet.
        </Empty>
      ) : (
        <>
          <StackBar
            parts={outcomes}
            label={outcomes
              .map((o) => `${o.label} ${o.value} (${percentOf(o.value, outcomeTotal)} %)`)
              .join(', ')}
          />
          <ul className="outcomes">
            {outcomes.map((o) => (
              <li key={o.key}>
                <StackSwatch pattern={o.pattern} />
                <span>
                  {o.label}: <strong data-figure={`outcome_${o.key}`}>{count(o.value)}</strong> (
                  {percentOf(o.value, outcomeTotal)} %)
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      <p className="hint">
        Paid counts the orders paid in the period; expired, refunded and canceled, the orders created in it
        that have that status now.
      </p>
    </>
  );
}

function Health({ health }: { health: WebhooksHealth }) {
  const p = health.postbacks;
  return (
    <>
      {health.webhooks.length === 0 ? (
        <Empty action={<a href={href('webhooks')}>Add a webhook</a>}>
          No webhooks yet: add one to be told when an order is paid.
        </Empty>
      ) : (
        <TableScroll label="Webhook deliveries of the last 24 hours">
          <table>
            <caption className="visually-hidden">Deliveries of each webhook in the last 24 hours</caption>
            <ColumnHeads
              columns={['Webhook', 'Delivered', 'Retrying', 'Dead']}
              numeric={['Delivered', 'Retrying', 'Dead']}
            />
            <tbody>
              {health.webhooks.map((w) => (
                <tr key={w.webhook_id}>
                  <th scope="row">
                    <a href={href('webhooks', w.webhook_id)}>{w.event}</a>
                    <div className="hint wrap">
                      {w.url}
                      {w.status === 'ACTIVE' ? '' : ` (${w.status.toLowerCase()})`}
                    </div>
                  </th>
                  <td className="num">{count(w.delivered)}</td>
                  <td className="num">{count(w.retrying)}</td>
                  <td className="num">
                    {w.dead > 0 ? (
                      <a
                        href={hrefTo(['webhooks', w.webhook_id], { status: 'dead' })}
                        aria-label={`${w.dead} dead deliveries of the ${w.event} webhook`}
                        className="alert-count"
                      >
                        {count(w.dead)} dead
                      </a>
                    ) : (
                      '0'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {p.delivered + p.retrying + p.dead > 0 ? (
        <p>
          Order postbacks (the <code>postback_url</code> of orders): {count(p.delivered)} delivered,{' '}
          {count(p.retrying)} retrying, {count(p.dead)} dead.
        </p>
      ) : null}
    </>
  );
}

function UnderWay({ list }: { list: WithdrawalListResponse['data'] }) {
  const rows = list.results;
  if (rows.length === 0)
    return (
      <Empty action={<a href={href('finance')}>Request a withdrawal in Finance</a>}>
        No withdrawals under way.
      </Empty>
    );
  return (
    <>
      <TableScroll label="Withdrawals under way">
        <table>
          <caption className="visually-hidden">Withdrawals under way, newest first</caption>
          <ColumnHeads columns={['Requested', 'Amount', 'Status']} numeric={['Amount']} />
          <tbody>
            {rows.map((w) => (
              <tr key={w.uuid}>
                <th scope="row">
                  <When iso={w.requested_at} />
                </th>
                <td className="num">{money(w.amount)}</td>
                <td>{w.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <p>
        <a href={href('finance')}>
          {list.next_cursor ? 'All withdrawals in Finance' : 'Withdrawals in Finance'}
        </a>
      </p>
    </>
  );
}
