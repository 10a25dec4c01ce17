import { z } from 'zod';

// ---------------------------------------------------------------------------------------------------
// The messages of a 400 `validation_error`, in our words: one per rule (docs/errors.md, "Messages",
// is the reference and lists every one). A `{…}` part of a template is filled in from the rule
// (`Must be at most {maximum} characters.` → `Must be at most 255 characters.`).
// ---------------------------------------------------------------------------------------------------

export const MESSAGES = {
  required: 'This field is required.',
  unknownField: 'This field is not accepted.',
  unknownQueryParameter: 'This query parameter is not accepted.',
  getBody: 'A GET request takes no body: send filters as query parameters.',
  amount: 'Amounts are integer cents.',
  string: 'Must be a string.',
  number: 'Must be a number.',
  integer: 'Must be an integer.',
  boolean: 'Must be true or false.',
  object: 'Must be an object.',
  array: 'Must be a list.',
  wrongType: 'Has the wrong type.',
  notEmpty: 'Must not be empty.',
  minLength: 'Must be at least {minimum} characters.',
  maxLength: 'Must be at most {maximum} characters.',
  minNumber: 'Must be at least {minimum}.',
  maxNumber: 'Must be at most {maximum}.',
  greaterThan: 'Must be greater than {minimum}.',
  lessThan: 'Must be less than {maximum}.',
  minItems: 'Must have at least {minimum} items.',
  maxItems: 'Must have at most {maximum} items.',
  oneOf: 'Must be one of: {values}.',
  datetime: 'Must be an ISO 8601 datetime.',
  date: 'Must be an ISO 8601 date (YYYY-MM-DD).',
  format: 'Has an invalid format.',
  noForm: 'Does not match any accepted form.',
  invalid: 'Is not valid.',
  // Rules of one kind of field, kept here so that every message is in one list.
  uuid: 'Must be a UUID.',
  taxIdLength: 'Must have 11 digits (CPF) or 14 characters (CNPJ).',
  taxIdRepeated: 'Invalid {type}: a single repeated digit is never issued.',
  taxIdCheckDigits: 'Invalid {type}: check digits do not match.',
  taxIdTypeMismatch: 'Does not match tax_id, which is a {type}.',
  grossAmountRequired: 'Required when the order has no items.',
  withdrawalMinimum: 'Must be at least {minimum} cents.',
  email: 'Must be a valid e-mail address.',
  httpUrl: 'Must be an http or https URL.',
  dateRange: 'Must be between years 0001 and 9999.',
  dateOrDatetime: 'Must be an ISO 8601 date (YYYY-MM-DD) or datetime.',
  postalCode: 'Must be in the format 12345-678 or 8 digits.',
  state: 'Must be 2 uppercase letters.',
  country: 'Must be an ISO 3166-1 alpha-2 code.',
  taxIdSearch: 'Must be a CPF (11 digits) or CNPJ (14 characters); punctuation is ignored.',
  affiliateCode: 'Must be 1 to 64 letters, digits, "_" or "-".',
  eventId: 'Must be an event id (evt_...).',
  eventNamesEmpty: 'Must name at least one event.',
  unknownEventName: 'Unknown event name: {names}.',
  notBeforeCreatedGte: 'Must not be before created_gte.',
  notBeforeSince: 'Must not be before since.',
  toAfterFrom: 'Must be after from.',
  summaryRange: 'Must be at most {days} days after from with granularity {granularity}.',
  timeZone: 'Must be an IANA time zone name such as America/Sao_Paulo.',
  unknownTimeZone: 'Unknown time zone: must be an IANA name such as America/Sao_Paulo.',
  withdrawalStatuses: 'Must be one or more of {values}, separated by commas.',
  pixKeyCpf: 'Must be a valid CPF (11 digits with valid check digits).',
  pixKeyPhone: 'Must be +55 followed by 10 or 11 digits.',
  trackingFieldRequired:
    'At least one of tracking_code, shipping_status, signed_by or estimated_delivery_date must be sent.',
  webhookFieldRequired: 'At least one of url or status must be sent.',
  // Rules of the request around the body: its bytes, its headers, its path and cursor.
  nul: 'Must not contain the NUL character (\\u0000).',
  cursor: 'Must be a next_cursor value returned by this list.',
  percentEncoding: 'Must be valid percent-encoding.',
  idempotencyKey: 'Must be 1 to 255 visible ASCII characters.',
  malformedRequest: 'Not a valid HTTP request.',
  headersTooLarge: 'Headers over the size limit.',
  // Rules that need the seller's data or the clock (the services check them, with the schema's).
  unknownProduct: 'Unknown product.',
  addressForPhysical: 'Required when the order has a physical product.',
  unknownAffiliateCode: 'Unknown affiliate code.',
  expirationPast: 'Must be in the future.',
  expirationTooFar: 'Must be at most 30 days from now.',
  amountTooBig: '{what} exceeds {maximum} cents.',
  discountTooBig: 'May not exceed the subtotal plus shipping.',
  computedAmountTooSmall: 'The computed amount must be at least 1 cent.',
  trackingNeedsItems: 'A tracking update needs an order with items.',
  // Due-date charges (docs/pix.md, "Due-date charges").
  notWithType: 'Not accepted with type {type}.',
  tierDateAscending: 'Must be after the date of the tier before.',
  tierValueDescending: 'Must be below the value of the tier before.',
  tierAfterDueDate: 'Must be on or before due_date.',
  belowAmount: 'Must come to less than the amount ({amount} cents).',
  dueDatePast: 'Must be today or later in São Paulo.',
  dueDateTooFar: 'Must be at most {years} years from today.',
  notWithField: 'Not accepted with {field}.',
  requiredWithField: 'Required with {field}.',
  onlyWithField: 'Only accepted with {field}.',
  calendarPlace: '{problem}.',
  // Webhook and postback targets (docs/webhooks.md, "Target rules"): the rule, never the address.
  liveHttps: 'Live webhooks must use an https URL.',
  targetLive:
    'Not an allowed target: live webhooks and postbacks must reach a public address (docs/webhooks.md, "Target rules").',
  targetTestOpened:
    'Not an allowed target: test webhooks and postbacks may reach public addresses and {opened}, no other internal address (docs/webhooks.md, "Target rules").',
  targetDeployed:
    'Not an allowed target: webhooks and postbacks must reach a public address here; test ones may reach this machine only on a system run locally (npm start), where npm run cli -- webhooks listen --key <test key> receives them (docs/webhooks.md, "Local receivers").',
} as const;

export type MessageRule = keyof typeof MESSAGES;

/** A template with its `{name}` parts filled in. */
export function message(rule: MessageRule, values: Record<string, string | number> = {}): string {
  return fill(MESSAGES[rule], values);
}

function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : String(values[name]),
  );
}

/**
 * Whether a field holds money: `amount`, `price` or `*_amount`, always integer cents (docs/api.md,
 * "Conventions"), so a wrong type there gets the money rule rather than a bare "Must be a number".
 */
function isAmountPath(path: readonly PropertyKey[] | undefined): boolean {
  const last = path?.[path.length - 1];
  return typeof last === 'string' && (last === 'amount' || last === 'price' || last.endsWith('_amount'));
}

const TYPE_MESSAGES: Partial<Record<string, MessageRule>> = {
  string: 'string',
  number: 'number',
  int: 'integer',
  bigint: 'integer',
  boolean: 'boolean',
  object: 'object',
  record: 'object',
  array: 'array',
  tuple: 'array',
};

const sizeOf = (value: unknown) => (typeof value === 'bigint' ? value.toString() : Number(value));

type RawIssue = Parameters<z.core.$ZodErrorMap>[0];

function typeMessage(issue: RawIssue & { code: 'invalid_type' }): string {
  if (issue.input === undefined) return MESSAGES.required;
  if (isAmountPath(issue.path) && ['number', 'int', 'bigint'].includes(issue.expected))
    return MESSAGES.amount;
  const rule = TYPE_MESSAGES[issue.expected];
  return rule ? MESSAGES[rule] : MESSAGES.wrongType;
}

function sizeMessage(issue: RawIssue & { code: 'too_small' | 'too_big' }): string {
  const small = issue.code === 'too_small';
  const bound = sizeOf(small ? issue.minimum : issue.maximum);
  const list = issue.origin === 'array' || issue.origin === 'set';
  if (small && bound === 1 && (list || issue.origin === 'string')) return MESSAGES.notEmpty;
  if (issue.origin === 'string')
    return small ? message('minLength', { minimum: bound }) : message('maxLength', { maximum: bound });
  if (list) return small ? message('minItems', { minimum: bound }) : message('maxItems', { maximum: bound });
  if (issue.inclusive === false)
    return small ? message('greaterThan', { minimum: bound }) : message('lessThan', { maximum: bound });
  return small ? message('minNumber', { minimum: bound }) : message('maxNumber', { maximum: bound });
}

function formatMessage(issue: RawIssue & { code: 'invalid_format' }): string {
  if (issue.format === 'datetime') return MESSAGES.datetime;
  if (issue.format === 'date') return MESSAGES.date;
  return MESSAGES.format;
}

/**
 * The one place a schema rule gets its words: the parse-level error map of every request parse
 * (`safeParseRequest`). A message set on a schema (a domain rule's own, such as a CPF's) wins over it;
 * `unlessMissing` leaves a missing field to it.
 */
export const requestErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return typeMessage(issue);
    case 'unrecognized_keys':
      // Expanded to one entry per key by zodIssuesToFieldErrors (errors.ts).
      return MESSAGES.unknownField;
    case 'too_small':
    case 'too_big':
      return sizeMessage(issue);
    case 'invalid_value':
      return message('oneOf', { values: issue.values.map((value) => String(value)).join(', ') });
    case 'invalid_format':
      return formatMessage(issue);
    case 'invalid_union':
      return MESSAGES.noForm;
    default:
      return MESSAGES.invalid;
  }
};
