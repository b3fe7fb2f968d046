import pluginSchema from '../../schema/plugin.json';
import {
  formatBytes,
  formatBytesOf,
  formatPercent,
  percentOf,
  UNKNOWN_TEXT
} from './format';
import {
  DEFAULT_SETTINGS,
  configForHelper,
  helperConfigFor,
  historyCapacityFor,
  MAX_HISTORY_SAMPLES,
  readSettings
} from '../settings/settings';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [512 * 1024 ** 2, '512 MiB'],
    [1.25 * 1024 ** 3, '1.25 GiB'],
    [80 * 1024 ** 3, '80 GiB'],
    [85031714816, '79.2 GiB'],
    [2 * 1024 ** 5, '2 PiB'],
    [3 * 1024 ** 6, '3072 PiB']
  ])('binary %p -> %p', (bytes, text) => {
    expect(formatBytes(bytes, 'binary')).toBe(text);
  });

  it.each([
    [999, '999 B'],
    [1000, '1 kB'],
    [1_500_000, '1.5 MB'],
    [85031714816, '85 GB'],
    [123_456_789_012, '123 GB']
  ])('decimal %p -> %p', (bytes, text) => {
    expect(formatBytes(bytes, 'decimal')).toBe(text);
  });

  it('shows unknown as a dash, not 0', () => {
    expect(formatBytes(null)).toBe(UNKNOWN_TEXT);
    expect(formatBytes(undefined)).toBe(UNKNOWN_TEXT);
    expect(formatBytes(NaN)).toBe(UNKNOWN_TEXT);
    expect(formatBytes(Infinity)).toBe(UNKNOWN_TEXT);
  });

  it('defaults to binary units', () => {
    expect(formatBytes(1024 ** 3)).toBe('1 GiB');
  });

  it('keeps the sign of a negative figure', () => {
    expect(formatBytes(-2048)).toBe('-2 KiB');
  });

  it('moves up a unit when rounding reaches the base', () => {
    expect(formatBytes(1023.6)).toBe('1 KiB');
    expect(formatBytes(1_048_575)).toBe('1 MiB');
    expect(formatBytes(1024 ** 3 - 1)).toBe('1 GiB');
    expect(formatBytes(-1_048_575)).toBe('-1 MiB');
    expect(formatBytes(999.6, 'decimal')).toBe('1 kB');
    expect(formatBytes(999_999, 'decimal')).toBe('1 MB');
    expect(formatBytesOf(1_048_575, 1_048_575)).toBe('1/1 MiB');
  });
});

describe('formatBytesOf', () => {
  it('uses the unit of the total for both figures', () => {
    expect(formatBytesOf(1.2 * 1024 ** 3, 80 * 1024 ** 3)).toBe('1.2/80 GiB');
    expect(formatBytesOf(300 * 1024 ** 2, 80 * 1024 ** 3)).toBe('0.29/80 GiB');
    expect(formatBytesOf(1.2e9, 80e9, 'decimal')).toBe('1.2/80 GB');
  });

  it('handles unknown parts', () => {
    expect(formatBytesOf(null, 1024)).toBe(`${UNKNOWN_TEXT}/1 KiB`);
    expect(formatBytesOf(1024, null)).toBe(`1 KiB/${UNKNOWN_TEXT}`);
  });
});

describe('percentages', () => {
  it('computes shares and refuses unknown or zero totals', () => {
    expect(percentOf(1, 4)).toBe(25);
    expect(percentOf(null, 4)).toBeNull();
    expect(percentOf(1, 0)).toBeNull();
    expect(percentOf(1, null)).toBeNull();
  });

  it('formats', () => {
    expect(formatPercent(1, 4)).toBe('25%');
    expect(formatPercent(0, 4)).toBe('0%');
    expect(formatPercent(1, 1000)).toBe('<1%');
    expect(formatPercent(4, 4)).toBe('100%');
    expect(formatPercent(null, 4)).toBe(UNKNOWN_TEXT);
  });
});

describe('settings', () => {
  it('defaults match the schema', () => {
    const schema = pluginSchema as any;
    for (const [key, value] of Object.entries(DEFAULT_SETTINGS)) {
      expect(schema.properties[key].default).toEqual(value);
      expect(typeof schema.properties[key].title).toBe('string');
      expect(typeof schema.properties[key].description).toBe('string');
    }
    expect(schema.properties.sampleIntervalSeconds.minimum).toBe(0.05);
    expect(schema.properties.sampleIntervalSeconds.maximum).toBe(60);
    expect(schema['jupyter.lab.setting-icon']).toBe('jupyterlab-vram:memory');
  });

  it('reads, clamps and falls back on bad values', () => {
    expect(readSettings(undefined)).toEqual(DEFAULT_SETTINGS);
    const s = readSettings({
      sampleIntervalSeconds: 0.001,
      changeThresholdMiB: 'x',
      warningThresholdPercent: 150,
      historyMinutes: 60,
      timelineWindowMinutes: 10,
      units: 'decimal'
    });
    expect(s.sampleIntervalSeconds).toBe(0.05);
    expect(s.changeThresholdMiB).toBe(1);
    expect(s.warningThresholdPercent).toBe(100);
    expect(s.historyMinutes).toBe(60);
    expect(s.timelineWindowMinutes).toBe(10);
    expect(s.units).toBe('decimal');
    expect(readSettings({ units: 'metric' }).units).toBe('binary');
    expect(readSettings({ clusterIntervalS: 0.1 }).clusterIntervalS).toBe(1);
    expect(readSettings({ watchCluster: 'no' }).watchCluster).toBe(true);
  });

  it('leaves the cluster keys out of a configure for a helper whose hello lacks them', () => {
    const config = helperConfigFor(DEFAULT_SETTINGS);
    const older = configForHelper(config, {
      interval_s: 1,
      change_threshold_bytes: 0,
      heartbeat_s: 10,
      reset_peak_per_cell: true
    });
    expect('watch_cluster' in older).toBe(false);
    expect('cluster_interval_s' in older).toBe(false);
    expect(older.interval_s).toBe(1);
    expect(configForHelper(config, { watch_cluster: true })).toBe(config);
    expect(configForHelper(config, null)).toBe(config);
  });

  it('builds a helper config that respects interval <= heartbeat', () => {
    expect(helperConfigFor(DEFAULT_SETTINGS)).toEqual({
      interval_s: 1,
      change_threshold_bytes: 1048576,
      heartbeat_s: 10,
      reset_peak_per_cell: true,
      watch_cluster: true,
      cluster_interval_s: 2
    });
    expect(
      helperConfigFor({ ...DEFAULT_SETTINGS, watchCluster: false })
        .watch_cluster
    ).toBe(false);
    expect(
      helperConfigFor({ ...DEFAULT_SETTINGS, exactPeakPerCell: false })
        .reset_peak_per_cell
    ).toBe(false);
    const slow = helperConfigFor({
      ...DEFAULT_SETTINGS,
      sampleIntervalSeconds: 60
    });
    expect(slow.heartbeat_s).toBeGreaterThanOrEqual(slow.interval_s);
  });

  it('sizes the history for 24 h of 1 Hz samples by default, with a cap', () => {
    expect(historyCapacityFor(DEFAULT_SETTINGS)).toBe(86_400);
    expect(
      historyCapacityFor({ ...DEFAULT_SETTINGS, sampleIntervalSeconds: 0.05 })
    ).toBe(MAX_HISTORY_SAMPLES);
  });
});
