import { HttpError } from './errors';
import { assertJson, payloadTooLarge, sizeText } from './body';

const refusal = (text: string): HttpError | null => {
  try {
    assertJson(Buffer.from(text));
    return null;
  } catch (err) {
    return err as HttpError;
  }
};

describe('assertJson', () => {
  it('accepts JSON and an empty body', () => {
    expect(refusal('')).toBeNull();
    expect(refusal('{"name":"Camiseta \\\\u0000 azul"}')).toBeNull();
  });

  it('returns what it parsed, so the caller does not parse the body again', () => {
    expect(assertJson(Buffer.from(''))).toBeUndefined();
    expect(assertJson(Buffer.from('{"a":[1,"\\\\u0000"]}'))).toEqual({ a: [1, '\\u0000'] });
    expect(assertJson(Buffer.from('null'))).toBeNull();
  });

  it('refuses what is not JSON with invalid_json', () => {
    expect(refusal('{"a":')).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it('names every field whose string holds a NUL character, which PostgreSQL cannot store', () => {
    const err = refusal('{"name":"a\\u0000b","items":[{"x":"ok"},{"\\u0000":1}],"c":{"d":"\\u0000"}}');
    expect(err).toMatchObject({ status: 400, code: 'validation_error' });
    expect(Object.keys(err?.data ?? {}).sort()).toEqual(['c.d', 'items.1.\u0000', 'name']);
    expect(refusal('"\\u0000"')?.data).toEqual({ non_field_errors: [expect.any(String)] });
  });
});

describe('the 413 message', () => {
  it('states the cap it was refused over', () => {
    expect(sizeText(1024 * 1024)).toBe('1 MiB');
    expect(sizeText(64 * 1024)).toBe('64 KiB');
    expect(sizeText(1500)).toBe('1500 bytes');
    expect(payloadTooLarge()).toMatchObject({
      status: 413,
      code: 'payload_too_large',
      message: 'Request body exceeds 1 MiB.',
    });
  });
});
