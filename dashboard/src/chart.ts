/**
 * Charts drawn in SVG, node by node (no chart library, nothing inline for
 * the CSP). Axis ticks fall on round numbers: steps of 1, 2 or 5 times a
 * power of ten, the top tick at or above the largest value.
 */
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attributes: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** Round ticks from 0 covering `max` in about `count` steps: 0, 5, 10, 15… or 0, 2k, 4k… never 0, 2.25, 4.5. */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
  const ticks: number[] = [];
  for (let value = 0; value < max + step / 2 && ticks.length <= count + 1; value += step)
    ticks.push(Number(value.toPrecision(12)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks;
}

/** A tick's label: 1.5k, 2M, 0.5 (a ms axis gets its unit from the caption). */
export function tickLabel(value: number): string {
  if (value >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (value >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`;
  return String(Number(value.toPrecision(3)));
}

/** A horizontal grid line and a y label at each tick. */
function gridLines(
  chart: SVGElement,
  ticks: number[],
  left: number,
  right: number,
  y: (value: number) => number,
): void {
  for (const tick of ticks) {
    chart.appendChild(svg('line', { x1: left, x2: right, y1: y(tick), y2: y(tick), class: 'grid' }));
    const label = svg('text', { x: left - 6, y: y(tick) + 4, class: 'axis tick', 'text-anchor': 'end' });
    label.textContent = tickLabel(tick);
    chart.appendChild(label);
  }
}

export interface Series {
  label: string;
  /** CSS class of the line and its key: processed, failed, or s1…s6 for the metrics palette. */
  tone: string;
  values: number[];
}

/** Lines over shared x labels, about seven of which are printed. */
export function lineChart(name: string, xLabels: string[], series: Series[], options: { height?: number } = {}): Node {
  const points = xLabels.length;
  if (points === 0 || series.length === 0) return h('p', { class: 'empty' }, 'No data yet.');
  const width = 720;
  const height = options.height ?? 180;
  const left = 40;
  const pad = 16;
  const bottom = 24;
  const ticks = niceTicks(Math.max(0, ...series.flatMap((line) => line.values)));
  const top = ticks[ticks.length - 1];
  const x = (index: number) => left + (index * (width - left - pad)) / Math.max(1, points - 1);
  const y = (value: number) => height - bottom - (value * (height - bottom - pad)) / top;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': name });
  gridLines(chart, ticks, left, width - pad, y);
  for (const line of series) {
    const path = line.values.map((value, index) => `${x(index)},${y(value)}`).join(' ');
    chart.appendChild(
      points === 1
        ? svg('circle', { cx: x(0), cy: y(line.values[0]), r: 3, class: `dot ${line.tone}` })
        : svg('polyline', { points: path, class: `line ${line.tone}` }),
    );
  }
  const every = Math.max(1, Math.ceil(points / 7));
  xLabels.forEach((text, index) => {
    if (index % every !== 0) return;
    const label = svg('text', {
      x: x(index),
      y: height - 6,
      class: 'axis',
      'text-anchor': index === 0 ? 'start' : 'middle',
    });
    label.textContent = text;
    chart.appendChild(label);
  });
  return h(
    'figure',
    {},
    chart,
    h('figcaption', {}, ...series.map((line) => h('span', { class: `key ${line.tone}` }, line.label))),
  );
}

/** Vertical bars, one per label (the run-time histogram). */
export function barChart(name: string, labels: readonly string[], values: number[]): Node {
  const width = 720;
  const height = 200;
  const left = 40;
  const pad = 16;
  const bottom = 34;
  const ticks = niceTicks(Math.max(0, ...values));
  const top = ticks[ticks.length - 1];
  const slot = (width - left - pad) / labels.length;
  const y = (value: number) => height - bottom - (value * (height - bottom - pad)) / top;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': name });
  gridLines(chart, ticks, left, width - pad, y);
  values.forEach((value, index) => {
    const bar = svg('rect', {
      x: left + index * slot + 2,
      y: y(value),
      width: Math.max(1, slot - 4),
      height: Math.max(0, y(0) - y(value)),
      class: 'bar-fill',
    });
    const title = svg('title', {});
    title.textContent = `${labels[index]}: ${value}`;
    bar.appendChild(title);
    chart.appendChild(bar);
    if (index % 2 === 0 || labels.length <= 13) {
      const label = svg('text', {
        x: left + index * slot + slot / 2,
        y: height - 18 + (index % 4 === 0 ? 0 : 10),
        class: 'axis',
        'text-anchor': 'middle',
      });
      label.textContent = labels[index];
      chart.appendChild(label);
    }
  });
  return h('figure', {}, chart);
}
