import type { MechanismVocabulary } from '../mechanism';

/** How answers name a Permit2 payload's fields, whichever proxy it is for (upto's amount is its maximum). */
export const PERMIT2_VOCABULARY: MechanismVocabulary = {
  payer: 'permit2Authorization.from',
  payee: 'permit2Authorization.witness.to',
  amount: 'permit2Authorization.permitted.amount',
  spender: 'permit2Authorization.spender',
  checker: 'Permit2',
};
