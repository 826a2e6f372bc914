/** RELIABILITY.md holds two generated parts: the reliability scenarios, and the Abuse section between these markers. */
export const ABUSE_SECTION_START = '<!-- abuse:start (written by npm run test:abuse) -->';
export const ABUSE_SECTION_END = '<!-- abuse:end -->';
