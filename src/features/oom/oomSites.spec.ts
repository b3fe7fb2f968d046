import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../../ui/commandIds';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { oomActions } from './oomActions';
import { parseCellRecord } from '../../protocol/cell';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { OomDiagnosisView } from './OomDiagnosisView';
import { makeCellRecord, oomRecord } from '../../testing/cellFixtures';
import { EVIL, makeHello, MiB, wire } from '../../testing/fixtures';

/**
 * Returns a host out-of-memory diagnosis shaped as oom_watch.py sends it; the
 * end-to-end test tests/e2e/test_allocation_sites_e2e.py checks that shape.
 */
function hostDiagnosis(allocationSites: unknown): any {
  return {
    kind: 'host',
    library: null,
    device_index: null,
    requested_bytes: null,
    total_bytes: 8 * 1024 * MiB,
    free_bytes: 100 * MiB,
    allocated_bytes: null,
    reserved_unallocated_bytes: null,
    process_in_use_bytes: 2048 * MiB,
    other_processes_bytes: null,
    other_processes: [],
    capacity_bytes: null,
    allowed_bytes: null,
    num_alloc_retries: null,
    stale_bytes: 0,
    stale_holders: [],
    causes: [],
    allocation_sites: allocationSites
  };
}

const SITES = {
  recording: true,
  sites: [
    {
      device: 'host',
      cell: { execution_count: 3, cell_id: null, line: 2 },
      frame: null,
      code: EVIL,
      library_frame: null,
      bytes: 24 * MiB,
      count: 1
    },
    {
      device: 'host',
      cell: null,
      frame: { filename: '/lib/x.py', line: 9, function: null },
      code: null,
      library_frame: null,
      bytes: 1 * MiB,
      count: 4
    }
  ]
};

describe('allocation sites in the out-of-memory diagnosis', () => {
  it('are read from the record; an older helper sends none', () => {
    const parsed = parseCellRecord(oomRecord({ oom: hostDiagnosis(SITES) }));
    expect(
      'record' in parsed && parsed.record.oom?.allocation_sites?.sites
    ).toHaveLength(2);
    const old = hostDiagnosis(undefined);
    delete old.allocation_sites;
    const parsedOld = parseCellRecord(oomRecord({ oom: old }));
    expect(
      'record' in parsedOld && parsedOld.record.oom?.allocation_sites
    ).toBeNull();
  });

  it('offer to turn recording on when it was off, and only then', () => {
    const off = oomActions(
      hostDiagnosis({ recording: false, sites: [] }),
      'binary'
    );
    const record = off.find(a => a.id === 'record-allocations');
    expect(record?.steps).toEqual([
      { command: CommandIDs.recordAllocations, args: { enabled: true } }
    ]);
    expect(
      oomActions(hostDiagnosis(SITES), 'binary').some(
        a => a.id === 'record-allocations'
      )
    ).toBe(false);
    expect(
      oomActions(hostDiagnosis(null), 'binary').some(
        a => a.id === 'record-allocations'
      )
    ).toBe(false);
  });

  it('are listed as text, and a notebook line leads to its cell', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const run = jest.fn();
    const view = new OomDiagnosisView({
      settings: { ...DEFAULT_SETTINGS },
      run
    });
    view.model = model;
    Widget.attach(view, document.body);
    model.ingest(
      wire({
        type: 'cells',
        records: [
          makeCellRecord({
            record_id: 1,
            execution_count: 3,
            cell_id: 'the-cell'
          }),
          oomRecord({
            record_id: 2,
            execution_count: 4,
            oom: hostDiagnosis(SITES)
          })
        ]
      })
    );
    MessageLoop.flush();
    const rows = view.node.querySelectorAll<HTMLElement>(
      '[data-vram-role="oom-site"]'
    );
    expect(rows).toHaveLength(2);
    expect(view.node.querySelector('img')).toBeNull();
    expect(rows[0].textContent).toContain('[3] line 2');
    expect(rows[0].textContent).toContain(EVIL);
    rows[0].click();
    expect(run).toHaveBeenCalledWith(
      expect.objectContaining({
        steps: [
          {
            command: CommandIDs.goToCellLine,
            args: { cellId: 'the-cell', executionCount: 3, line: 2 }
          }
        ]
      })
    );
    // The second site lies outside the notebook, so clicking it goes nowhere.
    rows[1].click();
    expect(run).toHaveBeenCalledTimes(1);
    view.dispose();
  });

  it('lead to their cell from the keyboard too: focusable, Enter or Space', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const run = jest.fn();
    const view = new OomDiagnosisView({
      settings: { ...DEFAULT_SETTINGS },
      run
    });
    view.model = model;
    Widget.attach(view, document.body);
    model.ingest(
      wire({
        type: 'cells',
        records: [
          oomRecord({
            record_id: 2,
            execution_count: 4,
            oom: hostDiagnosis(SITES)
          })
        ]
      })
    );
    MessageLoop.flush();
    const rows = view.node.querySelectorAll<HTMLElement>(
      '[data-vram-role="oom-site"]'
    );
    expect(rows[0].tabIndex).toBe(0);
    rows[0].dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })
    );
    const space = new KeyboardEvent('keydown', {
      key: ' ',
      bubbles: true,
      cancelable: true
    });
    rows[0].dispatchEvent(space);
    expect(run).toHaveBeenCalledTimes(2);
    // Space must not also scroll the panel.
    expect(space.defaultPrevented).toBe(true);
    // The second site lies outside the notebook, so it takes no focus.
    expect(rows[1].tabIndex).toBe(-1);
    view.dispose();
  });
});
