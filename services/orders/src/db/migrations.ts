import { Migration } from '@mikro-orm/migrations';
import { kitMigrationSql } from '@seller-api/service-kit';

export const SCHEMA = 'orders';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
  }
}

export const migrations = [{ name: 'Migration20261123Init', class: Migration20261123Init }];
