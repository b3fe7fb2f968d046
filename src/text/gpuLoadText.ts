/**
 * The words and figures of a GPU's load (docs/protocol.md, "GPU load"): why
 * a figure is unavailable, the clocks' throttle reasons in words, and the
 * units of watts, joules, clocks and PCIe rates. Shared by the GPU card, the
 * cell badges and the Cells tab, so that they say the same thing.
 *
 * The codes come from the kernel: a code this frontend does not know is
 * shown as it came, as data.
 */
import { UNKNOWN_TEXT } from './format';
import { trans } from './translation';

/** Why a load figure is null, in words: "not supported by this GPU or driver". */
export function unavailableReasonText(code: string): string {
  switch (code) {
    case 'no_nvml':
      return trans.__('NVML cannot be used in this kernel');
    case 'not_supported':
      return trans.__('not supported by this GPU, MIG instance or driver');
    case 'no_permission':
      return trans.__('no permission to read it');
    case 'gpu_lost':
      return trans.__('the GPU is lost');
    case 'not_read_yet':
      return trans.__('not read yet');
    case 'no_samples':
      return trans.__("the driver's buffer had no sample for that time");
    case 'driver_error':
      return trans.__('the driver reported an error');
    default:
      return code;
  }
}

/** "unavailable: not read yet" for a figure whose reason is known, else "unavailable". */
export function unavailableText(code: string | undefined): string {
  return code
    ? trans.__('unavailable: %1', unavailableReasonText(code))
    : trans.__('unavailable');
}

/** One clocks event (throttle) reason in words; `bit_N` and unknown codes as they came. */
export function throttleReasonText(code: string): string {
  switch (code) {
    case 'gpu_idle':
      return trans.__('idle (nothing to run)');
    case 'applications_clocks_setting':
      return trans.__("an administrator's application clocks");
    case 'sw_power_cap':
      return trans.__('power cap');
    case 'hw_slowdown':
      return trans.__('hardware slowdown (power brake or overheating)');
    case 'sync_boost':
      return trans.__("held to its group's clocks (sync boost)");
    case 'sw_thermal_slowdown':
      return trans.__('heat (software thermal slowdown)');
    case 'hw_thermal_slowdown':
      return trans.__('heat (hardware thermal slowdown)');
    case 'hw_power_brake_slowdown':
      return trans.__("the board's power brake");
    case 'display_clock_setting':
      return trans.__('display clock setting');
    case 'board_limit':
      return trans.__('board limit');
    case 'reliability':
      return trans.__('reliability');
    default: {
      const bit = /^bit_(\d+)$/.exec(code);
      return bit ? trans.__('an unnamed reason (bit %1)', bit[1]) : code;
    }
  }
}

/** The throttle reasons in words, comma-separated; "none" for an empty list. */
export function throttleReasonsText(codes: readonly string[]): string {
  return codes.length
    ? codes.map(throttleReasonText).join(', ')
    : trans.__('none');
}

function isKnown(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** "93%" for a utilisation (rounded), "—" when unknown. */
export function formatLoadPercent(value: number | null | undefined): string {
  return isKnown(value) ? `${Math.round(value)}%` : UNKNOWN_TEXT;
}

/** "612 W" (one decimal under 10 W), "—" when unknown. */
export function formatWatts(value: number | null | undefined): string {
  if (!isKnown(value)) {
    return UNKNOWN_TEXT;
  }
  return value < 10 ? `${value.toFixed(1)} W` : `${Math.round(value)} W`;
}

/** "812 J", "12.3 kJ", "1.23 MJ"; "—" when unknown. */
export function formatJoules(value: number | null | undefined): string {
  if (!isKnown(value)) {
    return UNKNOWN_TEXT;
  }
  const magnitude = Math.abs(value);
  if (magnitude < 10) {
    return `${value.toFixed(1)} J`;
  }
  if (magnitude < 1000) {
    return `${Math.round(value)} J`;
  }
  if (magnitude < 1e6) {
    return `${(value / 1e3).toPrecision(3)} kJ`;
  }
  return `${(value / 1e6).toPrecision(3)} MJ`;
}

/** "1755 MHz", "—" when unknown. */
export function formatMhz(value: number | null | undefined): string {
  return isKnown(value) ? `${Math.round(value)} MHz` : UNKNOWN_TEXT;
}

/** "71 °C", "—" when unknown. */
export function formatCelsius(value: number | null | undefined): string {
  return isKnown(value) ? `${Math.round(value)} \u00b0C` : UNKNOWN_TEXT;
}

/** A PCIe rate from NVML's KB/s: "812 KB/s", "12.3 MB/s", "1.23 GB/s"; "—" when unknown. */
export function formatPcieRate(kbPerS: number | null | undefined): string {
  if (!isKnown(kbPerS)) {
    return UNKNOWN_TEXT;
  }
  if (kbPerS < 1000) {
    return `${Math.round(kbPerS)} KB/s`;
  }
  if (kbPerS < 1e6) {
    return `${(kbPerS / 1e3).toPrecision(3)} MB/s`;
  }
  return `${(kbPerS / 1e6).toPrecision(3)} GB/s`;
}
