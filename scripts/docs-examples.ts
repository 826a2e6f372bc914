// `npm run docs:examples`: README's code samples are the files in examples/ (which an e2e test runs), copied
// between markers:
//
//   <!-- example: examples/merchant-exact.ts -->
//   ```ts
//   …the file, verbatim…
//   ```
//   <!-- /example -->
//
// This rewrites every such block from its file; test/readme-examples.test.ts fails when one differs.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
export const README = path.join(ROOT, 'README.md');

const BLOCK = /<!-- example: ([^\s]+) -->\n```(\w*)\n([\s\S]*?)```\n<!-- \/example -->/g;

export interface ExampleBlock {
  file: string;
  /** the code between the fences, as README has it */
  shown: string;
}

export function exampleBlocks(readme: string): ExampleBlock[] {
  return [...readme.matchAll(BLOCK)].map((match) => ({ file: match[1], shown: match[3] }));
}

/** The file's text as a block shows it (ending in one newline, before the closing fence). */
export function asShown(text: string): string {
  return text.replace(/\n*$/, '\n');
}

/** README with every block replaced by its file; a file that does not exist is named, never guessed. */
export function renderExamples(readme: string, root = ROOT): string {
  return readme.replace(BLOCK, (_block, file: string, language: string) => {
    const full = path.join(root, file);
    if (!existsSync(full)) throw new Error(`README names ${file}, which does not exist`);
    return `<!-- example: ${file} -->\n\`\`\`${language}\n${asShown(readFileSync(full, 'utf8'))}\`\`\`\n<!-- /example -->`;
  });
}

if (require.main === module) {
  try {
    const before = readFileSync(README, 'utf8');
    const after = renderExamples(before);
    if (after !== before) writeFileSync(README, after);
    console.log(`${exampleBlocks(after).length} examples in README.md${after === before ? ', all up to date' : ', rewritten'}`);
  } catch (err) {
    console.error(`docs:examples: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
