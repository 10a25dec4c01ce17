import type { CreateOrderInput, CreateProductInput } from '@seller-api/contracts';
import { call } from '../support/system';

export const CPF = '529.982.247-25';
export const CNPJ = '11.222.333/0001-81';

export function address(overrides: Record<string, unknown> = {}) {
  return {
    street: 'Rua das Flores',
    number: '123',
    neighborhood: 'Centro',
    city: 'São Paulo',
    state: 'SP',
    postal_code: '01001000',
    ...overrides,
  };
}

export function customer(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Maria Silva',
    tax_id: CPF,
    email: 'maria.silva@example.com',
    phone: '+5511999990000',
    ...overrides,
  };
}

export function standaloneOrder(overrides: Partial<CreateOrderInput> = {}): CreateOrderInput {
  return { customer: customer(), payment: { gross_amount: 15000 }, ...overrides } as CreateOrderInput;
}

export async function createProduct(url: string, key: string, overrides: Partial<CreateProductInput> = {}) {
  const res = await call(`${url}/sellers/products/`, {
    method: 'POST',
    key,
    body: {
      name: 'Camiseta',
      price: 5000,
      type: 'PHYSICAL',
      images: ['https://cdn.example.com/a.png'],
      commission_unit_amount: 500,
      producer_name: 'Produtora X',
      ...overrides,
    },
  });
  if (res.status !== 201) throw new Error(`product not created: ${res.status} ${res.text}`);
  return (res.body.data as { uuid: string }).uuid;
}

export async function createOrder(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return call(`${url}/sellers/orders/`, { method: 'POST', key, body, headers });
}
