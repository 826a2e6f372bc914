/** Where a retention walk stopped: the last row it read (in its own order). */
export interface RetentionCursor {
  at: Date;
  id: string;
}

/** A walk that has not started: before every row. */
export const RETENTION_START: RetentionCursor = { at: new Date(0), id: '' };

/** One page of a retention walk: the ids that may go, and where to go on from (null: the walk is over). */
export interface RetentionPage {
  ids: string[];
  next: RetentionCursor | null;
}
