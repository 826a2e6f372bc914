// A few line charts as plain SVG text: no plotting dependency to install or keep working offline, and the
// file renders on GitHub and in any browser. Axes start at zero so slopes are not exaggerated.

export interface Series {
  name: string;
  color: string;
  points: ReadonlyArray<readonly [number, number]>;
  dashed?: boolean;
}

export interface Panel {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));

/** Round tick steps (1, 2 or 5 × 10^k) covering 0..max in about `count` steps. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let t = 0; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toFixed(10)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toFixed(10)));
  return ticks;
}

const WIDTH = 760;
const PANEL_HEIGHT = 320;
const MARGIN = { left: 70, right: 170, top: 40, bottom: 50 };

function panelSvg(panel: Panel, top: number): string {
  const all = panel.series.flatMap((s) => s.points);
  const xTicks = niceTicks(Math.max(...all.map(([x]) => x)));
  const yTicks = niceTicks(Math.max(...all.map(([, y]) => y)));
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (v: number) => MARGIN.left + (v / xTicks[xTicks.length - 1]) * plotW;
  const y = (v: number) => top + MARGIN.top + plotH - (v / yTicks[yTicks.length - 1]) * plotH;
  const out: string[] = [];
  out.push(`<text x="${MARGIN.left}" y="${top + 24}" font-size="15" font-weight="bold">${escape(panel.title)}</text>`);
  for (const t of yTicks) {
    out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y(t)}" y2="${y(t)}" stroke="#ddd"/>`);
    out.push(`<text x="${MARGIN.left - 8}" y="${y(t) + 4}" text-anchor="end">${fmt(t)}</text>`);
  }
  for (const t of xTicks) {
    out.push(`<line x1="${x(t)}" x2="${x(t)}" y1="${y(0)}" y2="${y(0) + 5}" stroke="#333"/>`);
    out.push(`<text x="${x(t)}" y="${y(0) + 20}" text-anchor="middle">${fmt(t)}</text>`);
  }
  out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`);
  out.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${y(0)}" y2="${top + MARGIN.top}" stroke="#333"/>`);
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${top + PANEL_HEIGHT - 10}" text-anchor="middle">${escape(panel.xLabel)}</text>`);
  const midY = top + MARGIN.top + plotH / 2;
  out.push(`<text x="18" y="${midY}" text-anchor="middle" transform="rotate(-90 18 ${midY})">${escape(panel.yLabel)}</text>`);
  panel.series.forEach((s, i) => {
    const path = s.points.map(([px, py], j) => `${j === 0 ? 'M' : 'L'}${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    if (!s.dashed) for (const [px, py] of s.points) out.push(`<circle cx="${x(px).toFixed(1)}" cy="${y(py).toFixed(1)}" r="3" fill="${s.color}"/>`);
    const ly = top + MARGIN.top + 10 + i * 20;
    const lx = MARGIN.left + plotW + 16;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${ly + 4}">${escape(s.name)}</text>`);
  });
  return out.join('\n');
}

/** Panels stacked vertically, with a caption line under them. */
export function svgDocument(panels: Panel[], caption: string): string {
  const height = panels.length * PANEL_HEIGHT + 30;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...panels.map((p, i) => panelSvg(p, i * PANEL_HEIGHT)),
    `<text x="${MARGIN.left}" y="${height - 10}" font-size="11" fill="#555">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
