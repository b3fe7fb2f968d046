/**
 * Settings that JupyterLab refused. Its setting registry refuses a plugin's
 * settings whole when one value breaks the schema, such as a value out of
 * range in a hand-edited settings file or overrides.json, or a snippet
 * entry that lacks a field. Every other setting the user chose would then
 * silently fall back to its default: the peak reset that the user switched
 * off would be on again, and history that the user chose not to keep would
 * be written. This module reads the user's settings as written, so that
 * readSettings can hold each value to its limits and one bad value costs
 * only itself, and it says what was refused.
 *
 * It is imported only on that path, because its JSON5 parser is a
 * separately loaded part of the bundle.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import JSON5 from 'json5';

import { readSettings } from './settings';
import { trans } from '../text/translation';

/**
 * The user's settings as written, read again after JupyterLab refused them,
 * with the registry's reasons.
 */
export interface IRefusedSettings {
  /**
   * The user's settings as written (JSON5, comments allowed), laid over the
   * schema's defaults, into which the server writes the administrator's
   * overrides.json. Each setting of VramSettings is already read with those
   * defaults. This is what readSettings and the snippets read.
   */
  user: { [key: string]: unknown };
  /** What the registry's validation said, one line per problem. */
  problems: string[];
}

/**
 * The user's settings of `plugin` as written, or null where they cannot be read
 * either.
 */
export async function readRefusedSettings(
  registry: Pick<ISettingRegistry, 'connector'>,
  plugin: string,
  reason: unknown
): Promise<IRefusedSettings | null> {
  const fetched = await registry.connector.fetch(plugin);
  if (typeof fetched?.raw !== 'string') {
    return null;
  }
  let user: unknown;
  try {
    user = fetched.raw.trim() === '' ? {} : JSON5.parse(fetched.raw);
  } catch {
    // The text is not even JSON5, so the defaults apply, as in JupyterLab.
    return null;
  }
  if (typeof user !== 'object' || user === null || Array.isArray(user)) {
    return null;
  }
  const defaults = schemaDefaults(fetched.schema);
  const merged: { [key: string]: unknown } = { ...defaults, ...user };
  // A value of the wrong type must take the schema's default, which
  // includes overrides.json, rather than readSettings' own default, so the
  // settings are read here with those defaults.
  return {
    user: { ...merged, ...readSettings(merged, readSettings(defaults)) },
    problems: describeProblems(reason)
  };
}

/**
 * Each top-level property's default in `schema`, with overrides.json included.
 */
function schemaDefaults(schema: unknown): { [key: string]: unknown } {
  const properties = (schema as { properties?: unknown } | undefined)
    ?.properties;
  const out: { [key: string]: unknown } = {};
  if (typeof properties === 'object' && properties !== null) {
    for (const [key, property] of Object.entries(properties)) {
      const value = (property as { default?: unknown } | null)?.default;
      if (value !== undefined) {
        out[key] = value;
      }
    }
  }
  return out;
}

/**
 * The registry's validation errors, which come from AJV, as "where: what"
 * lines.
 */
export function describeProblems(reason: unknown): string[] {
  if (!Array.isArray(reason) || reason.length === 0) {
    return [String(reason instanceof Error ? reason.message : reason)];
  }
  return reason.map(error => {
    const { instancePath, message } = (error ?? {}) as {
      instancePath?: unknown;
      message?: unknown;
    };
    const where =
      typeof instancePath === 'string' && instancePath !== ''
        ? instancePath.replace(/^\//, '').replace(/\//g, '.')
        : trans.__('the settings');
    return `${where}: ${typeof message === 'string' ? message : trans.__('invalid')}`;
  });
}

/**
 * The notification's text, which says what was refused, what applies
 * instead, and where to fix it.
 */
export function refusedSettingsMessage(
  title: string,
  problems: readonly string[]
): string {
  return trans.__(
    'JupyterLab refused the %1 settings (%2). Your other settings apply; a value out of range is held to its limit, any other bad one takes its default. Changes made on this page are not saved until the settings are fixed: Settings \u2192 Settings Editor \u2192 %1 (JSON Settings Editor).',
    title,
    problems.join('; ')
  );
}
