/**
 * The anchor GitHub gives a Markdown heading (github-slugger's rule, without its numbering of duplicates):
 * lower case, punctuation dropped (backticks, colons, parentheses, commas…), each space a hyphen.
 */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
