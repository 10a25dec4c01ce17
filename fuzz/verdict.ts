// What a fuzzed request's answer may not be (docs/fuzz.md): a 5xx, a stack trace or SQL in the body,
// or a 4xx outside the documented error shape (`{message, code, request_id?}` with the status its code
// goes with; `validation_error` adds `data`, a map of field paths to messages).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_STATUS, ErrorBody, ValidationErrorBody } from '@seller-api/contracts';

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** A stack frame (`at fn (file.js:1:2)`, `at file.js:1:2`) or a module path. */
const STACK =
  /(?:^|\n|\\n)\s*at (?:async )?(?:[\w$.<>[\] ]+ \()?(?:file:\/\/|node:|\/)[^\s()]*:\d+:\d+|node_modules\//;
/** What PostgreSQL says of a statement it refused, and SQL itself. */
const SQL =
  /duplicate key value|violates (?:not-null|foreign key|check|unique|exclusion) constraint|invalid input syntax for|out of range for type|syntax error at or near|relation "[^"]+" does not exist|invalid byte sequence for encoding|\b(?:select|insert into|update|delete from) [\w".]+ (?:from|set|values|where)\b/i;

/**
 * The messages of docs/errors.md, "Messages" (the reference list of a validation error's messages), as
 * written there: `{…}` marks a part filled in from the rule.
 */
export function documentedMessages(): string[] {
  const text = readFileSync(path.join(__dirname, '../docs/errors.md'), 'utf8');
  const section = text.slice(text.indexOf('### Messages'), text.indexOf('## Codes'));
  return [...section.matchAll(/^\| .+ \| `(.+)` \|$/gm)].map((match) => match[1] as string);
}

/** Whether `message` is `template` with its `{…}` parts filled in. */
export function matchesTemplate(message: string, template: string): boolean {
  return templatePattern(template).test(message);
}

/** Whether `message` is one of the documented ones, its `{…}` parts filled in. */
export function isDocumentedMessage(message: string, documented: readonly string[]): boolean {
  return documented.some((template) => matchesTemplate(message, template));
}

const patterns = new Map<string, RegExp>();
function templatePattern(template: string): RegExp {
  let pattern = patterns.get(template);
  if (!pattern) {
    const escaped = template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\{\w+\\\}/g, '.+');
    pattern = new RegExp(`^${escaped}$`, 's');
    patterns.set(template, pattern);
  }
  return pattern;
}

let documented: string[] | undefined;

/** Why `answer` breaks the rules, or an empty list. */
export function problemsOf(answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (STACK.test(answer.text)) problems.push('stack trace in the body');
  if (SQL.test(answer.text)) problems.push('SQL in the body');
  if (answer.status >= 400 && answer.status < 500) {
    const shape = errorShapeProblem(answer);
    if (shape) problems.push(shape);
  }
  return problems;
}

function errorShapeProblem(answer: Answer): string | null {
  if (!/^application\/json\b/i.test(answer.contentType))
    return `4xx with content-type "${answer.contentType}"`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return '4xx body is not JSON';
  }
  const error = ErrorBody.safeParse(body);
  if (!error.success)
    return `4xx body is not the error shape: ${error.error.issues.map((i) => i.path.join('.') || i.message).join(', ')}`;
  if (ERROR_STATUS[error.data.code] !== answer.status)
    return `code ${error.data.code} goes with ${ERROR_STATUS[error.data.code]}, not ${answer.status}`;
  if (error.data.code !== 'validation_error') return null;
  const validation = ValidationErrorBody.safeParse(body);
  if (!validation.success) return 'validation_error without its data map';
  documented ??= documentedMessages();
  const list = documented;
  const undocumented = Object.values(validation.data.data)
    .flat()
    .filter((message) => !isDocumentedMessage(message, list));
  if (undocumented.length > 0)
    return `message not in docs/errors.md, "Messages": ${undocumented.map((m) => JSON.stringify(m)).join(', ')}`;
  return null;
}
