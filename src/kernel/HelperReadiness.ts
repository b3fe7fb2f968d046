/**
 * Learns ahead of time what delivering the helper at once takes: each
 * kernel's language, from its spec (which the server knows before the kernel
 * answers) or from its info reply, and the helper's code and the steps
 * that send it (./helperCode.ts), which are fetched as soon as a Python
 * kernel is seen. This is needed because a cell that is
 * about to be sent cannot wait for either (see
 * KernelHelperConnection.deliverBeforeExecution).
 */
import { Kernel, KernelSpec } from '@jupyterlab/services';

import { loadMessageReaders } from '../protocol/messageReaders';
import { HelperBootstrapSteps, loadHelperBootstrapSteps } from './helperCode';

/**
 * Knows ahead of time what delivering the helper needs: each kernel's language
 * and the helper's code.
 */
export class HelperReadiness {
  /** `load` fetches the helper's bootstrap code, which lives in a webpack chunk of its own. */
  constructor(load: () => Promise<string>) {
    this._load = load;
  }

  /**
   * The code, if it has been loaded; null otherwise. Once it is there, so are
   * the delivery steps (`steps`): a cell about to be sent can take the helper
   * ahead of it in the same tick.
   */
  get code(): string | null {
    return this._code;
  }

  /** The delivery steps, if they have been loaded; null otherwise. */
  get steps(): HelperBootstrapSteps | null {
    return this._steps;
  }

  /** The code, loaded once and kept (with the delivery steps). */
  async load(): Promise<string> {
    if (this._code === null) {
      const [code] = await Promise.all([this._load(), this.loadSteps()]);
      this._code = code;
    }
    return this._code;
  }

  /**
   * The delivery steps, loaded once and kept, together with the readers of
   * the helper's messages: the steps open the comm, so its first message
   * finds them there.
   */
  async loadSteps(): Promise<HelperBootstrapSteps> {
    if (this._steps === null) {
      const [steps] = await Promise.all([
        loadHelperBootstrapSteps(),
        loadMessageReaders()
      ]);
      this._steps = steps;
    }
    return this._steps;
  }

  /**
   * Learns `kernel`'s language from its spec, which needs no answer from the
   * kernel. A spec that names a Python kernel other than ipykernel rules the
   * kernel out before its info reply could, so that a cell run in the
   * meantime does not take the helper to it.
   */
  watchSpec(kernel: Kernel.IKernelConnection): void {
    kernel.spec?.then(
      spec => {
        if (spec && specOfUnsupportedPython(spec)) {
          this.noteUnsupported(kernel.id);
        }
        this.noteLanguage(kernel.id, spec?.language);
      },
      () => undefined
    );
  }

  /** Records the language that a kernel's spec or info names, and starts fetching the code for a Python kernel. */
  noteLanguage(kernelId: string, language: string | undefined): void {
    if (!language) {
      return;
    }
    this._languages.set(kernelId, language);
    if (isPython(language) && this._code === null) {
      this.load().catch(() => undefined); // A bootstrap run tries again if this fails.
    }
  }

  /** True only when the kernel is known to run a Python that the helper supports; this is kept across restarts. */
  isPython(kernelId: string): boolean {
    return (
      isPython(this._languages.get(kernelId)) &&
      !this._unsupported.has(kernelId)
    );
  }

  /** Marks a Python kernel that its info says is not ipykernel, so the helper is never delivered to it. */
  noteUnsupported(kernelId: string): void {
    this._unsupported.add(kernelId);
  }

  private _load: () => Promise<string>;
  private _code: string | null = null;
  private _steps: HelperBootstrapSteps | null = null;
  private _languages = new Map<string, string>();
  private _unsupported = new Set<string>();
}

/**
 * xeus-python's specs run `xpython` (and are named after it), and
 * JupyterLite's Pyodide kernel says so in its display name. Both speak
 * Python without the IPython events, comms and threads that the helper
 * needs. Only whole words match, because an ipykernel environment named
 * "xeus-dev" is not a xeus kernel.
 */
const XEUS_PROGRAM = /^xpython(\.exe)?$/i;
const UNSUPPORTED_NAME = /\b(xpython|pyodide)\b/i;

function specOfUnsupportedPython(
  spec: Partial<KernelSpec.ISpecModel>
): boolean {
  const program = (spec.argv?.[0] ?? '').split(/[\\/]/).pop() ?? '';
  return (
    XEUS_PROGRAM.test(program) ||
    UNSUPPORTED_NAME.test(spec.name ?? '') ||
    UNSUPPORTED_NAME.test(spec.display_name ?? '')
  );
}

function isPython(language: string | undefined): boolean {
  return language?.toLowerCase() === 'python';
}
