// Reading a Prometheus text scrape the way a test needs: one sample by name and labels, and every sample key.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** the sample as written before its value: name{labels} */
  key: string;
}

export function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .map((line) => {
      const key = line.slice(0, line.lastIndexOf(' '));
      const brace = key.indexOf('{');
      const name = brace === -1 ? key : key.slice(0, brace);
      const labels: Record<string, string> = {};
      if (brace !== -1) for (const m of key.slice(brace + 1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]] = m[2];
      return { name, labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)), key };
    });
}

/** The value of the first sample with this name carrying these labels, or 0 when there is none. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  const sample = parseSamples(text).find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return sample ? sample.value : 0;
}

/** Sample keys written more than once (a scrape must name each series once). */
export function duplicateSamples(text: string): string[] {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const { key } of parseSamples(text)) (seen.has(key) ? duplicates : seen).add(key);
  return [...duplicates];
}

/** Metric families declared by a # TYPE line more than once. */
export function duplicateFamilies(text: string): string[] {
  const names = text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]);
  return names.filter((name, i) => names.indexOf(name) !== i);
}
