/** The words and units of a GPU's load: reasons, throttle reasons, watts, joules, rates. */
import {
  formatCelsius,
  formatJoules,
  formatLoadPercent,
  formatMhz,
  formatPcieRate,
  formatWatts,
  throttleReasonsText,
  throttleReasonText,
  unavailableReasonText,
  unavailableText
} from './gpuLoadText';

describe('gpuLoadText', () => {
  it('says why a figure is unavailable, and keeps an unknown code as text', () => {
    expect(unavailableReasonText('not_supported')).toMatch(/not supported/);
    expect(unavailableReasonText('no_samples')).toMatch(/buffer/);
    expect(unavailableReasonText('from_the_future')).toBe('from_the_future');
    expect(unavailableText('not_read_yet')).toBe('unavailable: not read yet');
    expect(unavailableText(undefined)).toBe('unavailable');
  });

  it('words the throttle reasons, an unnamed bit included', () => {
    expect(throttleReasonText('sw_power_cap')).toBe('power cap');
    expect(throttleReasonText('hw_thermal_slowdown')).toMatch(/heat/);
    expect(throttleReasonText('bit_12')).toBe('an unnamed reason (bit 12)');
    expect(throttleReasonText('<b>x</b>')).toBe('<b>x</b>');
    expect(throttleReasonsText([])).toBe('none');
    expect(throttleReasonsText(['gpu_idle', 'sw_power_cap'])).toBe(
      'idle (nothing to run), power cap'
    );
  });

  it('formats each unit, with a dash for an unknown figure', () => {
    expect(formatLoadPercent(92.6)).toBe('93%');
    expect(formatLoadPercent(null)).toBe('\u2014');
    expect(formatWatts(612.345)).toBe('612 W');
    expect(formatWatts(4.25)).toBe('4.3 W');
    expect(formatJoules(183.6)).toBe('184 J');
    expect(formatJoules(4.21)).toBe('4.2 J');
    expect(formatJoules(12345)).toBe('12.3 kJ');
    expect(formatJoules(2_345_000)).toBe('2.35 MJ');
    expect(formatJoules(null)).toBe('\u2014');
    expect(formatMhz(1755)).toBe('1755 MHz');
    expect(formatCelsius(71)).toBe('71 \u00b0C');
    expect(formatPcieRate(812)).toBe('812 KB/s');
    expect(formatPcieRate(12_300)).toBe('12.3 MB/s');
    expect(formatPcieRate(1_230_000)).toBe('1.23 GB/s');
    expect(formatPcieRate(null)).toBe('\u2014');
  });
});
