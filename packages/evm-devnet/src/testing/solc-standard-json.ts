// solc-js's standard-JSON compile, as the devnet's compile helpers use it: the pinned release checked, the
// output parsed, and its errors (not its warnings) thrown.

type FindImport = (path: string) => { contents: string } | { error: string };

export interface SolcJs {
  compile(input: string, callbacks?: { import: FindImport }): string;
  version(): string;
}

export function compileStandardJson<Output>(solc: SolcJs, release: string, what: string, input: object, findImport?: FindImport): Output {
  if (!solc.version().startsWith(release + '+')) throw new Error(`solc ${solc.version()} is installed; ${what} is pinned to ${release}`);
  const output = JSON.parse(solc.compile(JSON.stringify(input), findImport ? { import: findImport } : undefined)) as Output & {
    errors?: Array<{ severity: string; formattedMessage: string }>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  return output;
}
