import { classifySearch, searchParams } from './search';

describe('classifySearch', () => {
  it('opens an order by uuid', () => {
    expect(classifySearch(' 3F2504E0-4F89-41D3-9A0C-0305E82C3301 ')).toEqual({
      kind: 'order',
      uuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    });
  });

  it('searches an e-mail as typed', () => {
    const q = classifySearch('Ana.Silva@Example.com');
    expect(q).toEqual({ kind: 'email', email: 'Ana.Silva@Example.com' });
    expect(searchParams(q)).toEqual({ customer_email: 'Ana.Silva@Example.com' });
    expect(classifySearch('ana@')).toMatchObject({ kind: 'invalid' });
  });

  it.each([
    ['529.982.247-25', '52998224725', 'CPF'],
    ['52998224725', '52998224725', 'CPF'],
    ['11.222.333/0001-81', '11222333000181', 'CNPJ'],
    ['11222333000181', '11222333000181', 'CNPJ'],
  ])('reads %s as the %s digits of a %s', (text, taxId, type) => {
    const q = classifySearch(text);
    expect(q).toEqual({ kind: 'tax_id', taxId, type });
    expect(searchParams(q)).toEqual({ customer_tax_id: taxId });
  });

  it('refuses tax ids with wrong check digits and anything else', () => {
    expect(classifySearch('529.982.247-24')).toEqual({
      kind: 'invalid',
      message: 'That CPF is not valid: check its digits.',
    });
    expect(classifySearch('11.222.333/0001-80')).toMatchObject({ kind: 'invalid' });
    expect(classifySearch('maria')).toMatchObject({ kind: 'invalid' });
    expect(classifySearch('12345')).toMatchObject({ kind: 'invalid' });
    expect(classifySearch('   ')).toEqual({ kind: 'none' });
    expect(searchParams({ kind: 'none' })).toEqual({});
  });
});
