// Where the CLI reads a password from when `--password` is not given (npm prints the command line, so a
// password there ends up on the screen and in terminal logs): a prompt without echo on a terminal,
// otherwise the first line of stdin (`--password-stdin`, or a pipe), as `docker login` does.

export type PasswordReader = (options: { confirm: boolean; fromStdin: boolean }) => Promise<string>;

/** The password on stdin's first line (without its line end); the rest of stdin is ignored. */
async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if ((chunk as Buffer).includes(10)) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.split(/\r?\n/)[0] ?? '';
}

/** Asks on stderr and reads one line from the terminal in raw mode, printing nothing of what is typed. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Raw (no echo) before the question shows: what is typed after seeing it is never echoed.
  stdin.setRawMode(true);
  stdin.resume();
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003' || char === '\u0004') return done(new Error('no password given'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    stdin.on('data', onData);
  });
}

export const readPasswordFromProcess: PasswordReader = async ({ confirm, fromStdin }) => {
  if (fromStdin || !process.stdin.isTTY) return firstLineOfStdin();
  const password = await promptHidden('Password (not shown): ');
  if (confirm && (await promptHidden('The same password again: ')) !== password) {
    throw new Error('the two passwords differ; nothing was changed');
  }
  return password;
};
