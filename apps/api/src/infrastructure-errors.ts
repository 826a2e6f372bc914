import { ServiceUnavailableError, unavailableDependencyOf } from '@facilitator/core';

/** A failure of one of our dependencies as the clear 503 naming what is down (the client may retry), not a 500. */
export function asServiceUnavailable(err: unknown): ServiceUnavailableError | undefined {
  const dependency = unavailableDependencyOf(err);
  if (!dependency) return undefined;
  return new ServiceUnavailableError(`the ${dependency} is unavailable; try again shortly`, { dependency }, err);
}
