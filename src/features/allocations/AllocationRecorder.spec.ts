/** AllocationRecorder: the toggle, the listing and the recording settings of one kernel. */
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
    expect(recorder.listing).toBeNull(); // off frees the kernel's history: nothing to show
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
    await settle(); // the parser loads on demand
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
    recorder.ensureKnown(); // an answer is on its way
    await settle();
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    expect(recorder.enabled).toBe(false);
    recorder.ensureKnown(); // known: nothing to ask
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    model.setState('kernel-starting'); // a restart: recording ended, state unknown again
    recorder.ensureKnown(); // not live: cannot ask yet
    expect(connection.allocationSites).toHaveBeenCalledTimes(1);
    const changes: string[] = [];
    recorder.changed.connect((_, change) => changes.push(change));
    model.setState('live');
    expect(changes).toContain('available'); // the Lines tab renders, and asks
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
    await recorder.setRecording(true); // ON: 16 frames, 100,000 entries
    connection.recordAllocations.mockClear();
    expect(await recorder.applySettings()).toBeNull(); // nothing changed: nothing sent
    settings.frames = 32;
    connection.recordAllocations.mockResolvedValueOnce(RESTARTED);
    expect(await recorder.applySettings()).toEqual(RESTARTED);
    expect(connection.recordAllocations).toHaveBeenCalledWith({
      enabled: true,
      host_frames: 32,
      gpu_max_entries: 100_000
    });
    expect(recorder.recording).toEqual(RESTARTED);
    // the GPU bound alone counts too
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
    expect(await recorder.applySettings()).toBeNull(); // unknown
    await recorder.setRecording(false);
    connection.recordAllocations.mockClear();
    expect(await recorder.applySettings()).toBeNull(); // off: the next start takes them
    connection.otherMessage.emit({
      type: 'allocation_recording',
      recording: { ...ON, host: { ...ON.host, state: 'shared', frames: 5 } }
    });
    await settle();
    expect(recorder.enabled).toBe(true);
    expect(await recorder.applySettings()).toBeNull(); // someone else's tracemalloc keeps its depth
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
    expect(await recorder.applySettings()).toBeNull(); // and someone else's allocator history its size
    expect(connection.recordAllocations).not.toHaveBeenCalled();
  });
});
