import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/*
 * The layout docs/architecture.md ("Layout") describes, held by the tree: `domain/` is the rules as
 * pure functions over plain data, so a domain file imports no database driver, no ORM, no store and
 * none of the kit's database API, and holds no SQL; background workers live in `jobs/`, not `events/`.
 */
const ROOT = path.resolve(__dirname, '../..');
const SERVICES = readdirSync(path.join(ROOT, 'services'));
const KIT = path.join(ROOT, 'packages/service-kit/src');

const DRIVERS = /^(@mikro-orm\/|pg$|pg-|knex$|kysely$)/;
// A string or template whose text is a statement.
const SQL_TEXT =
  /^\s*(select|insert\s+into|update\s+\S+\s+set|delete\s+from|with\s+\w+\s+as|create\s|alter\s)\b/i;
// What in a kit module's export says it works on the database.
const DB_WORDS = /\b(EntityManager|MikroORM|Sql|SqlQuery|FilterQuery|PoolClient|Client)\b/;

const source = (file: string, text = readFileSync(file, 'utf8')) =>
  ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);

const isTest = (name: string) => name.endsWith('.test.ts');
const tsFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.ts') && !isTest(name))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
};

/** Whether a kit module reaches the database: it imports the ORM or the driver. */
const touchesDatabase = (file: ts.SourceFile) =>
  file.statements.some(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      DRIVERS.test(s.moduleSpecifier.text),
  );

/**
 * The kit's database API: every export of a kit module that reaches the database and whose
 * declaration names a connection, the ORM or SQL (the pure helpers beside them, such as cursors,
 * stay usable).
 */
function kitDatabaseApi(): Set<string> {
  const names = new Set<string>();
  for (const file of tsFiles(KIT)
    .map((f) => source(f))
    .filter(touchesDatabase)) {
    for (const statement of file.statements) {
      const exported = ts.canHaveModifiers(statement)
        ? ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
        : false;
      if (!exported) continue;
      const text = statement.getText(file);
      const sqlInside = /`\s*(select|insert|update|delete|with)\b/i.test(text);
      if (!DB_WORDS.test(text) && !sqlInside) continue;
      const declared: string[] = [];
      if (ts.isVariableStatement(statement))
        for (const d of statement.declarationList.declarations)
          if (ts.isIdentifier(d.name)) declared.push(d.name.text);
      if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isInterfaceDeclaration(statement) ||
          ts.isTypeAliasDeclaration(statement)) &&
        statement.name
      )
        declared.push(statement.name.text);
      for (const name of declared) names.add(name);
    }
  }
  return names;
}

interface Finding {
  file: string;
  what: string;
}

function domainFindings(file: string, kitApi: Set<string>, text?: string): Finding[] {
  const sf = source(file, text);
  const rel = path.relative(ROOT, file);
  const found: Finding[] = [];
  for (const statement of sf.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const from = statement.moduleSpecifier.text;
    const clause = statement.importClause;
    const typeOnly =
      clause?.isTypeOnly === true ||
      (clause !== undefined &&
        clause.name === undefined &&
        clause.namedBindings !== undefined &&
        ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.every((e) => e.isTypeOnly));
    if (DRIVERS.test(from)) found.push({ file: rel, what: `imports ${from}` });
    else if (/^\.\.?\/(\.\.\/)*db\//.test(from) || from.startsWith('../db')) {
      // Row shapes are plain data; anything else of a store is the database.
      if (!typeOnly) found.push({ file: rel, what: `imports a value from ${from}` });
    } else if (
      from === '@seller-api/service-kit' &&
      clause?.namedBindings &&
      ts.isNamedImports(clause.namedBindings)
    ) {
      for (const element of clause.namedBindings.elements) {
        const name = (element.propertyName ?? element.name).text;
        if (kitApi.has(name)) found.push({ file: rel, what: `imports the kit's ${name}` });
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) &&
      SQL_TEXT.test(node.text)
    )
      found.push({ file: rel, what: `holds SQL: ${node.text.trim().slice(0, 40)}` });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test("the kit's database API is found (the check below would pass vacuously otherwise)", () => {
  const api = kitDatabaseApi();
  for (const name of ['Sql', 'sqlOf', 'sqlInTransaction', 'enqueue', 'inTransaction', 'withReplicaLock'])
    expect(api).toContain(name);
  // Pure helpers of the same modules stay usable from domain/.
  expect(api).not.toContain('encodeCursor');
});

test('no domain/ file imports the database or holds SQL', () => {
  const kitApi = kitDatabaseApi();
  const findings = SERVICES.flatMap((service) =>
    tsFiles(path.join(ROOT, 'services', service, 'src/domain')).flatMap((file) =>
      domainFindings(file, kitApi),
    ),
  );
  expect(findings).toEqual([]);
});

test('the check sees what it forbids', () => {
  const kitApi = kitDatabaseApi();
  const probe = [
    "import type { EntityManager } from '@mikro-orm/postgresql';",
    "import { OrderSchema } from '../db/entities';",
    "import type { OrderRow } from '../db/entities';",
    "import { encodeCursor, sqlOf } from '@seller-api/service-kit';",
    "export const probe = [OrderSchema, encodeCursor, sqlOf, 'select 1'];",
    'export type Probe = [EntityManager, OrderRow];',
  ].join('\n');
  expect(domainFindings('services/x/src/domain/bad.ts', kitApi, probe).map((f) => f.what)).toEqual([
    'imports @mikro-orm/postgresql',
    'imports a value from ../db/entities',
    "imports the kit's sqlOf",
    'holds SQL: select 1',
  ]);
});

test('background workers live in jobs/, not events/ or domain/', () => {
  const misplaced = SERVICES.flatMap((service) =>
    ['events', 'domain', 'http'].flatMap((dir) =>
      tsFiles(path.join(ROOT, 'services', service, 'src', dir))
        .filter((file) => /\bstartPeriodicJob\b|\bsetInterval\(/.test(readFileSync(file, 'utf8')))
        .map((file) => path.relative(ROOT, file)),
    ),
  );
  expect(misplaced).toEqual([]);
});
