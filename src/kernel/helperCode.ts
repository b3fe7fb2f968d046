/**
 * The code that delivers the kernel helper (generated from python_helper/ by
 * scripts/bundle-helper.mjs): ~50 kB that a page with no Python kernel never
 * needs. It is its own chunk, fetched the first time a kernel asks for it,
 * and kept for every kernel after that.
 */
let loading: Promise<string> | null = null;

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
