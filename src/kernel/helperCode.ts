/**
 * The code that delivers the kernel helper, which scripts/bundle-helper.mjs
 * generates from python_helper/. It is about 50 kB that a page with no
 * Python kernel never needs, so it is a chunk of its own, fetched the first
 * time a kernel asks for it and kept for every kernel after that.
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
