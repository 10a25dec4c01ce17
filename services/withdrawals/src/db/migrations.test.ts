import { migrations } from './migrations';

/**
 * A migration that has run never changes: a database migrated before would keep the old SQL while a new
 * one got the new. Each migration's SQL is checked against the snapshot taken when it was written; a
 * change of schema is a new migration.
 */
describe('migrations', () => {
  test.each(migrations.map((m) => [m.name, m.class] as const))('%s keeps its SQL', async (_name, Class) => {
    // up() only collects its statements; neither the driver nor the configuration is used.
    const migration = new Class({} as never, {} as never);
    await migration.up();
    expect(migration.getQueries()).toMatchSnapshot();
  });
});
