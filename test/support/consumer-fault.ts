import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Makes a consumer's messages fail in the database, as during a PostgreSQL restart: while switched
 * on, recording a message of `consumer` as processed raises, so the whole handler's transaction rolls
 * back and the broker sends the message through its retry queue. The failures are counted in a
 * sequence, which a rollback does not undo.
 */
export async function consumerFault(em: () => EntityManager, schema: string, consumer: string) {
  const q = (name: string) => `"${schema}".${name}`;
  await em().execute(`create sequence if not exists ${q('injected_failures')}`);
  await em().execute(`create table if not exists ${q('injected_fault')} (consumer text primary key)`);
  await em()
    .execute(`create or replace function ${q('inject_fault')}() returns trigger language plpgsql as $fn$
    begin
      if exists (select 1 from ${q('injected_fault')} f where f.consumer = new.consumer) then
        perform nextval('${q('injected_failures')}');
        raise exception 'injected failure';
      end if;
      return new;
    end $fn$`);
  await em().execute(`drop trigger if exists inject_fault on ${q('processed_messages')}`);
  await em().execute(`create trigger inject_fault before insert on ${q('processed_messages')}
    for each row execute function ${q('inject_fault')}()`);
  return {
    on: () =>
      em().execute(`insert into ${q('injected_fault')} values (?) on conflict do nothing`, [consumer]),
    off: () => em().execute(`delete from ${q('injected_fault')} where consumer = ?`, [consumer]),
    /** Failures injected so far. */
    async failures(): Promise<number> {
      const rows = await em().execute<Array<{ n: string }>>(
        `select case when is_called then last_value else 0 end as n from ${q('injected_failures')}`,
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
