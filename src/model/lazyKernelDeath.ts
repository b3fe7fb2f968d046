/**
 * Loads kernelDeath.ts, which explains a death, with the first death a page
 * sees rather than with the page, because a death is rare and its wording
 * is long. A caller asks for the module and gets null while it loads; `then`
 * runs once it has loaded, and the caller renders again from the state of
 * that moment.
 */
import type * as KernelDeath from './kernelDeath';

let loaded: typeof KernelDeath | null = null;
let loading: Promise<typeof KernelDeath> | null = null;

/**
 * Returns the module that explains kernel deaths if it has loaded, and
 * otherwise starts loading it and returns null.
 */
export function kernelDeathText(then: () => void): typeof KernelDeath | null {
  if (loaded) {
    return loaded;
  }
  loading ??= import('./kernelDeath').then(
    module => (loaded = module),
    reason => {
      // The load is tried again at the next death or render, because the
      // failure may pass, as with a network blip, or a page outliving its
      // build.
      loading = null;
      throw reason;
    }
  );
  loading.then(then, reason => {
    console.warn(
      'jupyterlab-vram: could not load the explanation of a kernel death.',
      reason
    );
  });
  return null;
}

/**
 * Resolves once the explanation has loaded. Tests use it, and so can a page
 * that wants the explanation early.
 */
export function kernelDeathTextLoaded(): Promise<void> {
  return new Promise(resolve => {
    if (kernelDeathText(resolve)) {
      resolve();
    }
  });
}
