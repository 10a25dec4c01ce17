import { Writable } from 'node:stream';

/** A pino destination that keeps every line, so tests can assert on what reached the logs. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }

  text(): string {
    return this.lines.join('\n');
  }
}
