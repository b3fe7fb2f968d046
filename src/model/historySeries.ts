/**
 * Which figures go into the memory history, the timeline's series: the host
 * RSS and, per GPU, torch's allocated and reserved bytes and NVML's
 * per-process figure, with NaN where a figure is unknown; and per GPU its
 * SM utilisation and power draw. They are taken from a live sample, and
 * (memory only: the helper's timeline keeps no load) from the columns of a
 * `history` reply's timeline.
 */
import { SampleMessage } from '../protocol/sample';
import { TimelineColumns } from '../protocol/timeline';
import { SeriesKey } from './MemoryHistory';

/** The figures of one sample that go into the history. */
export function sampleSeries(sample: SampleMessage): Map<string, number> {
  const values = new Map<string, number>();
  values.set(SeriesKey.hostRss, known(sample.host.rss_bytes));
  for (const gpu of sample.gpus) {
    if (gpu.torch) {
      values.set(
        SeriesKey.gpu(gpu.index, 'allocated'),
        known(gpu.torch.allocated_bytes)
      );
      values.set(
        SeriesKey.gpu(gpu.index, 'reserved'),
        known(gpu.torch.reserved_bytes)
      );
    }
    if (gpu.nvml && gpu.nvml.process_used_bytes !== null) {
      values.set(
        SeriesKey.gpu(gpu.index, 'process'),
        gpu.nvml.process_used_bytes
      );
    }
    if (gpu.load) {
      values.set(SeriesKey.gpu(gpu.index, 'sm'), known(gpu.load.sm_percent));
      values.set(
        SeriesKey.gpu(gpu.index, 'power'),
        known(gpu.load.power_watts)
      );
    }
  }
  return values;
}

/** A recovered timeline's columns, keyed the way the history keys them. */
export function historySeriesOf(
  timeline: TimelineColumns
): Map<string, Float64Array> {
  const series = new Map<string, Float64Array>();
  series.set(SeriesKey.hostRss, column(timeline.rss_bytes));
  for (const gpu of timeline.gpus) {
    const figures = [
      ['allocated', gpu.allocated_bytes],
      ['reserved', gpu.reserved_bytes],
      ['process', gpu.process_used_bytes]
    ] as const;
    for (const [figure, values] of figures) {
      // A series that was never known stays out, because the live samples
      // would not have made it either.
      if (values.some(v => v !== null)) {
        series.set(SeriesKey.gpu(gpu.index, figure), column(values));
      }
    }
  }
  return series;
}

function known(value: number | null): number {
  return value === null ? NaN : value;
}

function column(values: readonly (number | null)[]): Float64Array {
  return Float64Array.from(values, known);
}
