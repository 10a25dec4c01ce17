import { isDatabaseUnavailable } from './db-errors';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('knows a database that restarts, refuses or drops connections', () => {
    for (const err of [
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P03', 'the database system is starting up'),
      withCode('08006'),
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(isDatabaseUnavailable(err)).toBe(true);
    }
  });

  it('looks through wrapped errors', () => {
    const wrapped = Object.assign(new Error('insert failed'), { previous: withCode('57P01') });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(isDatabaseUnavailable(new Error('outer', { cause: withCode('ECONNREFUSED') }))).toBe(true);
  });

  it('does not take a refused statement for an outage', () => {
    for (const err of [
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('23514', 'check constraint'),
      withCode('40P01', 'deadlock detected'),
      new Error('ledger entry does not balance'),
      // A query after its transaction ended is a bug to see, not an outage to hide.
      new Error('Transaction is already committed'),
      null,
      'a string',
    ]) {
      expect(isDatabaseUnavailable(err)).toBe(false);
    }
  });
});
