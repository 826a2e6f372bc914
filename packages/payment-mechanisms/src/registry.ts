import { EXACT_EIP3009, EXACT_PERMIT2, type PaymentMechanismId } from '@facilitator/core';
import { exactEip3009 } from './exact-eip3009';
import { exactPermit2 } from './exact-permit2';
import type { PaymentMechanism } from './mechanism';

/**
 * Every mechanism the engine speaks, by id. A network settles those its registry entry names
 * (`NetworkInfo.mechanisms` in core): adding a mechanism is its folder plus one line here.
 */
const MECHANISMS: { readonly [Id in PaymentMechanismId]: PaymentMechanism<unknown> } = {
  [EXACT_EIP3009]: exactEip3009 as PaymentMechanism<unknown>,
  [EXACT_PERMIT2]: exactPermit2 as PaymentMechanism<unknown>,
};

export function mechanismById(id: PaymentMechanismId): PaymentMechanism<unknown> {
  return MECHANISMS[id];
}

/** The x402 schemes a network's mechanisms answer to, each once, in registration order. */
export function schemesOf(mechanisms: readonly PaymentMechanismId[]): string[] {
  return [...new Set(mechanisms.map((id) => MECHANISMS[id].scheme))];
}

/**
 * The mechanism of `scheme` among a network's that claims the payload's shape (as the reference's `exact`
 * chooses between EIP-3009 and Permit2 by the payload); undefined when none does.
 */
export function mechanismFor(scheme: string, mechanisms: readonly PaymentMechanismId[], payload: unknown): PaymentMechanism<unknown> | undefined {
  return mechanisms.map((id) => MECHANISMS[id]).find((m) => m.scheme === scheme && m.claims(payload));
}

/** Every scheme some mechanism answers to, on any network. */
export function knownSchemes(): string[] {
  return schemesOf(Object.keys(MECHANISMS) as PaymentMechanismId[]);
}
