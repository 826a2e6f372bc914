// README is a newcomer's first page and docs/ the reference it links: its code samples are the files an e2e
// test runs (copied by `npm run docs:examples`), its links lead somewhere, and the specification it links is
// the one the project is built to.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { asShown, exampleBlocks } from '../scripts/docs-examples';
import { githubAnchor } from './support/markdown';

const ROOT = path.resolve(__dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const README = read('README.md');
/** The spec's shared copy, outside the repository (where the project's sessions keep it). */
const SHARED_SPEC = path.resolve(ROOT, '../shared/spec/facilitator-spec.md');

/** README and every Markdown page under docs/, as repository paths. */
function pages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.md'));
  return ['README.md', ...docs.map((file) => path.join('docs', file))];
}

/** Headings' anchors of a Markdown file (outside code fences). */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) anchors.add(githubAnchor(line.replace(/^#+ /, '')));
  }
  return anchors;
}

/** Relative links of a page that lead nowhere: no such file, or no such heading in it. */
function brokenLinks(page: string): string[] {
  const text = read(page).replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((link) => !/^[a-z]+:/.test(link))
    .filter((link) => {
      const [target, anchor] = link.split('#');
      const file = target === '' ? page : path.normalize(path.join(path.dirname(page), target));
      if (!existsSync(path.join(ROOT, file))) return true;
      return anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor);
    })
    .map((link) => `${page}: ${link}`);
}

describe('README', () => {
  it('gives the test command and stays a page (at most 20 KB)', () => {
    expect(README).toContain('npm test');
    expect(Buffer.byteLength(README)).toBeLessThanOrEqual(20 * 1024);
  });

  it('shows each example file verbatim (`npm run docs:examples` copies them)', () => {
    const blocks = exampleBlocks(README);
    // a merchant per mechanism and a buyer: an empty list would pass the rest
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const missing = blocks.filter((block) => !existsSync(path.join(ROOT, block.file))).map((block) => block.file);
    expect(missing).toEqual([]);
    const differing = blocks.filter((block) => block.shown !== asShown(read(block.file))).map((block) => block.file);
    expect(differing).toEqual([]);
  });

  it('marks every code sample that names an example file', () => {
    // a marker with a typo (or no closing marker) is not a block: nothing would keep it in step with its file
    const opened = [...README.matchAll(/<!-- example: /g)].length;
    expect(opened).toBe(exampleBlocks(README).length);
  });
});

describe('README and docs/', () => {
  it('link only files and headings that exist', () => {
    expect(pages().flatMap(brokenLinks)).toEqual([]);
  });
});

// outside a checkout beside the shared folder (a clean clone in CI) there is nothing to compare with
const SPEC_SUITE = 'docs/spec/facilitator-spec.md is the shared specification';
if (!existsSync(SHARED_SPEC)) process.stdout.write(`skipped "${SPEC_SUITE}": no shared copy at ${SHARED_SPEC}\n`);
(existsSync(SHARED_SPEC) ? describe : describe.skip)(SPEC_SUITE, () => {
  it('unchanged', () => {
    expect(read('docs/spec/facilitator-spec.md')).toBe(readFileSync(SHARED_SPEC, 'utf8'));
  });
});
