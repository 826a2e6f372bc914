/** Where a newest-first page resumes: after the last row shown, by (created_at, id) — both descending. */
export interface KeysetCursor {
  createdAt: Date;
  id: string;
}

/**
 * Prisma's filter for the rows after `before` in (created_at DESC, id DESC) order: the ids break ties
 * between rows made in the same millisecond, so a page never skips nor repeats a row.
 */
export function olderThan(before: KeysetCursor | undefined) {
  if (!before) return {};
  // the `lte` alone is what the index can seek to (a deep page does not walk the newer rows); the OR then drops the rows shown
  return { createdAt: { lte: before.createdAt }, OR: [{ createdAt: { lt: before.createdAt } }, { id: { lt: before.id } }] };
}

export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];
