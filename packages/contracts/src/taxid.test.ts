import { cleanTaxId, isValidCnpj, isValidCpf, isValidTaxId, taxIdTypeOf } from './taxid';

describe('cleanTaxId', () => {
  it('removes dots, dashes, slashes and spaces and uppercases letters', () => {
    expect(cleanTaxId(' 529.982.247-25 ')).toBe('52998224725');
    expect(cleanTaxId('12.abc.345/01de-35')).toBe('12ABC34501DE35');
  });
});

describe('isValidCpf', () => {
  it.each(['52998224725', '11144477735', '12345678909'])('accepts %s', (cpf) => {
    expect(isValidCpf(cpf)).toBe(true);
  });

  it.each([
    ['wrong second digit', '52998224724'],
    ['wrong first digit', '52998224715'],
    ['one repeated digit', '11111111111'],
    ['zeros', '00000000000'],
    ['too short', '5299822472'],
    ['punctuation not cleaned', '529.982.247-25'],
    ['letters', '5299822472A'],
  ])('refuses %s', (_label, cpf) => {
    expect(isValidCpf(cpf)).toBe(false);
  });
});

describe('isValidCnpj', () => {
  it.each(['11222333000181', '11444777000161', '12ABC34501DE35'])('accepts %s', (cnpj) => {
    expect(isValidCnpj(cnpj)).toBe(true);
  });

  it('computes 35 for the Receita Federal alphanumeric example 12ABC34501DE', () => {
    const valid = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).filter((dv) =>
      isValidCnpj(`12ABC34501DE${dv}`),
    );
    expect(valid).toEqual(['35']);
  });

  it.each([
    ['wrong check digits', '11222333000180'],
    ['wrong alphanumeric check digits', '12ABC34501DE36'],
    ['letters in the check digits', '12ABC34501DE3A'],
    ['one repeated digit', '00000000000000'],
    ['one repeated letter', 'AAAAAAAAAAAAAA'],
    ['lowercase letters (not cleaned)', '12abc34501de35'],
    ['13 characters', '1122233300018'],
  ])('refuses %s', (_label, cnpj) => {
    expect(isValidCnpj(cnpj)).toBe(false);
  });
});

describe('taxIdTypeOf', () => {
  it('is CPF for 11 digits, CNPJ for 14 characters, null otherwise', () => {
    expect(taxIdTypeOf('52998224725')).toBe('CPF');
    expect(taxIdTypeOf('11222333000181')).toBe('CNPJ');
    expect(taxIdTypeOf('12ABC34501DE35')).toBe('CNPJ');
    expect(taxIdTypeOf('123456789012')).toBeNull();
    expect(taxIdTypeOf('5299822472A')).toBeNull();
  });
});

describe('isValidTaxId', () => {
  it('cleans first, then checks by type', () => {
    expect(isValidTaxId('529.982.247-25')).toBe(true);
    expect(isValidTaxId('11.222.333/0001-81')).toBe(true);
    expect(isValidTaxId('12.abc.345/01de-35')).toBe(true);
    expect(isValidTaxId('11.222.333/0001-82')).toBe(false);
    expect(isValidTaxId('123')).toBe(false);
  });
});
