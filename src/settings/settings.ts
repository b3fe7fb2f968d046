/**
 * The user settings of jupyterlab-vram (schema/plugin.json), typed, with the
 * schema's defaults and limits enforced again in code, because the settings
 * editor's raw JSON mode lets a user type anything.
 */
import { ByteUnits } from '../text/format';
import { HelperConfig } from '../protocol/messages';

/** The user settings of jupyterlab-vram, typed. */
export interface VramSettings {
  /** The seconds between two readings of memory in the kernel helper. */
  sampleIntervalSeconds: number;
  /** A sample is sent when some figure moved by more than this many MiB. */
  changeThresholdMiB: number;
  /** Device usage at or above this share of its total is shown as a warning. */
  warningThresholdPercent: number;
  /** How much history each notebook keeps in its bounded buffer. */
  historyMinutes: number;
  /** How much of that history the timeline shows. */
  timelineWindowMinutes: number;
  units: ByteUnits;
  /** Whether to show the memory badge on every executed code cell. */
  showCellBadges: boolean;
  /**
   * Whether to reset the kernel's peak counters at each cell start, for
   * exact per-cell peaks. This is the helper's `reset_peak_per_cell`.
   */
  exactPeakPerCell: boolean;
  /**
   * Whether to save each cell's latest figures in its metadata, under
   * `jupyterlab_vram`.
   */
  storeRecordsInNotebookMetadata: boolean;
  /**
   * Whether to keep each notebook's cell history in this browser
   * (IndexedDB), so that it survives a page reload and shows in every tab.
   */
  rememberCellHistory: boolean;
  /**
   * Whether to keep each notebook's memory timeline in this browser
   * (IndexedDB), so that the chart keeps earlier kernel processes across
   * page reloads.
   */
  rememberTimeline: boolean;
  /**
   * For allocation recording, the number of alloc and free events that
   * PyTorch's allocator history keeps.
   */
  allocationHistoryMaxEntries: number;
  /**
   * For allocation recording, tracemalloc's stack depth, in frames per host
   * allocation.
   */
  allocationHostFrames: number;
  /**
   * Whether the helper looks for a Dask client or a Ray runtime the kernel
   * uses and reads its telemetry. This is the helper's `watch_cluster`.
   */
  watchCluster: boolean;
  /** The seconds between two readings of a cluster's telemetry (`cluster_interval_s`). */
  clusterIntervalS: number;
}

/**
 * Changes one setting, and persists it where a settings registry keeps
 * settings.
 */
export type SetSetting = <K extends keyof VramSettings>(
  key: K,
  value: VramSettings[K]
) => Promise<void>;

/** The value of every setting when the user has not set it. */
export const DEFAULT_SETTINGS: Readonly<VramSettings> = Object.freeze({
  sampleIntervalSeconds: 1,
  changeThresholdMiB: 1,
  warningThresholdPercent: 85,
  historyMinutes: 1440,
  timelineWindowMinutes: 5,
  units: 'binary',
  showCellBadges: true,
  exactPeakPerCell: true,
  storeRecordsInNotebookMetadata: false,
  rememberCellHistory: true,
  rememberTimeline: true,
  allocationHistoryMaxEntries: 100_000,
  allocationHostFrames: 16,
  watchCluster: true,
  clusterIntervalS: 2
});

/** The limits, which must match those of schema/plugin.json. */
export const SETTING_LIMITS = {
  sampleIntervalSeconds: { min: 0.05, max: 60 },
  changeThresholdMiB: { min: 0, max: 1048576 },
  warningThresholdPercent: { min: 1, max: 100 },
  historyMinutes: { min: 1, max: 10080 },
  timelineWindowMinutes: { min: 0.5, max: 1440 },
  allocationHistoryMaxEntries: { min: 1000, max: 10_000_000 },
  allocationHostFrames: { min: 1, max: 64 },
  clusterIntervalS: { min: 1, max: 60 }
} as const;

/**
 * The most samples a history keeps. The helper sends at most one sample per
 * interval, so the capacity that covers `historyMinutes` follows from the
 * interval; it is capped at this so that a tiny interval with a long history
 * cannot eat the browser's memory, since each series costs 8 bytes per
 * sample.
 */
export const MAX_HISTORY_SAMPLES = 250_000;

/**
 * The helper's heartbeat when nothing changes, which is the protocol's default.
 */
export const DEFAULT_HEARTBEAT_SECONDS = 10;

const MIB = 1024 * 1024;

function clampedNumber(
  value: unknown,
  fallback: number,
  limits: { min: number; max: number }
): number {
  // ±Infinity, which JSON5 allows, is out of range like any other value, so
  // it is held to the limit.
  if (typeof value !== 'number' || Number.isNaN(value)) {
    return fallback;
  }
  return Math.min(limits.max, Math.max(limits.min, value));
}

function booleanOr(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/**
 * Reads typed settings from the registry's composite value, which may hold
 * anything. A value that cannot be used takes its default from `d`.
 */
export function readSettings(
  composite: unknown,
  d: Readonly<VramSettings> = DEFAULT_SETTINGS
): VramSettings {
  const raw =
    typeof composite === 'object' && composite !== null
      ? (composite as { [key: string]: unknown })
      : {};
  const L = SETTING_LIMITS;
  return {
    sampleIntervalSeconds: clampedNumber(
      raw.sampleIntervalSeconds,
      d.sampleIntervalSeconds,
      L.sampleIntervalSeconds
    ),
    changeThresholdMiB: clampedNumber(
      raw.changeThresholdMiB,
      d.changeThresholdMiB,
      L.changeThresholdMiB
    ),
    warningThresholdPercent: clampedNumber(
      raw.warningThresholdPercent,
      d.warningThresholdPercent,
      L.warningThresholdPercent
    ),
    historyMinutes: clampedNumber(
      raw.historyMinutes,
      d.historyMinutes,
      L.historyMinutes
    ),
    timelineWindowMinutes: clampedNumber(
      raw.timelineWindowMinutes,
      d.timelineWindowMinutes,
      L.timelineWindowMinutes
    ),
    units:
      raw.units === 'decimal' || raw.units === 'binary' ? raw.units : d.units,
    showCellBadges: booleanOr(raw.showCellBadges, d.showCellBadges),
    exactPeakPerCell: booleanOr(raw.exactPeakPerCell, d.exactPeakPerCell),
    storeRecordsInNotebookMetadata: booleanOr(
      raw.storeRecordsInNotebookMetadata,
      d.storeRecordsInNotebookMetadata
    ),
    rememberCellHistory: booleanOr(
      raw.rememberCellHistory,
      d.rememberCellHistory
    ),
    rememberTimeline: booleanOr(raw.rememberTimeline, d.rememberTimeline),
    allocationHistoryMaxEntries: Math.round(
      clampedNumber(
        raw.allocationHistoryMaxEntries,
        d.allocationHistoryMaxEntries,
        L.allocationHistoryMaxEntries
      )
    ),
    allocationHostFrames: Math.round(
      clampedNumber(
        raw.allocationHostFrames,
        d.allocationHostFrames,
        L.allocationHostFrames
      )
    ),
    watchCluster: booleanOr(raw.watchCluster, d.watchCluster),
    clusterIntervalS: clampedNumber(
      raw.clusterIntervalS,
      d.clusterIntervalS,
      L.clusterIntervalS
    )
  };
}

/**
 * The sampling configuration sent to the helper. The heartbeat is raised
 * with long intervals because the protocol requires interval_s <= heartbeat_s.
 */
export function helperConfigFor(settings: VramSettings): HelperConfig {
  return {
    interval_s: settings.sampleIntervalSeconds,
    change_threshold_bytes: Math.round(settings.changeThresholdMiB * MIB),
    heartbeat_s: Math.max(
      DEFAULT_HEARTBEAT_SECONDS,
      settings.sampleIntervalSeconds
    ),
    reset_peak_per_cell: settings.exactPeakPerCell,
    watch_cluster: settings.watchCluster,
    cluster_interval_s: settings.clusterIntervalS
  };
}

/** The config keys of cluster watching, which helpers before it refuse as unknown. */
const CLUSTER_CONFIG_KEYS = ['watch_cluster', 'cluster_interval_s'] as const;

/**
 * `config` as a helper whose hello said `helloConfig` accepts it: without
 * the cluster keys where that hello lacks `watch_cluster` (a helper older
 * than cluster watching, which refuses a config key it does not know).
 * Without a hello yet, the config goes whole: the helper this page
 * delivers knows every key.
 */
export function configForHelper<T extends Partial<HelperConfig>>(
  config: T,
  helloConfig: Partial<HelperConfig> | null | undefined
): T {
  if (!helloConfig || 'watch_cluster' in helloConfig) {
    return config;
  }
  const out = { ...config };
  for (const key of CLUSTER_CONFIG_KEYS) {
    delete out[key];
  }
  return out;
}

/**
 * The ring buffer's capacity, in samples, for the configured history length.
 */
export function historyCapacityFor(settings: VramSettings): number {
  const samples = Math.ceil(
    (settings.historyMinutes * 60) / settings.sampleIntervalSeconds
  );
  return Math.max(60, Math.min(MAX_HISTORY_SAMPLES, samples));
}

/** True when two settings objects would render and sample identically. */
export function sameSettings(a: VramSettings, b: VramSettings): boolean {
  return (Object.keys(a) as (keyof VramSettings)[]).every(k => a[k] === b[k]);
}
