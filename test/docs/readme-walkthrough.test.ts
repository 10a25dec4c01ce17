import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startWithNpmStart, type StartedSystem } from '../support/npm-start';
import { waitFor } from '../support/wait';

// README.md's walk-through, read from README.md itself and run as written, block after block, in one bash
// session against the system `npm start` runs. Under a command, `# {...}` is the answer README.md shows:
// the command's output must match it. `...` stands for any text (`"..."` for any string), so README.md may
// abridge; every field, value and message it shows must be what the API answers today.

const SECTION = '## A walk through the API with curl';
const KEY_FILE = path.join(ROOT, '.seller-api-test-key');

export interface Step {
  /** The shell lines to run. */
  command: string;
  /** The output README.md shows under them (comment marks removed, wrapped lines joined), if any. */
  expected: string | null;
}

export type Block = { kind: 'sh'; steps: Step[]; background: boolean } | { kind: 'text'; text: string };

/** The fenced blocks of README.md's walk-through section, in order. */
export function walkthroughBlocks(readme: string): Block[] {
  const start = readme.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const rest = readme.slice(start + SECTION.length + 2);
  const section = rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
  const blocks: Block[] = [];
  for (const match of section.matchAll(/^```(sh|text)\n([\s\S]*?)^```$/gm)) {
    const [, kind, body = ''] = match;
    if (kind === 'text') blocks.push({ kind: 'text', text: body.trimEnd() });
    else blocks.push({ kind: 'sh', steps: stepsOf(body), background: /\bwebhooks listen\b/.test(body) });
  }
  return blocks;
}

/** Commands, each with the `# {...}` answer shown right under it (JSON outputs only: other comments are comments). */
function stepsOf(body: string): Step[] {
  const steps: Step[] = [];
  let command: string[] = [];
  let expected: string[] | null = null;
  const flush = () => {
    if (command.length > 0 || expected)
      steps.push({ command: command.join('\n'), expected: expected ? expected.join('') : null });
    command = [];
    expected = null;
  };
  for (const line of body.split('\n')) {
    // An answer starts with `# {` (or `# [`) under a command; its wrapped lines with `#  `.
    const output = expected ? /^#\s{2,}(.*)$/.exec(line) : /^# ([[{].*)$/.exec(line);
    if (output && (expected || command.length > 0)) {
      expected ??= [];
      expected.push((output[1] ?? '').trim());
      continue;
    }
    if (expected) flush();
    // Comments are for the reader; blank lines separate nothing.
    if (line.trim() !== '' && !line.startsWith('#')) command.push(line);
  }
  flush();
  return steps;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `expected` as a regular expression: `...` is any text, or any characters of a string before its closing quote. */
export function outputPattern(expected: string): RegExp {
  const parts = expected.split('...');
  let source = escape(parts[0] ?? '');
  for (const part of parts.slice(1)) {
    source += part.startsWith('"') ? '(?:[^"\\\\]|\\\\.)*' : '[\\s\\S]*?';
    source += escape(part);
  }
  return new RegExp(`^${source}$`);
}

describe('walkthroughBlocks', () => {
  it('splits commands from the answers shown under them and joins wrapped answers', () => {
    const readme = [
      SECTION,
      '',
      '```sh',
      'A=1',
      'curl -s x \\',
      '  -d y',
      '# {"message":"One.",',
      '#  "data":{"a":1}}',
      '# a comment, not an answer',
      'curl -s z',
      '```',
      '',
      '```text',
      'a line',
      '```',
      '## Next',
      '```sh',
      'not in the section',
      '```',
    ].join('\n');
    expect(walkthroughBlocks(`\n${readme}\n`)).toEqual([
      {
        kind: 'sh',
        background: false,
        steps: [
          { command: 'A=1\ncurl -s x \\\n  -d y', expected: '{"message":"One.","data":{"a":1}}' },
          { command: 'curl -s z', expected: null },
        ],
      },
      { kind: 'text', text: 'a line' },
    ]);
  });

  it('matches elisions and placeholders, and nothing that drifted', () => {
    const pattern = outputPattern('{"message":"Ok.","data":{"uuid":"...","status":"PAID",...}}');
    expect(pattern.test('{"message":"Ok.","data":{"uuid":"7d5c","status":"PAID","x":1}}')).toBe(true);
    expect(pattern.test('{"message":"Ok.","data":{"uuid":"7d5c","status":"PENDING","x":1}}')).toBe(false);
    expect(pattern.test('{"message":"Ok!","data":{"uuid":"7d5c","status":"PAID"}}')).toBe(false);
    expect(outputPattern('{"id":"evt_..."}').test('{"id":"evt_1","x":"evt_2"}')).toBe(false);
  });
});

describe('README.md walk-through', () => {
  let system: StartedSystem;
  let bash: ChildProcessWithoutNullStreams;
  let stdout = '';
  let stderr = '';
  let listener = 0;
  const listenLog = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'readme-')), 'listen.log');
  const readLog = () => (fs.existsSync(listenLog) ? fs.readFileSync(listenLog, 'utf8') : '');

  beforeAll(async () => {
    system = await startWithNpmStart();
    bash = spawn('bash', ['--noprofile', '--norc'], { cwd: ROOT, env: system.env });
    bash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  }, 240_000);

  afterAll(async () => {
    // A failed run must not leave the listener behind.
    if (listener) {
      try {
        process.kill(-listener, 'SIGTERM');
      } catch {
        // Gone already.
      }
    }
    if (bash && bash.exitCode === null) {
      bash.stdin.end('exit\n');
      await new Promise((resolve) => bash.once('exit', resolve));
    }
    fs.rmSync(KEY_FILE, { force: true });
    await system?.stop();
  });

  let marker = 0;
  /** Runs `command` in the session; its stdout, and the exit status of its last command. */
  async function run(command: string): Promise<{ output: string; status: number }> {
    marker += 1;
    const done = `__step_${marker}_done__`;
    const from = stdout.length;
    // The README's gateway is on 8080; this system's is on a free port.
    const script = command.replaceAll('127.0.0.1:8080', `127.0.0.1:${system.gatewayPort}`);
    bash.stdin.write(`${script}\nprintf '\\n${done} %s\\n' "$?"\n`);
    const found = await waitFor(() => new RegExp(`\\n${done} (\\d+)\\n`).exec(stdout.slice(from)), {
      timeoutMs: 60_000,
      what: `${JSON.stringify(command)} to finish (stderr: ${stderr})`,
    });
    return { output: stdout.slice(from, from + found.index).trim(), status: Number(found[1]) };
  }

  it('works as written, top to bottom, and answers what it shows', async () => {
    const blocks = walkthroughBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    // The order README.md promises: the listener before the payment it reports, the search after it.
    const commands = blocks.flatMap((b) => (b.kind === 'sh' ? b.steps.map((s) => s.command) : []));
    const at = (text: string) => commands.findIndex((c) => c.includes(text));
    expect(at('keys create')).toBe(0);
    expect(at('webhooks listen')).toBeLessThan(at('/sellers/products/'));
    expect(at('/sandbox/orders/')).toBeLessThan(at('status=PAID'));
    expect(at('status=PAID')).toBeLessThan(at('/tracking/'));
    expect(at('/tracking/')).toBeLessThan(at('/finance/balance/'));
    expect(at('/finance/withdrawals/')).toBeLessThan(at('/events/'));

    for (const block of blocks) {
      if (block.kind === 'text') {
        // What the listener's terminal shows by now.
        const pattern = outputPattern(block.text);
        await waitFor(() => pattern.test(readLog().trimEnd()), { timeoutMs: 20_000 }).catch(async () => {
          const events = await run(`curl -s "$API/events/?type=order.paid" -H "Authorization: Bearer $KEY"`);
          throw new Error(
            `The listener did not print\n${block.text}\nIt printed:\n${readLog()}\nEvents: ${events.output}`,
          );
        });
        continue;
      }
      if (block.background) {
        // Its own terminal in README.md: here, in the background, its output in a file.
        const command = block.steps.map((s) => s.command).join('\n');
        // In a process group of its own (job control), which a Ctrl-C in its terminal would signal.
        const started = await run(
          `set -m\n${command} > ${JSON.stringify(listenLog)} 2>&1 &\nLISTENER=$!\nset +m\necho $LISTENER`,
        );
        listener = Number(started.output);
        await waitFor(() => readLog().includes('Listening on'), {
          timeoutMs: 60_000,
          what: `the listener to start (it printed: ${readLog()})`,
        });
        continue;
      }
      for (const step of block.steps) {
        const { output, status } = await run(step.command);
        expect({ command: step.command, status }).toEqual({ command: step.command, status: 0 });
        if (step.expected === null) continue;
        const shown = step.expected;
        expect({ command: step.command, output, matches: outputPattern(shown).test(output) }).toEqual({
          command: step.command,
          output,
          matches: true,
        });
      }
    }

    // Ctrl-C in the listener's terminal (SIGINT to its process group): it deletes the webhook it registered.
    await run('kill -INT -- -$LISTENER');
    await waitFor(() => readLog().includes('Removed 1 webhook(s).'), {
      timeoutMs: 20_000,
      what: `the listener to remove its webhook (it printed: ${readLog()})`,
    });
  }, 180_000);
});
