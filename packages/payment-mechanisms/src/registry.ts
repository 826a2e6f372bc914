import { networkByChainId } from '@facilitator/core';
import { exactEip3009 } from './exact-eip3009';
import { exactPermit2 } from './exact-permit2';
import type { MechanismNetwork, PaymentMechanism, X402Version } from './mechanism';
import { uptoPermit2 } from './upto-permit2';
import { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2, type PaymentMechanismId } from './mechanism-ids';

/**
 * Every mechanism the engine speaks, by id: adding a mechanism is its folder, its id (`mechanism-ids.ts`),
 * one line here and one in SERVED once it is to be settled.
 */
const MECHANISMS: { readonly [Id in PaymentMechanismId]: PaymentMechanism<unknown> } = {
  [EXACT_EIP3009]: exactEip3009 as PaymentMechanism<unknown>,
  [EXACT_PERMIT2]: exactPermit2 as PaymentMechanism<unknown>,
  [UPTO_PERMIT2]: uptoPermit2 as PaymentMechanism<unknown>,
};

/** Every registered mechanism, in registration order (the conformance suite runs over each). */
export function registeredMechanisms(): PaymentMechanism<unknown>[] {
  return Object.values(MECHANISMS);
}

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

/**
 * The mechanisms the registry's networks serve, in the order a network lists them: registered is not served (a
 * mechanism on its way in is registered, and tested by the conformance suite, before it is listed here). Where
 * one's contracts are missing on a chain, `MechanismAvailability` leaves it out there.
 */
const SERVED_IDS: readonly PaymentMechanismId[] = [EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2];
const SERVED = new Set<string>(SERVED_IDS);

/**
 * The mechanisms the network of `chainId` serves, before availability: those of its chain family (none for a
 * chain outside the registry).
 */
export function mechanismsOn(chainId: number): readonly PaymentMechanismId[] {
  const network = networkByChainId(chainId);
  return network ? SERVED_IDS.filter((id) => MECHANISMS[id].family === network.family) : [];
}

/**
 * The mechanism of `id` where some registry network serves it; undefined for an id this process does not
 * know (a newer process stored it) or registers without serving it anywhere (a mechanism on its way in):
 * such a payment is never executed here.
 */
export function servedMechanismById(id: string): PaymentMechanism<unknown> | undefined {
  return SERVED.has(id) ? MECHANISMS[id as PaymentMechanismId] : undefined;
}

/**
 * Every scheme a mechanism that some registry network serves answers to in x402 `version`: the x402 request
 * parser answers any other scheme `unsupported_scheme` before it reads anything else. A mechanism registered
 * but served nowhere does not list its scheme, so no payload is read by a mechanism the engine cannot settle.
 */
export function knownSchemes(version: X402Version): string[] {
  return schemesOf((Object.keys(MECHANISMS) as PaymentMechanismId[]).filter((id) => SERVED.has(id) && MECHANISMS[id].x402Versions.includes(version)));
}

/** The mechanisms of a network that x402 `version` payloads can carry: what `/x402/supported` lists per version. */
export function mechanismsInVersion(mechanisms: readonly PaymentMechanismId[], version: X402Version): PaymentMechanismId[] {
  return mechanisms.filter((id) => MECHANISMS[id].x402Versions.includes(version));
}

/**
 * Every contract a registered mechanism's direct call goes to on `network`, by the settlement executor's
 * immutable naming each: what an executor item may call, and what an executor is set up with (its token and
 * proxies). A mechanism registered but not served still names its contract: the executor holds it either way.
 */
export function executorTargets(network: MechanismNetwork): Readonly<Record<string, string>> {
  // asked for every executor item on the hot path, of a handful of networks: the registry never changes
  // computed from the key's own spelling: the first caller's spelling of the token must not be what every later caller reads
  const keyed = { chainId: network.chainId, tokenAddress: network.tokenAddress.toLowerCase() };
  const key = `${keyed.chainId}:${keyed.tokenAddress}`;
  let targets = TARGETS_BY_NETWORK.get(key);
  if (!targets) {
    targets = Object.freeze(Object.assign({}, ...registeredMechanisms().map((m) => m.executor?.targets(keyed) ?? {})) as Record<string, string>);
    TARGETS_BY_NETWORK.set(key, targets);
  }
  return targets;
}
const TARGETS_BY_NETWORK = new Map<string, Readonly<Record<string, string>>>();

/** The most gas any registered mechanism's direct call runs beyond the transfer caps (`gas.extra`): what a stored executor item may carry at most besides them. */
export function mostExtraGas(): bigint {
  // read for every stored executor item checked; the registered mechanisms never change
  MOST_EXTRA_GAS ??= registeredMechanisms().reduce((most, m) => {
    const extra = m.gas?.extra({ withPermit: true }) ?? 0n;
    return extra > most ? extra : most;
  }, 0n);
  return MOST_EXTRA_GAS;
}
let MOST_EXTRA_GAS: bigint | undefined;
