import type { Request } from 'express';

/** `Authorization: Bearer <key>`, as @x402/core's HTTPFacilitatorClient sends it through createAuthHeaders. */
export function bearerKey(req: Request): string | undefined {
  const match = /^Bearer\s+(\S{1,256})\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}
