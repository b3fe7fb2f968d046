/**
 * kernelDeath.ts's explanation of a death loads with the first death a page
 * sees, not with the page: a death is rare, its wording long. A caller asks
 * for the module; while it loads it gets null, and `then` runs once it has
 * (the caller renders again from the state of that moment).
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
      loading = null; // tried again at the next death or render (a page outliving its build, a network blip)
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

/** Resolves once the explanation has loaded (tests, and a page that wants it early). */
export function kernelDeathTextLoaded(): Promise<void> {
  return new Promise(resolve => {
    if (kernelDeathText(resolve)) {
      resolve();
    }
  });
}
