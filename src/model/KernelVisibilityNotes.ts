/**
 * The visibility notes of one kernel's model, which visibilityNotes.ts words,
 * and what they are made of besides the hello and the latest sample: the
 * latest problem with the helper's messages, sampling settings sent and not
 * applied yet, and how long NVML has not attributed memory to the kernel.
 *
 * Only the sidebar shows the notes, so their wording loads with the sidebar,
 * which hands the deriver over through `deriveNotesWith`. Until then every
 * model has no notes, which costs nothing because nothing reads them; a
 * model derives them when they are first read after that.
 */
import type { HelloMessage } from '../protocol/messages';
import type { SampleMessage } from '../protocol/sample';
import { NvmlAttributionClock } from './NvmlAttributionClock';
import type { VisibilityInputs, VisibilityNote } from './visibilityNotes';

/** Turns a model's figures into its visibility notes (visibilityNotes.ts). */
export type NotesDeriver = (inputs: VisibilityInputs) => VisibilityNote[];

/** The deriver shared by every model, because the sidebar loads the wording once for all of them. */
let notesDeriver: NotesDeriver | null = null;

/**
 * Makes every model derive its notes with `deriver` after this call. Null
 * means no notes, as at start-up.
 */
export function deriveNotesWith(deriver: NotesDeriver | null): void {
  notesDeriver = deriver;
}

/** A cheap equality test, so that a change is emitted only when the notes really changed. */
function sameNotes(
  a: readonly VisibilityNote[],
  b: readonly VisibilityNote[]
): boolean {
  return (
    a.length === b.length &&
    a.every((n, i) => n.id === b[i].id && n.text === b[i].text)
  );
}

/** What KernelVisibilityNotes reads of, and tells, the model it belongs to. */
export interface IKernelVisibilityNotesHost {
  hello(): HelloMessage | null;
  latest(): SampleMessage | null;
  /**
   * When the latest sample arrived, in seconds on the local clock, or 0 before
   * any.
   */
  lastSampleArrival(): number;
  /** Called when the notes changed. */
  changed(): void;
}

/**
 * Keeps the visibility notes of one kernel's model, deriving them again when
 * what they are made of changes.
 */
export class KernelVisibilityNotes {
  constructor(host: IKernelVisibilityNotesHost) {
    this._host = host;
  }

  get notes(): readonly VisibilityNote[] {
    if (this._stale && notesDeriver) {
      // This is the first read since the deriver came, and the reader is
      // about to render the notes, so they are derived now.
      this._notes = notesDeriver(this._inputs());
      this._stale = false;
    }
    return this._notes;
  }

  /**
   * The latest problem with the helper's messages, which is shown as a note.
   */
  get problem(): string | null {
    return this._problem;
  }

  reportProblem(text: string): void {
    this._problem = text;
    this.update();
  }

  /**
   * Called when a new kernel session starts, so that what was noted of the
   * previous one is dropped. The caller updates once it has forgotten its
   * own figures too.
   */
  forgetSession(): void {
    this._nvmlClock.reset();
    this._problem = null;
  }

  /**
   * Called when a sample came. The sample starts, continues or ends a run of
   * samples in which NVML does not attribute memory to the kernel.
   */
  sampled(sample: SampleMessage): void {
    this._nvmlClock.sampled(sample);
  }

  /**
   * Records that new sampling settings were sent while a cell runs. While
   * `applied` is pending, a note says so.
   */
  settingsSent(applied: Promise<unknown>): void {
    this._settingsPending++;
    this.update();
    const done = () => {
      this._settingsPending--;
      this.update();
    };
    applied.then(done, done);
  }

  /**
   * Derives the notes again after the figures changed, and emits when they
   * differ.
   */
  update(): void {
    const inputs = this._inputs();
    this._nvmlClock.schedule(inputs.nvmlUnattributedForS);
    if (!notesDeriver) {
      this._stale = true;
      return;
    }
    const notes = notesDeriver(inputs);
    this._stale = false;
    if (!sameNotes(notes, this._notes)) {
      this._notes = notes;
      this._host.changed();
    }
  }

  dispose(): void {
    this._nvmlClock.dispose();
  }

  private _inputs(): VisibilityInputs {
    const latest = this._host.latest();
    return {
      hello: this._host.hello(),
      sample: latest,
      problem: this._problem,
      nvmlUnattributedForS: this._nvmlClock.unattributedFor(
        latest,
        this._host.lastSampleArrival()
      ),
      settingsPending: this._settingsPending > 0
    };
  }

  private _host: IKernelVisibilityNotesHost;
  private _nvmlClock = new NvmlAttributionClock(() => this.update());
  private _notes: readonly VisibilityNote[] = [];
  /**
   * True when figures changed while no deriver was loaded, so `_notes` is
   * not derived from them.
   */
  private _stale = false;
  private _problem: string | null = null;
  private _settingsPending = 0;
}
