import { buildStaticBrCode } from './brcode';

/** What the payments service asks of a PSP when it creates a charge. */
export interface PspChargeInput {
  /** Ours, 25 letters and digits (see txid.ts); the PSP's records and notifications carry it back. */
  txid: string;
  amountCents: number;
  expiresAt: Date;
  debtorName: string | null;
  debtorDocument: string | null;
}

export interface PspCharge {
  /** The BR Code the payer's bank app reads (the "PIX copia e cola"). */
  copyAndPaste: string;
  /** The PSP's payload location for a dynamic BR Code; null for a static one. */
  location: string | null;
}

/** The PSP behind the payments service (decisions.md 6); chosen by `PIX_PSP`. */
export interface PspAdapter {
  readonly name: string;
  createCharge(input: PspChargeInput): Promise<PspCharge>;
}

export interface SandboxPspOptions {
  pixKey: string;
  merchantName: string;
  merchantCity: string;
}

/**
 * The sandbox PSP makes a static BR Code locally: the receiving key, the amount and our txid, so the
 * code is one any bank app or parser accepts, and no money can move without the sandbox pay route.
 * Expiry and debtor stay with us: a static code has no room for them.
 */
export function sandboxPsp(options: SandboxPspOptions): PspAdapter {
  return {
    name: 'sandbox',
    async createCharge(input) {
      const copyAndPaste = buildStaticBrCode({
        pixKey: options.pixKey,
        amountCents: input.amountCents,
        merchantName: options.merchantName,
        merchantCity: options.merchantCity,
        txid: input.txid,
      });
      return { copyAndPaste, location: null };
    },
  };
}
