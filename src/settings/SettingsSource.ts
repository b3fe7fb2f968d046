/**
 * Reads the extension's settings from JupyterLab's setting registry and
 * follows the user's changes. When the registry refuses the settings whole
 * because one value breaks the schema, it reads them as written, so that
 * only the bad value is lost, and says which one in a notification.
 * Features read their typed settings from the monitor; a feature that keeps
 * keys of its own, as the snippets do, reads them from `raw`.
 */
import { Notification } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ISignal, Signal } from '@lumino/signaling';

import { readSettings, SetSetting, VramSettings } from './settings';

/** The settings as last read, before parsing. */
export interface IRawSettings {
  /**
   * The composite settings, or the user's as written when the registry
   * refused them. It is undefined when none could be read.
   */
  readonly values: unknown;
  /** The schema's default of one key, where the registry knows it. */
  defaultOf(key: string): unknown;
}

/**
 * The extension's settings, read from the registry, or the defaults without
 * one.
 */
export class SettingsSource {
  constructor(options: SettingsSource.IOptions) {
    this._options = options;
  }

  /** The settings as last read, or null until the first read. */
  get raw(): IRawSettings | null {
    return this._raw;
  }

  /** Fires after each read, which happens at the start and on every change. */
  get changed(): ISignal<this, IRawSettings> {
    return this._changed;
  }

  /**
   * Changes one setting through the registry, which stores it and reads the
   * settings again. Without a registry, it changes the monitor's setting
   * directly.
   */
  readonly set: SetSetting = async (key, value) => {
    if (this._settings) {
      await this._settings.set(key, value);
    } else {
      this._options.apply({ ...this._options.current(), [key]: value });
    }
  };

  /** Reads the settings the first time, and then follows their changes. */
  start(): void {
    const { registry, pluginId } = this._options;
    if (!registry) {
      this._read({ values: undefined, defaultOf: () => undefined }, null);
      return;
    }
    registry.load(pluginId).then(
      settings => {
        this._settings = settings;
        const read = () =>
          this._read(
            {
              values: settings.composite,
              defaultOf: key => settings.default(key)
            },
            readSettings(settings.composite)
          );
        read();
        settings.changed.connect(read);
      },
      reason => void this._readRefused(registry, reason)
    );
  }

  private async _readRefused(
    registry: ISettingRegistry,
    reason: unknown
  ): Promise<void> {
    const { pluginId, title } = this._options;
    const refused = await import('./refusedSettings')
      .then(async module => {
        const read = await module.readRefusedSettings(
          registry,
          pluginId,
          reason
        );
        return (
          read && {
            read,
            message: module.refusedSettingsMessage(title, read.problems)
          }
        );
      })
      .catch(() => null);
    if (refused) {
      console.warn(`jupyterlab-vram: ${refused.message}`, reason);
      this._read(
        { values: refused.read.user, defaultOf: () => undefined },
        readSettings(refused.read.user)
      );
      Notification.warning(refused.message, { autoClose: false });
      return;
    }
    console.warn(
      'jupyterlab-vram: could not load settings, using defaults.',
      reason
    );
    this._read({ values: undefined, defaultOf: () => undefined }, null);
  }

  /**
   * Hands new settings to the monitor and tells the features. Null keeps the
   * settings in force.
   */
  private _read(raw: IRawSettings, settings: VramSettings | null): void {
    this._raw = raw;
    this._options.apply(settings ?? this._options.current());
    this._changed.emit(raw);
  }

  private _options: SettingsSource.IOptions;
  private _settings: ISettingRegistry.ISettings | null = null;
  private _raw: IRawSettings | null = null;
  private _changed = new Signal<this, IRawSettings>(this);
}

/** The options of SettingsSource. */
export namespace SettingsSource {
  /** Where the settings come from and where they go. */
  export interface IOptions {
    /**
     * JupyterLab's setting registry. Without one (null), the defaults apply
     * and changes are kept in memory only.
     */
    registry: ISettingRegistry | null;
    /** The plugin whose schema holds the settings. */
    pluginId: string;
    /** The settings' title in the Settings Editor, for the refusal message. */
    title: string;
    /** Returns the settings in force. */
    current(): VramSettings;
    /** Puts settings in force; this is the monitor's updateSettings. */
    apply(settings: VramSettings): void;
  }
}
