/**
 * Tests the allocation protocol's readers on the listings, recording
 * states, broadcasts and snapshots that the kernel sends.
 */
import {
  parseAllocationSites,
  parseAllocationSnapshot,
  parseRecordingBroadcast,
  parseRecordingState
} from './allocation';
import {
  kernelListing,
  OFF,
  ON,
  parsedListing,
  RESTARTED
} from '../testing/allocationSitesFixtures';

describe('allocation protocol', () => {
  it('reads a listing, largest site first', () => {
    const listing = parsedListing();
    expect(listing.devices[0].sites.map(s => s.bytes)).toEqual([
      32_000_112, 5_000_000, 80_000
    ]);
    expect(listing.recording).toEqual(ON);
    expect(listing.cells[0].alive_bytes).toEqual({ host: 32_000_112 });
  });

  it('names the offending field of a malformed listing', () => {
    const bad = kernelListing() as any;
    bad.devices[0].sites[1].bytes = -1;
    const parsed = parseAllocationSites(bad);
    expect(parsed).toEqual({
      error: expect.stringContaining(
        'allocation_sites.devices[0].sites[1].bytes'
      )
    });
    expect(parseRecordingState({ enabled: 'yes' })).toEqual({
      error: expect.stringContaining('record_allocations.host')
    });
  });

  it('reads the restart times, and their absence from an older helper as null', () => {
    expect(parseRecordingState(RESTARTED)).toEqual({ value: RESTARTED });
    const older = JSON.parse(JSON.stringify(RESTARTED));
    delete older.host.restarted_at;
    delete older.host.restart_reason;
    delete older.gpu.restarted_at;
    delete older.gpu.restart_kept_stacks;
    delete older.gpu.restart_reason;
    const parsed = parseRecordingState(older);
    expect('value' in parsed && parsed.value.host.restarted_at).toBeNull();
    expect('value' in parsed && parsed.value.host.restart_reason).toBeNull();
    expect('value' in parsed && parsed.value.gpu.restarted_at).toBeNull();
    expect(
      'value' in parsed && parsed.value.gpu.restart_kept_stacks
    ).toBeNull();
    expect('value' in parsed && parsed.value.gpu.restart_reason).toBeNull();
    expect(
      parseRecordingState({
        ...RESTARTED,
        gpu: { ...RESTARTED.gpu, restart_reason: 7 }
      })
    ).toEqual({
      error: expect.stringContaining('record_allocations.gpu.restart_reason')
    });
    expect(
      parseRecordingState({
        ...RESTARTED,
        host: { ...RESTARTED.host, restarted_at: 'noon' }
      })
    ).toEqual({
      error: expect.stringContaining('record_allocations.host.restarted_at')
    });
  });

  it('reads the broadcast and the snapshot', () => {
    expect(
      parseRecordingBroadcast({ type: 'allocation_recording', recording: OFF })
    ).toEqual(OFF);
    expect(parseRecordingBroadcast({ type: 'sample' })).toBeNull();
    expect(
      parseRecordingBroadcast({ type: 'allocation_recording', recording: 3 })
    ).toBeNull();
    expect(
      parseAllocationSnapshot({
        format: 'pickle',
        data_base64: null,
        bytes: 0,
        reason: 'not recording'
      })
    ).toEqual({
      value: {
        format: 'pickle',
        data_base64: null,
        bytes: 0,
        reason: 'not recording'
      }
    });
  });
});
