/**
 * How this page runs its own code in a kernel (the helper's bootstrap, the
 * wake-up of a restarted kernel): silently, so that the user's notebook
 * sees none of it.
 */

/**
 * The execute options of the page's own code: no history, no Out[], no cell
 * hooks (IPython fires none for a silent execution), no input.
 */
export const SILENT = {
  silent: true,
  store_history: false,
  allow_stdin: false,
  stop_on_error: false
} as const;
