import {
  maskCnpj,
  maskCpf,
  maskEmail,
  maskPhone,
  maskPixKey,
  maskRandomKey,
  maskTaxId,
  redactPixKey,
} from './masking';

describe('tax id masking', () => {
  it('masks a CPF as 123.***.***-00', () => {
    expect(maskCpf('52998224725')).toBe('529.***.***-25');
    expect(maskCpf('529.982.247-25')).toBe('529.***.***-25');
  });

  it('masks a CNPJ as 12.3**.***/****-00, numeric or alphanumeric', () => {
    expect(maskCnpj('11222333000181')).toBe('11.2**.***/****-81');
    expect(maskCnpj('12.ABC.345/01DE-35')).toBe('12.A**.***/****-35');
  });

  it('picks the mask by length', () => {
    expect(maskTaxId('52998224725')).toBe('529.***.***-25');
    expect(maskTaxId('11222333000181')).toBe('11.2**.***/****-81');
  });

  it('hides all but the edges of something that is not a tax id', () => {
    expect(maskCpf('1234567')).toBe('123**67');
    expect(maskCpf('123')).toBe('***');
  });
});

describe('maskEmail', () => {
  it('keeps the first three characters of the local part and the domain, one * per hidden character', () => {
    expect(maskEmail('johndoe@example.com')).toBe('joh****@example.com');
    expect(maskEmail('abcd@x.io')).toBe('abc*@x.io');
  });

  it('keeps one character when the local part has three or fewer', () => {
    expect(maskEmail('abc@example.com')).toBe('a**@example.com');
    expect(maskEmail('ab@example.com')).toBe('a*@example.com');
  });
});

describe('PIX key masking', () => {
  it('keeps +55, the area code and the last 4 digits of a phone', () => {
    expect(maskPhone('+5511987654321')).toBe('+5511*****4321');
    expect(maskPhone('+551187654321')).toBe('+5511****4321');
  });

  it('keeps the first and last 4 characters of a random key, and its length', () => {
    const key = '123e4567-e89b-42d3-a456-426614174000';
    const masked = maskRandomKey(key);
    expect(masked).toBe(`123e${'*'.repeat(28)}4000`);
    expect(masked).toHaveLength(key.length);
  });

  it('masks by type', () => {
    expect(maskPixKey('johndoe@example.com', 'email')).toBe('joh****@example.com');
    expect(maskPixKey('529.982.247-25', 'cpf')).toBe('529.***.***-25');
    expect(maskPixKey('+5511987654321', 'phone')).toBe('+5511*****4321');
    expect(maskPixKey('123e4567-e89b-42d3-a456-426614174000', 'random')).toBe(`123e${'*'.repeat(28)}4000`);
  });
});

describe('redactPixKey', () => {
  it('masks a CPF key however a PSP writes it', () => {
    for (const written of ['52998224725', '529.982.247-25', '529 982 247 25']) {
      const text = `Chave ${written} não encontrada`;
      expect(redactPixKey(text, '52998224725', 'cpf')).toBe('Chave 529.***.***-25 não encontrada');
    }
  });

  it('masks a phone key with or without +55 and separators', () => {
    for (const written of ['+5511987654321', '5511987654321', '11987654321', '(11) 98765-4321']) {
      expect(redactPixKey(`key ${written} blocked`, '+5511987654321', 'phone')).toBe(
        'key +5511*****4321 blocked',
      );
    }
  });

  it('masks e-mail and random keys whatever their case, and leaves other text alone', () => {
    expect(redactPixKey('Chave Maria.Silva@Example.com inválida', 'maria.silva@example.com', 'email')).toBe(
      'Chave mar********@example.com inválida',
    );
    const uuid = '123e4567-e89b-12d3-a456-426614174000';
    expect(redactPixKey(`EVP ${uuid.toUpperCase()}; motivo 42`, uuid, 'random')).toBe(
      `EVP ${maskRandomKey(uuid)}; motivo 42`,
    );
    expect(redactPixKey('Conta encerrada', uuid, 'random')).toBe('Conta encerrada');
  });
});
