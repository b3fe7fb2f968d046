/**
 * Tests for AllocationRecorder, which holds one kernel's allocation recording:
 * the toggle, the listing of allocation sites, and the recording settings.
 */
import { Widget } from '@lumino/widgets';

import { DEFAULT_SETTINGS } from '../../settings/settings';
import { AllocationSitesView, asOfText } from './AllocationSitesView';
import { wire } from '../../testing/fixtures';
import { makeCellRecord } from '../../testing/cellFixtures';
import { settle } from '../../testing/fakeKernel';
import {
  liveRecorder,
  OFF,
  ON,
  parsedListing,
  RESTARTED
} from '../../testing/allocationSitesFixtures';

describe('AllocationRecorder', () => {
  it('sends the settings with the toggle and keeps the state', async () => {
    const { connection, recorder } = liveRecorder();
    expect(recorder.recording).toBeNull();
    await recorder.setRecording(true);
    expect(connection.recordAllocations).toHaveBeenCalledWith({
      enabled: true,
      host_frames: 8,
      gpu_max_entries: 5000
    });
    expect(recorder.enabled).toBe(true);
    await recorder.refresh();
    expect(recorder.listing?.devices).toHaveLength(1);
    await recorder.setRecording(false);
    expect(recorder.enabled).toBe(false);
    // Turning recording off frees the kernel's history, so there is nothing
    // left to show.
    expect(recorder.listing).toBeNull();
  });

  it('says when its listing was made and how many cells ran since', async () => {
    const { model, recorder } = liveRecorder();
    const view = new AllocationSitesView({
      settings: DEFAULT_SETTINGS,
      actions: {} as any
    });
    Widget.attach(view, document.body);
    view.model = model;
    view.recorder = recorder;
    const asOf = () =>
      view.node.querySelector<HTMLElement>('[data-vram-role="sites-as-of"]')!;
    view.renderNow();
    expect(asOf().hidden).toBe(true);
    const before = Date.now() / 1000;
    await recorder.refresh();
    expect(recorder.listedAt).toBeGreaterThanOrEqual(before);
    view.renderNow();
    expect(asOf().hidden).toBe(false);
    expect(asOf().textContent).toBe(asOfText(recorder.listedAt!, 0));
    expect(asOf().textContent).toMatch(/^Listed at \d\d:\d\d:\d\d\.$/);
    model.ingest(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({ record_id: 1 }),
          makeCellRecord({ record_id: 2 })
        ]
      })
    );
    expect(recorder.cellsRunSinceListing).toBe(2);
    view.renderNow();
    expect(asOf().textContent).toContain(
      '2 cells have run since: Refresh to see what the lines hold now.'
    );
    await recorder.refresh();
    expect(recorder.cellsRunSinceListing).toBe(0);
    view.dispose();
  });

  it('follows broadcasts and forgets everything when the kernel restarts', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: ON
    });
    // The parser loads on demand, so the state arrives a moment later.
    await settle();
    expect(recorder.recording).toEqual(ON);
    await recorder.refresh();
    model.setState('kernel-starting');
    expect(recorder.recording).toBeNull();
    expect(recorder.listing).toBeNull();
  });

  it('asks a kernel whose recording state is unknown once, and again after a restart', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockImplementation(async () => ({
      ...parsedListing(),
      recording: OFF,
      devices: []
    }));
    recorder.ensureKnown();
    // An answer is already on its way, so the second call asks nothing.
    recorder.ensureKnown();
    await settle();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    expect(recorder.enabled).toBe(false);
    // The state is known now, so there is nothing to ask.
    recorder.ensureKnown();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    // A restart ends the recording and makes the state unknown again.
    model.setState('kernel-starting');
    // The kernel is not live yet, so it cannot be asked.
    recorder.ensureKnown();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    const changes: string[] = [];
    recorder.changed.connect((_, change) => changes.push(change));
    model.setState('live');
    // This change makes the Lines tab render, and the render asks again.
    expect(changes).toContain('available');
    recorder.ensureKnown();
    await settle();
    expect(connection.allocationSites).toHaveBeenCalledTimes(2);
    // A failed question is not repeated at every render of the same kernel.
    model.setState('kernel-starting');
    model.setState('live');
    connection.allocationSites.mockRejectedValueOnce(new Error('timed out'));
    recorder.ensureKnown();
    await settle();
    recorder.ensureKnown();
    expect(connection.allocationSites).toHaveBeenCalledTimes(3);
    expect(recorder.recording).toBeNull();
  });

  it('says why it cannot ask, and reports failures as sentences', async () => {
    const { model, connection, recorder } = liveRecorder();
    connection.allocationSites.mockRejectedValueOnce(
      new Error('The kernel helper reported boom')
    );
    expect(await recorder.refresh()).toBeNull();
    expect(recorder.error).toBe('The kernel helper reported boom');
    model.setState('disconnected');
    expect(await recorder.setRecording(true)).toBeNull();
    expect(recorder.error).toContain('not running');
    expect(connection.recordAllocations).not.toHaveBeenCalled();
  });
});

describe('AllocationRecorder: settings changed while recording', () => {
  it('sends the request again with the new values to a kernel that records', async () => {
    const settings = { frames: 16, entries: 100_000 };
    const { connection, recorder } = liveRecorder(settings);
    // The fake kernel answers with ON, which records 16 frames and 100,000
    // entries, as these settings ask.
    await recorder.setRecording(true);
    connection.recordAllocations.mockClear();
    // Nothing has changed, so nothing is sent.
    expect(await recorder.applySettings()).toBeNull();
    settings.frames = 32;
    connection.recordAllocations.mockResolvedValueOnce(RESTARTED);
    expect(await recorder.applySettings()).toEqual(RESTARTED);
    expect(connection.recordAllocations).toHaveBeenCalledWith({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 100_000
    });
    expect(recorder.recording).toEqual(RESTARTED);
    // A change to the GPU bound alone is sent too.
    settings.entries = 300_000;
    await recorder.applySettings();
    expect(connection.recordAllocations).toHaveBeenLastCalledWith({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 300_000
    });
  });

  it('sends nothing while recording is off, unknown, or for a depth it cannot set', async () => {
    const settings = { frames: 32, entries: 100_000 };
    const { connection, recorder } = liveRecorder(settings);
    // The recording state is unknown, so nothing is sent.
    expect(await recorder.applySettings()).toBeNull();
    await recorder.setRecording(false);
    connection.recordAllocations.mockClear();
    // Recording is off, so nothing is sent: the next start takes the settings.
    expect(await recorder.applySettings()).toBeNull();
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: { ...ON, host: { ...ON.host, state: 'shared', frames: 5 } }
    });
    await settle();
    expect(recorder.enabled).toBe(true);
    // Someone else started tracemalloc, so its depth is theirs to keep.
    expect(await recorder.applySettings()).toBeNull();
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: {
        ...ON,
        host: { ...ON.host, state: 'shared', frames: 5 },
        gpu: {
          ...ON.gpu,
          state: 'shared',
          max_entries: null,
          reason: null,
          started: 2.5
        }
      }
    });
    await settle();
    // Likewise, an allocator history that someone else started keeps its size.
    expect(await recorder.applySettings()).toBeNull();
    expect(connection.recordAllocations).not.toHaveBeenCalled();
  });
});
