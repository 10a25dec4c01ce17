import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validate } from 'dockerfile-utils';
import { ROOT } from './helm';

/*
 * The Dockerfile is never built here (no container engine), so it is linted: dockerfile-utils'
 * validator (what the Docker builder itself rejects: unknown instructions and flags, bad arguments,
 * and its warnings), and the rules below, those of hadolint a platform review asks for, which no
 * linter installable here implements (hadolint is a Haskell binary, in neither npm nor Debian).
 * Each rule is also run on a Dockerfile that breaks it, so that none passes by finding nothing.
 */

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Instructions with their continuation lines joined, comments and blank lines left out. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const first = i + 1;
    let line = lines[i] ?? '';
    if (!line.trim() || line.trim().startsWith('#')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      const next = lines[i] ?? '';
      if (!next.trim().startsWith('#')) line = `${line.slice(0, -1)} ${next.trim()}`;
    }
    const [, keyword = '', args = ''] = /^\s*(\S+)\s*(.*)$/.exec(line) ?? [];
    out.push({ keyword: keyword.toUpperCase(), args, line: first });
  }
  return out;
}

/** The rules: each returns the problems it finds, with their line. */
function lintRules(text: string): string[] {
  const all = instructions(text);
  const problems: string[] = [];
  const stages = new Set<string>();
  const at = (i: Instruction, message: string) => problems.push(`line ${i.line}: ${message}`);
  let lastUser = 'root';
  let lastStage = '';
  for (const i of all) {
    if (i.keyword === 'FROM') {
      const [image = '', as, name] = i.args.split(/\s+/);
      if (as?.toUpperCase() === 'AS' && name) {
        if (stages.has(name)) at(i, `DL3024 stage name ${name} used twice`);
        stages.add(name);
      }
      lastStage = name ?? '';
      lastUser = 'root';
      const base = image.split('@')[0] ?? '';
      const external = !stages.has(base) && !base.includes('$');
      if (external) {
        // DL3006/DL3007: an exact version, never latest or a bare name.
        const tag = base.includes(':') ? (base.split(':').pop() ?? '') : '';
        if (!/^\d+\.\d+\.\d+/.test(tag)) at(i, `DL3006/DL3007 ${base} is not pinned to an exact version`);
      }
    }
    if (i.keyword === 'USER') lastUser = i.args.trim();
    if (i.keyword === 'MAINTAINER') at(i, 'DL4000 MAINTAINER is deprecated');
    if (i.keyword === 'ADD') at(i, 'DL3020 use COPY, not ADD');
    if (i.keyword === 'WORKDIR' && !i.args.startsWith('/')) at(i, 'DL3000 WORKDIR must be absolute');
    if ((i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT') && !i.args.trim().startsWith('['))
      at(i, 'DL3025 CMD and ENTRYPOINT in JSON form, so that the process gets signals');
    if (i.keyword === 'COPY' || i.keyword === 'RUN') {
      const from = /--from=(\S+)/.exec(i.args)?.[1];
      if (from && !stages.has(from)) at(i, `DL3022 COPY --from=${from} names no earlier stage`);
    }
    if (i.keyword === 'RUN') {
      const run = i.args.replace(/--mount=\S+/g, '');
      if (/(^|[;&|]\s*)cd\s/.test(run.trim())) at(i, 'DL3003 use WORKDIR, not cd');
      if (/\bsudo\b/.test(run)) at(i, 'DL3004 no sudo');
      if (/\bapt-get\s+install\b/.test(run) && !/--no-install-recommends/.test(run))
        at(i, 'DL3015 apt-get install without --no-install-recommends');
      for (const [, pkg] of run.matchAll(/\bnpm\s+(?:i|install)\s+(?:--?\S+\s+)*([^\s-][^\s]*)/g))
        if (!/@\d+\.\d+\.\d+$/.test(pkg ?? '')) at(i, `DL3016 npm install ${pkg} without an exact version`);
      if (/\bcurl\b[^|]*\|\s*(ba)?sh/.test(run)) at(i, 'DL4006 piping a download into a shell');
    }
  }
  // DL3002: the image does not run as root. The last stage is the image; a stage built FROM another
  // keeps its user, so follow the last USER seen in the chain of stages (here: the runtime stage).
  const image = all.filter((i) => i.keyword === 'USER').pop();
  if (!image || image.args.trim() === 'root' || image.args.trim() === '0')
    problems.push(`DL3002 the image runs as root (last stage ${lastStage || '(unnamed)'}, user ${lastUser})`);
  if (!all.some((i) => i.keyword === 'HEALTHCHECK')) problems.push('no HEALTHCHECK');
  return problems;
}

const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

it('passes dockerfile-utils validation with no error or warning', () => {
  const diagnostics = validate(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  expect(diagnostics).toEqual([]);
  // The validator does find problems: an unknown flag and a deprecated instruction.
  expect(validate('FROM node:24.22.3\nMAINTAINER me\nHEALTHCHECK --interva=1s CMD ls\n').length).toBe(2);
});

it('follows the hadolint rules a platform review asks for', () => {
  expect(lintRules(dockerfile)).toEqual([]);
});

it('the rules find each problem they are for', () => {
  const bad = [
    'FROM node:latest AS a',
    'FROM node AS a',
    'WORKDIR app',
    'ADD x /x',
    'RUN cd /tmp && sudo make',
    'RUN npm install -g turbo',
    'RUN apt-get install -y curl && curl -sL https://example.com/x | sh',
    'COPY --from=nowhere /a /b',
    'CMD node main.js',
  ].join('\n');
  const found = lintRules(bad).join('\n');
  for (const rule of [
    'DL3006',
    'DL3024',
    'DL3000',
    'DL3020',
    'DL3003',
    'DL3004',
    'DL3016',
    'DL3015',
    'DL4006',
    'DL3022',
    'DL3025',
    'DL3002',
    'no HEALTHCHECK',
  ])
    expect({ rule, found: found.includes(rule) }).toEqual({ rule, found: true });
});
