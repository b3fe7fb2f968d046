/**
 * Runs JupyterLab's own setting registry, with this extension's schema, on
 * user settings as they are written in files. One bad value makes the
 * registry refuse them all, and readRefusedSettings keeps the others.
 */
import { ISettingRegistry, SettingRegistry } from '@jupyterlab/settingregistry';

import schema from '../../schema/plugin.json';
import {
  describeProblems,
  readRefusedSettings,
  refusedSettingsMessage
} from './refusedSettings';
import { DEFAULT_SETTINGS, readSettings, SETTING_LIMITS } from './settings';

const PLUGIN = 'jupyterlab-vram:plugin';

function registryWith(raw: string, served: object = schema): SettingRegistry {
  const connector = {
    fetch: async (id: string) =>
      ({
        id,
        raw,
        schema: served,
        data: { composite: {}, user: {} },
        version: '1'
      }) as ISettingRegistry.IPlugin,
    list: async () => ({ ids: [], values: [] }),
    save: async () => undefined,
    remove: async () => undefined
  };
  return new SettingRegistry({ connector: connector as any });
}

async function loadError(registry: SettingRegistry): Promise<unknown> {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    await registry.load(PLUGIN);
    return null;
  } catch (reason) {
    return reason;
  } finally {
    warn.mockRestore();
  }
}

describe('settings the registry refuses', () => {
  const written = `{
    // The user switched this off on purpose.
    "exactPeakPerCell": false,
    "rememberCellHistory": false,
    "sampleIntervalSeconds": 0.01,
  }`;

  it('keep every valid value; the bad one is held to its limit; the problem is named', async () => {
    const registry = registryWith(written);
    const reason = await loadError(registry);
    // JupyterLab drops all of the settings.
    expect(reason).not.toBeNull();

    const refused = await readRefusedSettings(registry, PLUGIN, reason);
    expect(refused).not.toBeNull();
    const settings = readSettings(refused!.user);
    expect(settings.exactPeakPerCell).toBe(false);
    expect(settings.rememberCellHistory).toBe(false);
    expect(settings.sampleIntervalSeconds).toBe(
      SETTING_LIMITS.sampleIntervalSeconds.min
    );
    expect(settings.historyMinutes).toBe(DEFAULT_SETTINGS.historyMinutes);
    expect(refused!.problems).toEqual([
      'sampleIntervalSeconds: must be >= 0.05'
    ]);
    expect(refusedSettingsMessage('GPU Memory', refused!.problems)).toContain(
      'JupyterLab refused the GPU Memory settings (sampleIntervalSeconds: must be >= 0.05).'
    );
  });

  it("keep the administrator's defaults (overrides.json, which the server writes into the schema)", async () => {
    const overridden = JSON.parse(JSON.stringify(schema));
    overridden.properties.historyMinutes.default = 120;
    overridden.properties.rememberTimeline.default = false;
    const registry = registryWith(
      '{"sampleIntervalSeconds": 0.01, "rememberTimeline": true}',
      overridden
    );
    const refused = await readRefusedSettings(
      registry,
      PLUGIN,
      await loadError(registry)
    );
    const settings = readSettings(refused!.user);
    expect(settings.historyMinutes).toBe(120);
    expect(settings.rememberTimeline).toBe(true); // the user's own value still wins
  });

  it("a bad value of the wrong type takes the administrator's default, not the code's", async () => {
    const overridden = JSON.parse(JSON.stringify(schema));
    overridden.properties.warningThresholdPercent.default = 70;
    overridden.properties.units.default = 'decimal';
    overridden.properties.exactPeakPerCell.default = false;
    const registry = registryWith(
      '{"warningThresholdPercent": "90", "units": "GB", "exactPeakPerCell": "no", "historyMinutes": 60}',
      overridden
    );
    const refused = await readRefusedSettings(
      registry,
      PLUGIN,
      await loadError(registry)
    );
    const settings = readSettings(refused!.user);
    expect(settings.warningThresholdPercent).toBe(70);
    expect(settings.units).toBe('decimal');
    // The peak reset that the administrator switched off stays off.
    expect(settings.exactPeakPerCell).toBe(false);
    expect(settings.historyMinutes).toBe(60);
  });

  it('an infinite value (JSON5) is out of range: held to its limit, as the message says', async () => {
    const registry = registryWith(
      '{sampleIntervalSeconds: Infinity, changeThresholdMiB: -Infinity, historyMinutes: NaN}'
    );
    const refused = await readRefusedSettings(
      registry,
      PLUGIN,
      await loadError(registry)
    );
    const settings = readSettings(refused!.user);
    expect(settings.sampleIntervalSeconds).toBe(
      SETTING_LIMITS.sampleIntervalSeconds.max
    );
    expect(settings.changeThresholdMiB).toBe(
      SETTING_LIMITS.changeThresholdMiB.min
    );
    expect(settings.historyMinutes).toBe(DEFAULT_SETTINGS.historyMinutes);
  });

  it('a bad snippet entry costs only that entry', async () => {
    const registry = registryWith(
      JSON.stringify({
        exactPeakPerCell: false,
        snippets: [{ id: 'mine', title: 'no code' }]
      })
    );
    const reason = await loadError(registry);
    expect(reason).not.toBeNull();
    const refused = await readRefusedSettings(registry, PLUGIN, reason);
    expect(readSettings(refused!.user).exactPeakPerCell).toBe(false);
    expect(refused!.problems[0]).toMatch(
      /^snippets\.0: must have required property/
    );
  });

  it('a key of another version of the extension is no reason to refuse them', async () => {
    const registry = registryWith(
      '{"exactPeakPerCell": false, "aSettingOfANewerVersion": 3}'
    );
    const settings = await registry.load(PLUGIN);
    expect(readSettings(settings.composite).exactPeakPerCell).toBe(false);
  });

  it('are not guessed at where the file is not even JSON5', async () => {
    const registry = registryWith('{"exactPeakPerCell": fals');
    const reason = await loadError(registry);
    expect(await readRefusedSettings(registry, PLUGIN, reason)).toBeNull();
  });
});

describe('describeProblems', () => {
  it('names where and what, whatever the registry threw', () => {
    expect(
      describeProblems([
        {
          instancePath: '/snippets/2/code',
          message: 'must NOT have fewer than 1 items'
        },
        { instancePath: '', message: 'must be object' },
        {}
      ])
    ).toEqual([
      'snippets.2.code: must NOT have fewer than 1 items',
      'the settings: must be object',
      'the settings: invalid'
    ]);
    expect(describeProblems(new Error('Could not fetch'))).toEqual([
      'Could not fetch'
    ]);
  });
});
