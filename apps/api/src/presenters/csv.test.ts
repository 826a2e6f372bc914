import { csvCell, csvLine } from './csv';

describe('CSV cells', () => {
  it('quotes every cell and doubles quotes inside', () => {
    expect(csvCell('plain')).toBe('"plain"');
    expect(csvCell('say "hi", ok')).toBe('"say ""hi"", ok"');
    expect(csvCell(null)).toBe('""');
    expect(csvCell(12)).toBe('"12"');
  });

  it.each(['=HYPERLINK("http://x")', '+1+1', '-2', '@SUM(A1)', '\tcmd', '\rcmd'])('escapes %j, which a spreadsheet would run', (value) => {
    expect(csvCell(value).startsWith(`"'`)).toBe(true);
  });

  it('leaves ordinary values (addresses, amounts, times) as they are', () => {
    expect(csvCell('0xabc')).toBe('"0xabc"');
    expect(csvCell('2024-05-01T10:00:00.000Z')).toBe('"2024-05-01T10:00:00.000Z"');
    expect(csvLine(['a', 'b'])).toBe('"a","b"\r\n');
  });
});
