/**
 * The page-wide translation bundle of this extension.
 *
 * JupyterLab runs a page in one language (changing it reloads the page), so
 * one bundle serves every view, dialog, notification, text helper and model
 * that words something for the user. Passing it through every pure text
 * helper and model would double their signatures for a value that never
 * differs between two callers; instead the core plugin hands the
 * application's translator to `setTranslator` once, at activation, and
 * everything else reads it through `trans`.
 *
 * Until then, and in tests that set none, the bundle is JupyterLab's null
 * translator, which returns the English and fills in `%1`-style values.
 * Because the bundle can change after import, text must be translated when
 * it is shown, never in a module-level constant.
 */
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';

/** The gettext domain of this extension's messages. */
export const TRANSLATION_DOMAIN = 'jupyterlab_vram';

let current: TranslationBundle = nullTranslator.load(TRANSLATION_DOMAIN);

/**
 * Makes every later translation use `translator`'s bundle for this
 * extension's domain. With `null`, as when JupyterLab has no translator,
 * the texts are in English again.
 */
export function setTranslator(translator: ITranslator | null): void {
  current = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
}

/**
 * The current bundle, for code that hands it on, such as a JupyterLab
 * widget that takes a `TranslationBundle` of its own.
 */
export function currentBundle(): TranslationBundle {
  return current;
}

/**
 * Translates through whichever bundle is current when it is called:
 * `trans.__('… %1 …', value)` for a sentence, `trans._n(one, many, n)` for
 * a plural (`%1` is `n`), as in JupyterLab's own packages, so that string
 * extraction finds every message by these names.
 */
export const trans: TranslationBundle = {
  __: (msgid, ...args) => current.__(msgid, ...args),
  _n: (msgid, msgidPlural, n, ...args) =>
    current._n(msgid, msgidPlural, n, ...args),
  _p: (msgctxt, msgid, ...args) => current._p(msgctxt, msgid, ...args),
  _np: (msgctxt, msgid, msgidPlural, n, ...args) =>
    current._np(msgctxt, msgid, msgidPlural, n, ...args),
  gettext: (msgid, ...args) => current.gettext(msgid, ...args),
  ngettext: (msgid, msgidPlural, n, ...args) =>
    current.ngettext(msgid, msgidPlural, n, ...args),
  pgettext: (msgctxt, msgid, ...args) =>
    current.pgettext(msgctxt, msgid, ...args),
  npgettext: (msgctxt, msgid, msgidPlural, n, ...args) =>
    current.npgettext(msgctxt, msgid, msgidPlural, n, ...args),
  dcnpgettext: (domain, msgctxt, msgid, msgidPlural, n, ...args) =>
    current.dcnpgettext(domain, msgctxt, msgid, msgidPlural, n, ...args)
};
