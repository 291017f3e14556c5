import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom';
import type { ChartColumns } from './series';

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

/** A line chart of the columns, or a note when there is nothing to draw. */
export function lineChart(title: string, columns: ChartColumns, options: { unit?: string; max?: number } = {}): HTMLElement {
  const box = h('figure', { class: 'chart', 'data-chart': title }, h('figcaption', {}, title));
  if (columns.series.length === 0 || columns.times.length === 0) {
    box.appendChild(h('p', { class: 'empty' }, 'No calls in this window.'));
    return box;
  }
  const data = [columns.times, ...columns.series.map((s) => s.values)] as uPlot.AlignedData;
  // Dots only where the line would not show a lone bucket; a day of minutes is a line.
  const showPoints = columns.times.length <= 60;
  const tick = (value: number) => (value === 0 ? '0' : Math.abs(value) < 1 ? value.toPrecision(2) : String(Math.round(value * 100) / 100));
  const plot = new uPlot(
    {
      width: 640,
      height: 220,
      series: [{}, ...columns.series.map((s, i) => ({ label: s.label, stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: false, points: { show: showPoints, size: 6 } }))],
      axes: [{}, { label: options.unit ?? '', size: 60, values: (_plot, splits) => splits.map(tick) }],
      scales: options.max === undefined ? {} : { y: { range: [0, options.max] } },
      legend: { show: true },
    },
    data,
  );
  box.appendChild(plot.root);
  return box;
}
