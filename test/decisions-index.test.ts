// The decision log (docs/decisions/) is read through its index: a section missing from the index is a
// decision nobody finds, and an index line whose link leads nowhere sends a reader to nothing.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { githubAnchor } from './support/markdown';

const DIR = path.resolve(__dirname, '../docs/decisions');
const INDEX = 'README.md';

/** `file#anchor` of every `## ` heading of the topic files. */
function sectionAnchors(): string[] {
  return readdirSync(DIR)
    .filter((file) => file.endsWith('.md') && file !== INDEX)
    .flatMap((file) =>
      readFileSync(path.join(DIR, file), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('## '))
        .map((line) => `${file}#${githubAnchor(line.slice(3))}`),
    )
    .sort();
}

/** The index's decision lines: `- [title](file.md#anchor) — status`. */
function indexLines(): { target: string; status: string }[] {
  return readFileSync(path.join(DIR, INDEX), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('- ['))
    .map((line) => {
      const match = /^- \[[^\]]+\]\(([^)#]+\.md#[^)]+)\) — (.+)$/.exec(line);
      return { target: match?.[1] ?? `unreadable index line: ${line}`, status: match?.[2] ?? '' };
    });
}

describe('the decision log', () => {
  it('has topic files with sections (the check below is not vacuous)', () => {
    expect(sectionAnchors().length).toBeGreaterThan(40);
  });

  it('indexes every section heading', () => {
    const indexed = new Set(indexLines().map((line) => line.target));
    expect(sectionAnchors().filter((anchor) => !indexed.has(anchor))).toEqual([]);
  });

  it('links only existing headings, each once, each with a status', () => {
    const sections = new Set(sectionAnchors());
    const lines = indexLines();
    expect(lines.filter((line) => !sections.has(line.target)).map((line) => line.target)).toEqual([]);
    expect(lines.map((line) => line.target).filter((target, i, all) => all.indexOf(target) !== i)).toEqual([]);
    expect(lines.filter((line) => !/^(current|replaced by )/.test(line.status)).map((line) => line.target)).toEqual([]);
  });
});
