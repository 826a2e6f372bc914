// docs/configuration.md is the operator's reference: it must list every variable packages/config reads, and
// nothing it no longer reads. The names are read from the configuration code itself (the first argument of
// an EnvReader method, or the name a helper given the reader is called with), so a new variable cannot
// ship undocumented and a removed one cannot linger on the page.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const CONFIG_SRC = path.join(ROOT, 'packages/config/src');
const PAGE = path.join(ROOT, 'docs/configuration.md');

// the configuration's sources, its sections (sections/) included
const configSources = (): { file: string; text: string }[] =>
  readdirSync(CONFIG_SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .map((file) => ({ file, text: readFileSync(path.join(CONFIG_SRC, file), 'utf8') }));

// `reader.integer('PORT', …)`, `readRpcUrls(reader, `RPC_URL_${id}`)`: a literal name, or a per-network one
const NAMED_READ = /(?:\breader\.\w+\(\s*|\b\w+\(\s*reader\s*,\s*)(['`])([A-Z][A-Z0-9_]*)((?:\$\{[^}]+\})?)\1/g;

/** Every variable name the configuration code reads; `<chainId>` stands for a per-network suffix. */
function variablesInCode(sources = configSources()): string[] {
  const names = new Set<string>();
  for (const { text } of sources) for (const match of text.matchAll(NAMED_READ)) names.add(match[2] + (match[3] ? '<chainId>' : ''));
  return [...names].sort();
}

/**
 * Reads whose name the pattern above cannot see: a `reader.<method>(` whose first argument is neither a
 * literal nor `name` (the parameter of a helper that is itself called with a literal, which is counted).
 */
function unreadableReads(sources = configSources()): string[] {
  return sources.flatMap(({ file, text }) =>
    [...text.matchAll(/\breader\.\w+\(\s*([^,)]*)/g)]
      .map((match) => match[1].trim())
      .filter((argument) => !/^['`][A-Z][A-Z0-9_]*(\$\{[^}]+\})?['`]$/.test(argument) && argument !== 'name')
      .map((argument) => `${file}: reader.…(${argument}`),
  );
}

/** The names in the first column of the checked table (between its markers) of docs/configuration.md. */
function variablesOnPage(page = readFileSync(PAGE, 'utf8')): string[] {
  const table = /<!-- configuration-variables -->\n([\s\S]*?)<!-- \/configuration-variables -->/.exec(page)?.[1] ?? '';
  const names = new Set<string>();
  for (const row of table.split('\n').filter((line) => line.startsWith('| `'))) {
    const firstCell = row.split('|')[1];
    for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*(?:<chainId>)?)`/g)) names.add(match[1]);
  }
  return [...names].sort();
}

describe('docs/configuration.md', () => {
  it('the code is read whole: every read names its variable in a way this check sees', () => {
    expect(unreadableReads()).toEqual([]);
    // and the reading finds what certainly is there (a broken pattern would find nothing and pass below)
    expect(variablesInCode()).toEqual(expect.arrayContaining(['DATABASE_URL', 'RPC_URL_<chainId>', 'TREASURY_PRIVATE_KEY', 'WEBHOOK_SECRET']));
  });

  it('documents every variable the configuration code reads', () => {
    const documented = new Set(variablesOnPage());
    expect(variablesInCode().filter((name) => !documented.has(name))).toEqual([]);
  });

  it('documents no variable the configuration code no longer reads', () => {
    const read = new Set(variablesInCode());
    expect(variablesOnPage().filter((name) => !read.has(name))).toEqual([]);
  });
});
