/**
 * What delivering the kernel helper takes, loaded when a kernel first needs
 * it: the helper's code, which scripts/bundle-helper.mjs generates from
 * python_helper/ (about 50 kB that a page with no Python kernel never needs),
 * and the steps that deliver it (./helperBootstrapLazy.ts, which a page with
 * no kernel never needs). Each is a chunk of its own, fetched on the first
 * call and kept for every kernel after that.
 */
import type * as BootstrapSteps from './helperBootstrapLazy';

/** The module of the delivery steps (./helperBootstrapLazy.ts). */
export type HelperBootstrapSteps = typeof BootstrapSteps;

let loading: Promise<string> | null = null;
let loadingSteps: Promise<HelperBootstrapSteps> | null = null;

/**
 * Loads the helper's bootstrap code, fetching its chunk on the first call only.
 */
export function loadHelperBootstrapCode(): Promise<string> {
  if (!loading) {
    loading = import('./helperBundle.generated').then(
      module => module.HELPER_BOOTSTRAP_CODE,
      reason => {
        loading = null; // a failed fetch (e.g. the server restarting) is tried again next time
        throw reason;
      }
    );
  }
  return loading;
}

/**
 * Loads the steps that deliver the helper (reading the kernel's language,
 * sending the code, opening the comm), fetching their chunk on the first call only.
 */
export function loadHelperBootstrapSteps(): Promise<HelperBootstrapSteps> {
  if (!loadingSteps) {
    loadingSteps = import('./helperBootstrapLazy').catch(reason => {
      loadingSteps = null; // a failed fetch is tried again next time
      throw reason;
    });
  }
  return loadingSteps;
}
