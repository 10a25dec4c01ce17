import type { Seller, User } from '../db/entities';
import {
  UserConflictError,
  existingRoleConflict,
  existingSellerNameConflict,
  newUserInput,
} from './accounts';

const user: User = {
  id: 'u1',
  email: 'ana@example.com',
  role: 'seller',
  sellerId: 's1',
  passwordHash: null,
  createdAt: new Date('2026-11-28T10:00:00Z'),
};
const seller: Seller = { id: 's1', name: 'Loja da Ana', status: 'ACTIVE', createdAt: user.createdAt };

describe('newUserInput', () => {
  it('normalises the e-mail and defaults the role to seller', () => {
    expect(newUserInput({ email: ' Ana@Example.COM ', sellerName: ' Loja ' })).toEqual({
      email: 'ana@example.com',
      role: 'seller',
      sellerName: 'Loja',
    });
  });

  it('refuses a seller name for an operator', () => {
    expect(() => newUserInput({ email: 'op@example.com', role: 'operator', sellerName: 'X' })).toThrow(
      UserConflictError,
    );
  });
});

describe('an existing user', () => {
  it('keeps its role: asking for its own or none is no conflict, another is', () => {
    expect(existingRoleConflict(user.email, user, undefined)).toBeNull();
    expect(existingRoleConflict(user.email, user, 'seller')).toBeNull();
    expect(existingRoleConflict(user.email, user, 'operator')?.message).toMatch(/role seller/);
  });

  it("keeps its seller's name, and has no seller to name when it is an operator", () => {
    expect(existingSellerNameConflict(user.email, user, seller, 'Loja da Ana')).toBeNull();
    expect(existingSellerNameConflict(user.email, user, seller, 'Outra')?.message).toMatch(
      /seller name "Loja da Ana"/,
    );
    const operator = { ...user, role: 'operator' as const, sellerId: null };
    expect(existingSellerNameConflict(user.email, operator, null, 'Loja')?.message).toMatch(
      /without a seller to name/,
    );
  });
});
