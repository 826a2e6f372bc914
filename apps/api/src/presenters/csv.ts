/** Characters a spreadsheet reads as the start of a formula (OWASP "CSV injection"), tab and CR included. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell (RFC 4180): always quoted, quotes doubled, and a cell a spreadsheet would run as a formula
 * prefixed with a single quote, so a value a stranger chose (a payer's metadata, an error) stays text.
 */
export function csvCell(value: string | number | boolean | null): string {
  const text = value === null ? '' : String(value);
  const safe = FORMULA_START.test(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function csvLine(cells: ReadonlyArray<string | number | boolean | null>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
