/**
 * Checks the translation rule: every user-visible string of the views and
 * the text helpers goes through the page-wide bundle. A fake bundle wraps
 * each translated message in «…». Whatever is left outside the marks must be
 * data (numbers, units, names that the fixtures put there), never a word of
 * ours, so a hard-coded English string fails here.
 */
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';

import { currentBundle, setTranslator, trans } from './translation';
import { describeState, MONITOR_STATES } from '../model/MonitorState';
import { deriveVisibilityNotes } from '../model/visibilityNotes';
import { explainKernelDeath } from '../model/kernelDeath';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../settings/settings';
import { HostMemoryCard } from '../features/overview/HostMemoryCard';
import { GpuDeviceList } from '../features/overview/GpuDeviceList';
import { StateBanner } from '../features/overview/StateBanner';
import { MemoryTimeline } from '../features/overview/MemoryTimeline';
import { TimelineWindowPicker } from '../features/overview/TimelineWindowPicker';
import { statusSummary } from '../features/overview/VramStatusItem';
import { CellHistoryView } from '../features/cells/CellHistoryView';
import { clearHistoryText } from '../features/cells/ClearHistoryDialog';
import {
  describeCellProcesses,
  describeCellRecord,
  formatCellBadge
} from '../features/cells/cellFormat';
import { summarizeCellRecord } from '../model/cellFigures';
import { processesAlongside } from '../features/cells/cellProcessFigures';
import { HoldersView } from '../features/cleanup/HoldersView';
import { MemoryActions } from '../features/cleanup/MemoryActions';
import { makeDeletePlan } from '../features/cleanup/deletePlan';
import {
  createDeleteDialogBody,
  deleteDialogTitle
} from '../features/cleanup/DeleteDialogBody';
import { describeResult } from '../features/cleanup/cleanupResultText';
import { KernelsView } from '../features/kernels/KernelsView';
import { shutdownKernelText } from '../features/kernels/ShutdownKernelDialog';
import { OomDiagnosisView } from '../features/oom/OomDiagnosisView';
import { explainOom } from '../features/oom/oomExplanation';
import { oomActions } from '../features/oom/oomActions';
import { KernelDeathView } from '../features/kernelDeath/KernelDeathView';
import { GpuLoadSection } from '../features/overview/GpuLoadSection';
import { TimelineLoadToggles } from '../features/overview/TimelineLoadToggles';
import {
  createCellBadgeNode,
  renderCellBadge
} from '../features/cells/CellBadge';
import { cellHints } from '../features/cells/cellHints';
import { cellLoadOf } from '../features/cells/cellLoad';
import { cellLoadLines, coverageText } from '../features/cells/cellLoadText';
import { throttleReasonText, unavailableReasonText } from './gpuLoadText';
import { makeCellGpuLoad, makeGpuLoad } from '../testing/loadFixtures';
import {
  GiB,
  makeGpu,
  makeHello,
  makeNvmlProcessSample,
  makeSample,
  MiB,
  wire
} from '../testing/fixtures';
import {
  makeCellRecord,
  makeOomDiagnosis,
  manyRecords,
  oomRecord
} from '../testing/cellFixtures';
import {
  makeDeleteResult,
  makeEntry,
  makeFreeResult,
  makeHidden,
  makeListing
} from '../testing/cleanupFixtures';
import { FakeSource } from '../testing/kernelsTabFixtures';
import { dead } from '../testing/kernelDeathWatchFixtures';
import { settle } from '../testing/fakeKernel';
import {
  makeCellProcesses,
  makeProcessTree,
  makeStopResult,
  makeTreeProcess
} from '../testing/processFixtures';
import { ProcessesView } from '../features/processes/ProcessesView';
import { ProcessTracker } from '../features/processes/ProcessTracker';
import { stopProcessSentences } from '../features/processes/StopProcessDialog';

const OPEN = '\u00ab';
const CLOSE = '\u00bb';

/** Fills in gettext's `%1`-style values, as JupyterLab's bundles do. */
function fill(message: string, args: unknown[]): string {
  return message.replace(/%(\d+)/g, (_, i) => String(args[Number(i) - 1]));
}

/** A bundle that marks every message it translates with «…». */
const marking: TranslationBundle = {
  __: (msgid, ...args) => OPEN + fill(msgid, args) + CLOSE,
  _n: (one, many, n, ...args) =>
    OPEN + fill(n === 1 ? one : many, [n, ...args]) + CLOSE,
  _p: (_, msgid, ...args) => OPEN + fill(msgid, args) + CLOSE,
  _np: (_, one, many, n, ...args) =>
    OPEN + fill(n === 1 ? one : many, [n, ...args]) + CLOSE,
  gettext: (msgid, ...args) => OPEN + fill(msgid, args) + CLOSE,
  ngettext: (one, many, n, ...args) =>
    OPEN + fill(n === 1 ? one : many, [n, ...args]) + CLOSE,
  pgettext: (_, msgid, ...args) => OPEN + fill(msgid, args) + CLOSE,
  npgettext: (_, one, many, n, ...args) =>
    OPEN + fill(n === 1 ? one : many, [n, ...args]) + CLOSE,
  dcnpgettext: (_d, _c, one, many, n, ...args) =>
    OPEN + fill(n === 1 ? one : many, [n, ...args]) + CLOSE
};

const markingTranslator = {
  languageCode: 'xx',
  load: (domain: string) => {
    expect(domain).toBe('jupyterlab_vram');
    return marking;
  }
} as unknown as ITranslator;

/**
 * What may stand outside the marks: figures, units, symbols and
 * punctuation, and the words the fixtures put in as data (`data`).
 */
const NOT_WORDS =
  /^(?:[\s\d.,:;()[\]{}/+\-\u2212<>=~?!#%*'"_\u00b7\u2014\u2013\u2026\u2192\u00d7\u2265\u26a0\u25be\u21b3\u0394\u00b0]|KiB|MiB|GiB|TiB|PiB|kB|KB|MB|GB|TB|B|ms|min|s|h|m|MHz|C|W|kJ|MJ|J)*$/;

/**
 * The text left outside every «…». Marks may nest, as when a translated
 * value sits in a sentence.
 */
function unmarked(text: string, data: readonly string[]): string {
  let rest = text;
  for (;;) {
    const next = rest.replace(/«[^«»]*»/g, ' ');
    if (next === rest) {
      break;
    }
    rest = next;
  }
  // Only whole words count, so that a name does not hide the letters of an
  // English word.
  for (const word of [...data].sort((a, b) => b.length - a.length)) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    rest = rest.replace(new RegExp(`(?<![\\w])${escaped}(?![\\w])`, 'g'), ' ');
  }
  return rest;
}

/** Each piece of user-visible text of `root` that is not translated. */
function untranslated(root: Element, data: readonly string[] = []): string[] {
  const found: string[] = [];
  const check = (where: string, text: string | null) => {
    if (text && !NOT_WORDS.test(unmarked(text, data))) {
      found.push(`${where}: ${text}`);
    }
  };
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // Code the user inserts or reads as code is not translated.
    if (node.parentElement?.closest('code, pre')) {
      continue;
    }
    check('text', node.textContent);
  }
  for (const el of [root, ...Array.from(root.querySelectorAll('*'))]) {
    check('title', el.getAttribute('title'));
    check('aria-label', el.getAttribute('aria-label'));
    check('placeholder', el.getAttribute('placeholder'));
  }
  return found;
}

/** The same check for a sentence that a helper returns. */
function untranslatedText(
  texts: readonly string[],
  data: readonly string[] = []
): string[] {
  return texts.filter(text => !NOT_WORDS.test(unmarked(text, data)));
}

/**
 * What the fixtures' kernel says, such as names, summaries and errors. It
 * is data and is shown as it came.
 */
const DATA = [
  'CUDA out of memory. Tried to allocate 2.00 GiB.',
  'OutOfMemoryError',
  'float32',
  'Last traceback (ZeroDivisionError)',
  'frames of the failed cell',
  'Clearing the traceback disables %debug for that error',
  'Python 3 (ipykernel)',
  'NVIDIA H100 80GB HBM3',
  'cuda:0',
  'cpu',
  'big',
  'tensor',
  'Tensor',
  'x',
  'y',
  'nb.ipynb',
  'notebook.ipynb',
  'Python 3',
  'kernel-1'
];

function attach<T extends Widget>(view: T): T {
  Widget.attach(view, document.body);
  return view;
}

function liveModel(): KernelMemoryModel {
  const model = new KernelMemoryModel({ historyCapacity: 100 });
  model.ingest(wire(makeHello()));
  model.ingest(
    wire(
      makeSample({
        gpus: [
          makeGpu({
            torch: { ...makeGpu().torch!, num_ooms: 2, num_alloc_retries: 1 }
          })
        ]
      })
    )
  );
  return model;
}

describe('the translation rule', () => {
  beforeEach(() => setTranslator(markingTranslator));
  afterEach(() => setTranslator(null));

  it('hands out the bundle the core plugin set, and English without one', () => {
    expect(currentBundle()).toBe(marking);
    expect(trans.__('Refresh')).toBe('«Refresh»');
    setTranslator(null);
    expect(trans.__('Cell [%1]', 3)).toBe('Cell [3]');
    expect(trans._n('%1 cell', '%1 cells', 2)).toBe('2 cells');
  });

  it('fails on a hard-coded string (the check itself can fail)', () => {
    const node = document.createElement('div');
    node.append('«Peak» 1.2 GiB');
    expect(untranslated(node)).toEqual([]);
    node.title = 'Peak allocated';
    expect(untranslated(node)).toEqual(['title: Peak allocated']);
    expect(untranslatedText(['Listed at 12:00.'])).toHaveLength(1);
  });

  it('translates every state sentence and visibility note', () => {
    expect(
      untranslatedText(MONITOR_STATES.map(state => describeState(state)))
    ).toEqual([]);
    const notes = deriveVisibilityNotes({
      hello: makeHello({
        torch: null,
        tensorflow: { version: '2.15', gpus_initialized: false }
      }),
      sample: null,
      problem: null,
      settingsPending: true,
      nvmlUnattributedForS: null
    } as unknown as Parameters<typeof deriveVisibilityNotes>[0]);
    expect(notes.length).toBeGreaterThan(1);
    expect(untranslatedText(notes.map(note => note.text))).toEqual([]);
  });

  it('renders the Memory tab translated', () => {
    const model = liveModel();
    const views = [
      new HostMemoryCard(DEFAULT_SETTINGS),
      new GpuDeviceList(DEFAULT_SETTINGS),
      new StateBanner(DEFAULT_SETTINGS),
      new MemoryTimeline(DEFAULT_SETTINGS)
    ].map(attach);
    for (const view of views) {
      view.model = model;
    }
    MessageLoop.flush();
    for (const view of views) {
      expect(untranslated(view.node, DATA)).toEqual([]);
    }
    const picker = new TimelineWindowPicker(() => undefined);
    picker.show(30);
    expect(untranslated(picker.node, DATA)).toEqual([]);
    const summary = statusSummary(model, DEFAULT_SETTINGS);
    expect(untranslatedText([summary.text, summary.title], DATA)).toEqual([]);
    views.forEach(view => view.dispose());
  });

  it('renders the Processes tab, the tree rows and the stop texts translated', async () => {
    const model = liveModel();
    model.setState('live');
    const worker = makeTreeProcess();
    model.ingest(wire(makeSample({ processes: makeProcessTree([]) })));
    model.ingest(
      wire(
        makeSample({ seq: 2, processes: makeProcessTree([worker], 1732200060) })
      )
    );
    const connection = {
      stopProcess: jest.fn(async () =>
        makeStopResult(worker, { outcome: 'killed', still_zombie: true })
      )
    };
    const tracker = new ProcessTracker({ connection, model });
    await tracker.stop(worker);
    model.ingest(
      wire(
        makeSample({ seq: 3, processes: makeProcessTree([worker], 1732200070) })
      )
    );
    const view = attach(
      new ProcessesView({
        settings: DEFAULT_SETTINGS,
        stop: () => undefined,
        release: () => undefined
      })
    );
    view.model = model;
    view.tracker = tracker;
    const host = attach(new HostMemoryCard(DEFAULT_SETTINGS));
    const gpus = attach(new GpuDeviceList(DEFAULT_SETTINGS));
    host.model = model;
    gpus.model = model;
    MessageLoop.flush();
    const data = [...DATA, worker.command, worker.name];
    for (const node of [view.node, host.node, gpus.node]) {
      expect(untranslated(node, data)).toEqual([]);
    }
    const request = {
      process: worker,
      origin: null,
      timeoutS: 5,
      units: 'binary' as const
    };
    expect(untranslatedText(stopProcessSentences(request), data)).toEqual([]);
    const record = makeCellRecord({ processes: makeCellProcesses() });
    expect(
      untranslatedText(
        [
          formatCellBadge(
            summarizeCellRecord(record),
            'binary',
            true,
            processesAlongside(record)
          ),
          ...describeCellProcesses(record)
        ],
        data
      )
    ).toEqual([]);
    [view, host, gpus].forEach(v => v.dispose());
  });

  it('renders the Cells tab and its texts translated', () => {
    const model = liveModel();
    const records = [
      ...manyRecords(2),
      oomRecord({ record_id: 9, execution_count: 9 })
    ];
    model.cells.merge(records);
    const view = attach(
      new CellHistoryView({
        settings: { ...DEFAULT_SETTINGS },
        actions: {
          revealCell: async () => true,
          exportHistory: () => undefined,
          clearHistory: () => undefined
        }
      })
    );
    view.model = model;
    MessageLoop.flush();
    expect(untranslated(view.node, DATA)).toEqual([]);
    const entry = model.cells.entries[0];
    expect(
      untranslatedText(
        [
          describeCellRecord(makeCellRecord(), entry.summary),
          ...clearHistoryText({ path: 'nb.ipynb', records: 3 })
        ],
        DATA
      )
    ).toEqual([]);
    view.dispose();
  });

  it('renders the GPU load translated: the card, the badge, the Cells tab, the timeline', () => {
    const section = new GpuLoadSection();
    section.render(
      makeGpuLoad({
        scope: 'mig_instance',
        parent_figures: ['power_watts'],
        sm_percent: null,
        pcie_tx_kb_per_s: 1000,
        pcie_rx_kb_per_s: null,
        unavailable: {
          sm_percent: 'no_samples',
          pcie_rx_kb_per_s: 'not_read_yet'
        }
      })
    );
    expect(untranslated(section.node, DATA)).toEqual([]);
    const idle = makeCellRecord({
      duration_s: 30,
      gpu_load: [
        makeCellGpuLoad({
          sm_mean_percent: 5,
          coverage: 'partial',
          covered_s: 20,
          energy_method: 'power_samples',
          parent_figures: ['energy_joules'],
          throttle_reasons: ['hw_slowdown', 'sw_thermal_slowdown']
        })
      ]
    });
    const model = liveModel();
    model.cells.merge([idle]);
    const entry = model.cells.entries[0];
    const load = cellLoadOf(idle);
    const badge = createCellBadgeNode();
    renderCellBadge(badge, {
      summary: entry.summary,
      executionCount: 1,
      title: cellLoadLines(idle).join('\n'),
      level: 'normal',
      saved: false,
      earlier: false,
      units: 'binary',
      load,
      hints: cellHints(idle, load)
    });
    expect(untranslated(badge, DATA)).toEqual([]);
    const view = attach(
      new CellHistoryView({
        settings: { ...DEFAULT_SETTINGS },
        actions: { insertSnippet: () => undefined }
      })
    );
    view.model = model;
    MessageLoop.flush();
    view.node
      .querySelector<HTMLElement>('[data-vram-role="cell-row"]')!
      .click();
    expect(untranslated(view.node, DATA)).toEqual([]);
    view.dispose();
    const toggles = new TimelineLoadToggles(() => undefined);
    expect(untranslated(toggles.node, DATA)).toEqual([]);
    const codes = ['no_nvml', 'not_supported', 'no_permission', 'gpu_lost'];
    const reasons = ['gpu_idle', 'sync_boost', 'board_limit', 'bit_3'];
    expect(
      untranslatedText(
        [
          ...codes.map(unavailableReasonText),
          ...reasons.map(throttleReasonText),
          coverageText('none', 0, 3)
        ],
        DATA
      )
    ).toEqual([]);
  });

  it('renders the Holders tab, the delete dialog and the results translated', async () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.setState('live');
    const listing = makeListing({
      entries: [
        makeEntry({ name: 'big', total_bytes: GiB }),
        makeEntry({ name: 'x', total_bytes: MiB, shared_with: ['y'] })
      ],
      hidden: [makeHidden()]
    });
    const connection = {
      freeMemory: jest.fn(),
      inspect: jest.fn(async () => listing),
      deleteHolders: jest.fn()
    };
    const actions = new MemoryActions({
      connection: connection as any,
      model
    });
    const view = attach(
      new HoldersView({ settings: DEFAULT_SETTINGS, onDelete: jest.fn() })
    );
    view.actions = actions;
    MessageLoop.flush();
    expect(untranslated(view.node, DATA)).toEqual([]);
    await actions.inspect();
    await settle();
    MessageLoop.flush();
    expect(untranslated(view.node, DATA)).toEqual([]);

    const plan = makeDeletePlan(
      listing,
      ['big', 'x'],
      [listing.hidden[0].holder]
    )!;
    expect(untranslated(createDeleteDialogBody(plan, 'binary'), DATA)).toEqual(
      []
    );
    expect(untranslatedText([deleteDialogTitle(plan)])).toEqual([]);
    expect(
      untranslatedText(
        [
          ...describeResult(makeFreeResult()).lines,
          ...describeResult(makeDeleteResult()).lines
        ],
        DATA
      )
    ).toEqual([]);
    view.dispose();
  });

  it('renders the Kernels tab and the shutdown question translated', () => {
    const source = new FakeSource();
    const view = attach(
      new KernelsView({
        source,
        settings: DEFAULT_SETTINGS,
        execute: () => undefined
      })
    );
    MessageLoop.flush();
    expect(untranslated(view.node, DATA)).toEqual([]);
    const model = source.add('kernel-1', 'nb.ipynb');
    model.ingest(wire(makeHello()));
    model.ingest(
      wire(
        makeNvmlProcessSample([
          { pid: 4242, used_bytes: 2 * GiB, this_process: true },
          { pid: 77, used_bytes: 3 * GiB, this_process: false }
        ])
      )
    );
    MessageLoop.flush();
    expect(untranslated(view.node, DATA)).toEqual([]);
    expect(
      untranslatedText(
        shutdownKernelText({
          kernelId: 'kernel-1',
          kernelName: 'Python 3',
          paths: ['nb.ipynb'],
          others: ['notebook.ipynb']
        }),
        DATA
      )
    ).toEqual([]);
    view.dispose();
  });

  it('renders the out-of-memory diagnosis and a kernel death translated', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const view = attach(
      new OomDiagnosisView({
        settings: { ...DEFAULT_SETTINGS },
        run: jest.fn()
      })
    );
    view.model = model;
    const diagnosis = makeOomDiagnosis({
      stale_holders: [{ holder: 'name', label: 'big', bytes: GiB }]
    });
    model.ingest(
      wire({
        type: 'cells',
        records: [
          oomRecord({ record_id: 1, execution_count: 4, oom: diagnosis })
        ]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    expect(untranslated(view.node, DATA)).toEqual([]);
    const explanation = explainOom(diagnosis, 'binary', 4);
    expect(
      untranslatedText(
        [
          explanation.headline,
          ...explanation.causes.map(c => c.text),
          ...explanation.figures.map(f => f.label),
          ...oomActions(diagnosis, 'binary').flatMap(a => [a.label, a.gain])
        ],
        DATA
      )
    ).toEqual([]);

    const death = attach(new KernelDeathView(DEFAULT_SETTINGS));
    const deadModel = dead();
    death.model = deadModel;
    MessageLoop.flush();
    expect(death.node.hidden).toBe(false);
    expect(untranslated(death.node, DATA)).toEqual([]);
    const facts = deadModel.death!;
    const said = explainKernelDeath(facts);
    expect(
      untranslatedText(
        [said.short, said.summary, ...said.details],
        [...DATA, 'memory.events oom_kill', 'memory.oom_control oom_kill']
      )
    ).toEqual([]);
    view.dispose();
    death.dispose();
  });
});
