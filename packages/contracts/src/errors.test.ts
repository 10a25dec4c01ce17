import { z } from 'zod';
import {
  ERROR_CODES,
  ERROR_STATUS,
  ErrorBody,
  REQUIRED_MESSAGE,
  ValidationErrorBody,
  safeParseRequest,
  validationErrorBody,
  zodIssuesToFieldErrors,
} from './errors';

const Sample = z
  .object({
    name: z.string(),
    tags: z.array(z.string().min(2)),
    nested: z.object({ code: z.string().regex(/^[A-Z]+$/, { error: 'upper case' }) }),
  })
  .refine((value) => value.name !== 'forbidden', { error: 'name is forbidden' });

describe('zodIssuesToFieldErrors', () => {
  it('joins paths with dots and reports every issue', () => {
    const result = Sample.safeParse({ name: 1, tags: ['ok', 'x', 'y'], nested: { code: 'abc' } });
    expect(result.success).toBe(false);
    if (result.success) return;
    const errors = zodIssuesToFieldErrors(result.error);
    expect(Object.keys(errors).sort()).toEqual(['name', 'nested.code', 'tags.1', 'tags.2']);
    expect(errors['nested.code']).toEqual(['upper case']);
  });

  it('puts root-level issues under non_field_errors', () => {
    const result = Sample.safeParse({ name: 'forbidden', tags: [], nested: { code: 'A' } });
    if (result.success) throw new Error('expected failure');
    expect(zodIssuesToFieldErrors(result.error)).toEqual({ non_field_errors: ['name is forbidden'] });
  });

  it('collects several messages for one field', () => {
    const schema = z.object({ code: z.string().min(3).regex(/^\d+$/) });
    const result = schema.safeParse({ code: 'a' });
    if (result.success) throw new Error('expected failure');
    expect(zodIssuesToFieldErrors(result.error).code).toHaveLength(2);
  });
});

describe('validation bodies', () => {
  it('builds a ValidationErrorBody that its own schema accepts', () => {
    const result = safeParseRequest(Sample, { tags: [], nested: { code: 'A' } });
    if (result.success) throw new Error('expected failure');
    const body = validationErrorBody(result.error, 'Invalid order', 'req-1');
    expect(ValidationErrorBody.parse(body)).toEqual({
      message: 'Invalid order',
      code: 'validation_error',
      data: { name: [REQUIRED_MESSAGE] },
      request_id: 'req-1',
    });
  });

  it('gives every error code an HTTP status and refuses unknown codes', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual([...ERROR_CODES].sort());
    expect(ERROR_STATUS.rate_limited).toBe(429);
    expect(ERROR_STATUS.gateway_timeout).toBe(504);
    expect(ErrorBody.safeParse({ message: 'x', code: 'teapot' }).success).toBe(false);
  });
});
