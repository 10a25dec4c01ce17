import fs from 'node:fs';
import path from 'node:path';

// Every repository path the docs and the code comments cite must exist, and every `#anchor` of a
// link to a markdown file must be one of its headings. The rules, chosen so that a finding is a real
// broken reference and not an example:
//
// - Files read: every `*.md` (docs, READMEs, bench/, chaos/, deploy/, helm/, packages/*/) and every
//   `.ts`, `.tsx`, `.js`, `.mjs`, `.cjs` source, outside the directories in SKIPPED_DIRS.
// - In markdown, three kinds of citation are checked: link targets `[text](target)` (relative to the
//   file, or to the repository root when they start with `/`), backticked text that is a path
//   (`` `services/orders/src/x.ts` ``), and bare paths in prose. Backticked and bare paths are checked
//   only when they start with a top-level directory of the repository (TOP_DIRS) and so are
//   repository-relative; a path relative to something else (`db/claims.ts` inside a section about one
//   service) is not checked.
// - Fenced code blocks are skipped: they hold commands and examples of a user's files.
// - In code, only comments are read (`// ...`, and `/* ... */` blocks line by line); strings are not.
//   Paths found there follow the same rules as bare paths in markdown.
// - Not paths, never checked: URLs (anything with `://`, `mailto:`), text with a placeholder or a glob
//   (`<service>`, `{uuid}`, `*`, `$VAR`, `...`), and generated paths (GENERATED: `dist/`, `.cache/`,
//   `node_modules/`, `test/artifacts/`, `coverage/`, `.turbo/`).
// - A path may name a file or a directory. `#anchor` on a markdown file is checked against the file's
//   headings as GitHub turns them into anchors.
// - A section named after a cited markdown file, on the same line, the way docs and comments cite one
//   (`docs/webhooks.md, "Retries"`, `[finance.md](finance.md), "How balances are kept"`,
//   `docs/deploy.md ("Internal keys")`), must be a heading of that file (compared without case, backticks
//   or links; a heading's part before a colon counts too: "bacen-api-pix" for "`bacen-api-pix`: a real
//   PSP"). A section named on the next line is not seen.
// - A backticked path inside a service or package, written relative to its `src/` the way the docs
//   name the files of the service they describe (`db/balances.ts`, `events/sender.ts`; first segment in
//   SRC_DIRS, ending in a source extension), must exist under the `src/` of some service or package.
// - `deploy/<name>` with no extension and no further segment, not a directory of deploy/, is kubectl's
//   short form of a Deployment (`kubectl exec deploy/gateway`), not a path.

const ROOT = path.resolve(__dirname, '../..');
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', '.cache', '.turbo', 'coverage', 'artifacts']);
const CODE_EXTENSIONS = new Set(['.ts', '.tsx', '.js', '.mjs', '.cjs']);
const TOP_DIRS = [
  'services',
  'packages',
  'docs',
  'bench',
  'chaos',
  'test',
  'scripts',
  'fuzz',
  'deploy',
  'helm',
  '.ci',
  '.github',
];
const GENERATED = [
  /(^|\/)dist(\/|$)/,
  /(^|\/)\.cache(\/|$)/,
  /(^|\/)node_modules(\/|$)/,
  /^test\/artifacts(\/|$)/,
];
const GENERATED_MORE = [/(^|\/)coverage(\/|$)/, /(^|\/)\.turbo(\/|$)/];
const SRC_DIRS = ['clients', 'db', 'domain', 'events', 'http', 'jobs', 'panel'];
const SRC_RELATIVE = new RegExp(`^(?:${SRC_DIRS.join('|')})/[\\w./-]+\\.(?:ts|tsx|mjs|sql)$`);
const PLACEHOLDER = /[<>{}*$…]|\.\.\.|\[|\]/;

interface Citation {
  file: string;
  line: number;
  target: string;
  /** Resolved against the citing file's directory (markdown links) rather than the root. */
  relative: boolean;
  /** Relative to the `src/` of some service or package. */
  inSrc?: boolean;
  /** The title of a section of the cited markdown file, named after it. */
  section?: string;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      walk(path.join(dir, entry.name), out);
    } else if (entry.isFile()) {
      out.push(path.relative(ROOT, path.join(dir, entry.name)));
    }
  }
  return out;
}

// A bare path: starts with a top-level directory, at a word start (not inside a longer path or a URL).
const BARE = new RegExp(
  `(?<![\\w./@:-])(?:${TOP_DIRS.map((d) => d.replace('.', '\\.')).join('|')})/[\\w./@<>{}*$…#-]*[\\w/]`,
  'g',
);

export function isIgnored(target: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return true; // a URL or mailto:
  if (PLACEHOLDER.test(target)) return true;
  const bare = target.split('#')[0]!;
  const kubectl = /^deploy\/([\w-]+)$/.exec(bare);
  if (kubectl && !fs.existsSync(path.join(ROOT, 'deploy', kubectl[1]!))) return true;
  return [...GENERATED, ...GENERATED_MORE].some((re) => re.test(bare.replace(/^\.?\//, '')));
}

/** The section named right after a citation that ends at `end` in `line`, if any. */
export function sectionAfter(line: string, end: number): string | undefined {
  const m = /^`?\)?(?:,\s*|\s+\(|,?\s+section\s+|:\s*)"([^"]+)"/.exec(line.slice(end));
  return m?.[1];
}

/** Repository-relative paths in a piece of prose or a comment. */
export function barePaths(text: string): string[] {
  return [...text.matchAll(BARE)].map((m) => m[0].replace(/[.,;:]+$/, ''));
}

/** The citations of one markdown file. */
export function markdownCitations(file: string, text: string): Citation[] {
  const citations: Citation[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (opening) {
      if (fence === null) fence = opening[1]!;
      else if (raw.trim().startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    let prose = raw;
    for (const m of raw.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      prose = prose.replace(m[0], ']()');
      const section = /\.md$/.test(target) ? sectionAfter(raw, m.index + m[0].length) : undefined;
      if (target.startsWith('#')) {
        citations.push({ file, line, target: path.basename(file) + target, relative: true });
      } else if (!isIgnored(target)) {
        citations.push({ file, line, target, relative: !target.startsWith('/'), section });
      }
    }
    for (const m of prose.matchAll(/`([^`]+)`/g)) {
      for (const target of barePaths(m[1]!)) {
        if (isIgnored(target)) continue;
        const whole = target === m[1] && target.endsWith('.md');
        const section = whole ? sectionAfter(prose, m.index + m[0].length) : undefined;
        citations.push({ file, line, target, relative: false, section });
      }
      if (SRC_RELATIVE.test(m[1]!))
        citations.push({ file, line, target: m[1]!, relative: false, inSrc: true });
    }
    const unticked = prose.replace(/`[^`]*`/g, (t) => ' '.repeat(t.length));
    for (const m of unticked.matchAll(BARE)) {
      const target = m[0].replace(/[.,;:]+$/, '');
      if (isIgnored(target)) continue;
      const section = target.endsWith('.md') ? sectionAfter(unticked, m.index + target.length) : undefined;
      citations.push({ file, line, target, relative: false, section });
    }
  });
  return citations;
}

/** The citations in the comments of one source file. */
export function commentCitations(file: string, text: string): Citation[] {
  const citations: Citation[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, index) => {
    let comment = '';
    if (inBlock) {
      const end = raw.indexOf('*/');
      comment = end < 0 ? raw : raw.slice(0, end);
      if (end >= 0) inBlock = false;
    } else {
      const block = /(^|\s)\/\*/.exec(raw);
      const lineComment = /(^|[\s;,)])\/\/(.*)$/.exec(raw);
      if (lineComment && (!block || lineComment.index < block.index)) {
        comment = lineComment[2]!;
      } else if (block) {
        const rest = raw.slice(block.index + block[0].length);
        const end = rest.indexOf('*/');
        comment = end < 0 ? rest : rest.slice(0, end);
        if (end < 0) inBlock = true;
      }
    }
    for (const m of comment.matchAll(BARE)) {
      const target = m[0].replace(/[.,;:]+$/, '');
      if (isIgnored(target)) continue;
      const section = target.endsWith('.md') ? sectionAfter(comment, m.index + target.length) : undefined;
      citations.push({ file, line: index + 1, target, relative: false, section });
    }
  });
  return citations;
}

/** GitHub's anchors for the headings of a markdown text. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const raw of text.split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (opening) {
      if (fence === null) fence = opening[1]!;
      else if (raw.trim().startsWith(fence)) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The headings of a markdown text, as compared with a cited section's title. */
export function headingsOf(text: string): Set<string> {
  const headings = new Set<string>();
  let fence: string | null = null;
  for (const raw of text.split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (opening) {
      if (fence === null) fence = opening[1]!;
      else if (raw.trim().startsWith(fence)) fence = null;
      continue;
    }
    const heading = fence === null ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw) : null;
    if (!heading) continue;
    headings.add(titleKey(heading[1]!));
    const colon = heading[1]!.indexOf(': ');
    if (colon > 0) headings.add(titleKey(heading[1]!.slice(0, colon)));
  }
  return headings;
}

function titleKey(title: string): string {
  return title
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** What is wrong with one citation, or null. */
function problemOf(c: Citation): string | null {
  if (c.inSrc) {
    const found = ['services', 'packages'].some((top) =>
      fs
        .readdirSync(path.join(ROOT, top))
        .some((name) => fs.existsSync(path.join(ROOT, top, name, 'src', c.target))),
    );
    return found ? null : `${c.target} is in the src/ of no service or package`;
  }
  const [pathPart = '', anchor] = c.target.split('#', 2);
  const base = c.relative ? path.dirname(path.join(ROOT, c.file)) : ROOT;
  const resolved = pathPart.startsWith('/')
    ? path.join(ROOT, pathPart)
    : path.join(base, decodeURI(pathPart));
  if (!resolved.startsWith(ROOT)) return `${c.target} points outside the repository`;
  if (!fs.existsSync(resolved)) return `${c.target} does not exist`;
  if (anchor && resolved.endsWith('.md') && fs.statSync(resolved).isFile()) {
    const anchors = anchorsOf(fs.readFileSync(resolved, 'utf8'));
    if (!anchors.has(decodeURIComponent(anchor).toLowerCase())) {
      return `${c.target}: ${path.relative(ROOT, resolved)} has no heading with the anchor #${anchor}`;
    }
  }
  if (c.section && resolved.endsWith('.md') && fs.statSync(resolved).isFile()) {
    if (!headingsOf(fs.readFileSync(resolved, 'utf8')).has(titleKey(c.section))) {
      return `${c.target}, "${c.section}": ${path.relative(ROOT, resolved)} has no such heading`;
    }
  }
  return null;
}

describe('paths cited in docs and comments', () => {
  const files = walk(ROOT);
  const markdown = files.filter((f) => f.endsWith('.md'));
  const code = files.filter((f) => CODE_EXTENSIONS.has(path.extname(f)) && f !== 'test/docs/paths.test.ts');

  it('finds the docs and the sources to read', () => {
    expect(markdown).toEqual(
      expect.arrayContaining(['README.md', 'docs/architecture.md', 'bench/README.md']),
    );
    expect(code.length).toBeGreaterThan(100);
  });

  it('every path cited in markdown exists, and every #anchor is a heading', () => {
    const problems = markdown
      .flatMap((f) => markdownCitations(f, fs.readFileSync(path.join(ROOT, f), 'utf8')))
      .map((c) => [c, problemOf(c)] as const)
      .filter(([, p]) => p !== null)
      .map(([c, p]) => `${c.file}:${c.line}: ${p}`);
    expect(problems).toEqual([]);
  });

  it('every path cited in a code comment exists', () => {
    const problems = code
      .flatMap((f) => commentCitations(f, fs.readFileSync(path.join(ROOT, f), 'utf8')))
      .map((c) => [c, problemOf(c)] as const)
      .filter(([, p]) => p !== null)
      .map(([c, p]) => `${c.file}:${c.line}: ${p}`);
    expect(problems).toEqual([]);
  });
});

describe('the rules', () => {
  it('reads links, backticked and bare paths, and skips code blocks, URLs, globs and placeholders', () => {
    const md = [
      'See [finance](finance.md#how-balances-are-kept) and [site](https://example.com/docs/x.md).',
      'The sender (`services/webhook-dispatcher/src/events/sender.ts`) and test/ops/x.test.ts.',
      'Each `services/*/src`, `node services/<name>/dist/main.js`, `.cache/chaos/<run>/`, `dist/main.js`.',
      'Its claims (`db/delivery-claims.ts`), `kubectl exec deploy/gateway`, `deploy/postgres/x.sql`.',
      '```sh',
      'cat docs/not-checked.md',
      '```',
    ].join('\n');
    expect(markdownCitations('docs/a.md', md).map((c) => c.target)).toEqual([
      'finance.md#how-balances-are-kept',
      'services/webhook-dispatcher/src/events/sender.ts',
      'test/ops/x.test.ts',
      'db/delivery-claims.ts',
      'deploy/postgres/x.sql',
    ]);
  });

  it('reads comments only, line and block, not strings or URLs', () => {
    const ts = [
      "const a = 'docs/in-a-string.md'; // see docs/events.md#outbox",
      "const u = 'http://localhost/docs/x.md';",
      '/**',
      ' * The sender (services/webhook-dispatcher/src/events/sender.ts).',
      ' */',
    ].join('\n');
    expect(commentCitations('x.ts', ts).map((c) => c.target)).toEqual([
      'docs/events.md#outbox',
      'services/webhook-dispatcher/src/events/sender.ts',
    ]);
  });

  it("makes GitHub's anchors", () => {
    const anchors = anchorsOf(
      '# Fault harness (`npm run chaos`)\n## Why?\n## Why?\n```\n# not a heading\n```',
    );
    expect([...anchors]).toEqual(['fault-harness-npm-run-chaos', 'why', 'why-1']);
  });
});
