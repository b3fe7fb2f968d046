/**
 * Why did the kernel die? What the last figures before an unasked-for death
 * (status `autorestarting` or `dead`) suggest, in words and numbers, and
 * what the kernel left behind as evidence (its cgroup's OOM kill count, or
 * else the machine's, read by the restarted kernel's helper). Pure: the
 * model records the facts, this module words them, views only render.
 *
 * Never guess beyond the evidence: a container's count that rose is said as
 * fact (it counts the kernel's cgroup alone); the machine's count that rose
 * is "most likely" the out-of-memory killer, near the limit or not (memory
 * can fill between two samples a second apart, but the killer may have
 * taken another process); a count that did not rise clears the killer, near
 * the limit too, and the cause is unknown. Without a count, memory near the
 * limit is "most likely" the out-of-memory killer, and where swap
 * still had room at the last sample that is said beside it (past the limit
 * pages go to swap, and the killer acts once that is full too; but a
 * zram swap is RAM itself, and the last sample can be a second old, so room
 * there does not clear the killer); anything else is an unknown cause.
 */
import { ByteUnits, formatBytes } from '../text/format';
import { SampleMessage } from '../protocol/sample';
import { hostFigures } from './hostFigures';
import { swapFigures, swapRoomLeft } from './swapFigures';

/** Memory in use at or above this share of the limit counts as "near the limit". */
export const NEAR_LIMIT_PERCENT = 90;

/** Figures older than this at the death are said to be old. */
export const STALE_FIGURES_S = 5;

/** The cell the kernel was running when it died. */
export interface RunningCell {
  /** The notebook cell's id (from the execute request), when known. */
  cellId: string | null;
  /** The execution count the kernel gave it (execute_input), when known. */
  executionCount: number | null;
  /**
   * Whether the kernel said it started it (execute_input). A kernel that
   * dies at once (`os._exit`, a segfault) may not get that message out:
   * then the oldest request it had not answered is named, as most likely.
   */
  confirmed: boolean;
  /**
   * When it started (this browser's clock, Unix seconds): when the kernel
   * said so, else when the request was sent. Absent when unknown.
   */
  startedAt?: number;
}

/** What the model records at an unasked-for death. */
export interface KernelDeathFacts {
  /** `autorestarting`: the server restarts it; `dead`: it stays dead. */
  status: 'autorestarting' | 'dead';
  /** When the frontend saw it die (Unix seconds, this browser's clock). */
  time: number;
  /** The dead kernel's last sample; null if none arrived. */
  lastSample: SampleMessage | null;
  /** Seconds between the last sample and the death (null: unknown). */
  figuresAge: number | null;
  runningCell: RunningCell | null;
  /**
   * The container's OOM kill count as the restarted kernel's helper first
   * reports it (same cgroup limit); null until then, or where not readable.
   */
  oomKillsAfter: number | null;
  /**
   * The machine's OOM kill count (/proc/vmstat) as the restarted kernel's
   * helper first reports it, where that is plausibly the dead kernel's
   * machine (same RAM, same hostname where known, a count not below the
   * last one); null until then, or where unknown.
   */
  machineOomKillsAfter: number | null;
}

/** JupyterLab shows this much of a notification's message. */
export const NOTIFICATION_CHARS = 140;

/**
 * `oom-killed`: the container's count says the killer took it (a fact);
 * `near-limit`: most likely the out-of-memory killer (memory near the limit,
 * or the machine's count rose); `unknown`: nothing says why.
 */
export type DeathVerdict = 'oom-killed' | 'near-limit' | 'unknown';

/**
 * The explanation of a kernel death, as sentences of several lengths for the
 * places that show it.
 */
export interface KernelDeathExplanation {
  verdict: DeathVerdict;
  /** One sentence: what happened and the likely cause, with figures. */
  summary: string;
  /** The gist in at most NOTIFICATION_CHARS characters, for a notification. */
  short: string;
  /** "Cell [7] was running.", a sentence naming the marked cell, or "" when none is known. */
  cellText: string;
  /** The evidence behind the verdict, one line each (figures, counts). */
  details: string[];
}

/** "running [7]" / "running cell 3f2a…" / "probably running cell 3f2a…": the running cell, for a notification. */
export function runningCellLabel(cell: RunningCell | null): string {
  if (!cell) {
    return '';
  }
  if (cell.executionCount !== null) {
    return `running [${cell.executionCount}]`;
  }
  if (cell.cellId === null) {
    return '';
  }
  return `${cell.confirmed ? '' : 'probably '}running cell ${cell.cellId.slice(0, 8)}`;
}

/** The sentence of the panel that names the running cell ('' when none is known). */
export function runningCellText(cell: RunningCell | null): string {
  if (!cell) {
    return '';
  }
  if (cell.executionCount !== null) {
    return `Cell [${cell.executionCount}] was running.`;
  }
  if (cell.cellId === null) {
    return '';
  }
  return cell.confirmed
    ? 'The cell marked "kernel died" was running.'
    : 'The cell marked "kernel died" was most likely running: the kernel died before it said it had started it.';
}

/** The OOM kills of the dead kernel's container since its last sample; null: unknown. */
export function oomKillsSince(facts: KernelDeathFacts): number | null {
  const before = facts.lastSample?.host.container?.oom_kill_count ?? null;
  if (before === null || facts.oomKillsAfter === null) {
    return null;
  }
  return Math.max(0, facts.oomKillsAfter - before);
}

/**
 * The OOM kills on the dead kernel's machine (/proc/vmstat) between its last
 * sample and the restarted kernel's first; null: unknown (a count missing on
 * either side, or a lower one after, which no machine counts).
 */
export function machineOomKillsSince(facts: KernelDeathFacts): number | null {
  const before = facts.lastSample?.host.oom_kill_count ?? null;
  const after = facts.machineOomKillsAfter;
  if (before === null || after === null || after < before) {
    return null;
  }
  return after - before;
}

/** Where the machine's count is read, as the explanation names it. */
const MACHINE_COUNT = "the machine's /proc/vmstat oom_kill count";

/**
 * Explains a kernel death in words and numbers from the facts the model kept.
 */
export function explainKernelDeath(
  facts: KernelDeathFacts,
  units: ByteUnits = 'binary'
): KernelDeathExplanation {
  const bytes = (n: number | null) => formatBytes(n, units);
  const label = runningCellLabel(facts.runningCell);
  const cellText = runningCellText(facts.runningCell);
  const verb =
    facts.status === 'autorestarting' ? 'died and was restarted' : 'died';
  const sample = facts.lastSample;
  const details: string[] = [];
  const kills = oomKillsSince(facts);
  const container = sample?.host.container ?? null;
  const eventsFile =
    container?.cgroup_version === 1
      ? 'memory.oom_control oom_kill'
      : 'memory.events oom_kill';
  if (kills !== null && kills > 0) {
    details.push(
      `The container's ${eventsFile} count rose from ` +
        `${container?.oom_kill_count} to ${facts.oomKillsAfter}.`
    );
  }
  // The machine's count speaks only where the container's does not: that
  // one counts the kernel's cgroup alone.
  const machineKills = kills === null ? machineOomKillsSince(facts) : null;
  if (machineKills !== null && machineKills > 0) {
    details.push(
      `The machine's /proc/vmstat oom_kill count rose from ${sample?.host.oom_kill_count} ` +
        `to ${facts.machineOomKillsAfter} between the last figures and the restarted kernel's first.`,
      'That count takes in every process the out-of-memory killer kills on the machine, ' +
        'so it may have killed another one.'
    );
  } else if (machineKills === 0) {
    details.push(
      `The machine's /proc/vmstat oom_kill count stayed at ${facts.machineOomKillsAfter} ` +
        "from the last figures to the restarted kernel's first."
    );
  }
  if (!sample) {
    const verdict: DeathVerdict = kills ? 'oom-killed' : 'unknown';
    return {
      verdict,
      short: shortText(verdict, label, eventsFile, null),
      summary: kills
        ? `The kernel ${verb}: the out-of-memory killer killed it (${eventsFile}). ` +
          'No memory figures arrived before it died.'
        : `The kernel ${verb}. No memory figures arrived before it died, ` +
          'so the cause is unknown.',
      cellText,
      details
    };
  }
  const f = hostFigures(sample.host);
  const limitText = f.container
    ? ` (container limit ${bytes(f.limit)})`
    : f.limit !== null
      ? ` (machine RAM ${bytes(f.limit)})`
      : '';
  const ramText =
    f.rss === null
      ? 'its memory could not be read'
      : f.available !== null
        ? `its RAM was ${bytes(f.rss)}, with ${bytes(f.available)} more available${limitText}`
        : `its RAM was ${bytes(f.rss)}${limitText}`;
  const age =
    facts.figuresAge !== null && facts.figuresAge > STALE_FIGURES_S
      ? ` (figures from ${Math.round(facts.figuresAge)} s before)`
      : '';
  details.push(
    `Last figures: kernel RSS ${bytes(f.rss)}, in use ${bytes(f.used)} of ` +
      `${bytes(f.limit)}${f.container ? ' (container limit)' : ''}, ` +
      `available ${bytes(f.available)}.`
  );
  const swap = swapFigures(sample.host);
  if (swap.kernelSwapped !== null && swap.kernelSwapped > 0) {
    details.push(
      `The kernel had ${bytes(swap.kernelSwapped)} in swap besides its RSS.`
    );
  }
  if (swap.limit !== null && swap.limit > 0) {
    details.push(
      `Swap: ${bytes(swap.used)} in use of ${bytes(swap.limit)}` +
        `${swap.container ? " (the container's swap limit)" : " (the machine's swap)"}, ` +
        `${bytes(swap.free)} free.`
    );
  } else if (swap.limit === 0 && f.container) {
    details.push(
      'The kernel could not swap: its memory limit was where it would be killed.'
    );
  }
  const near = f.usedPercent !== null && f.usedPercent >= NEAR_LIMIT_PERCENT;
  // Swap with room left at the last sample is said, not taken as proof
  // (see the module's comment); unknown swap (an older helper) says nothing.
  const swapRoom = swapRoomLeft(swap, 100 - NEAR_LIMIT_PERCENT);
  const swapFull =
    swap.limit !== null && swap.limit > 0 && !swapRoom && swap.free !== null;
  let verdict: DeathVerdict;
  let cause: string;
  if (kills !== null && kills > 0) {
    verdict = 'oom-killed';
    cause = `the out-of-memory killer killed it (${eventsFile})`;
  } else if (facts.status === 'dead') {
    // Gone without a restart: a kernel shut down from another page, culled
    // by the server or deleted there says just this too, and no restarted
    // kernel will tell whether the killer acted.
    verdict = 'unknown';
    cause =
      'a kernel stops this way when it is shut down or culled elsewhere, or dies where the ' +
      'server does not restart it' +
      (near ? '; its memory was near the limit, but ' : ', so ') +
      'the cause is unknown';
  } else if (near && kills === 0) {
    // The evidence says no: the container's killer did not act.
    verdict = 'unknown';
    cause =
      `memory was near the limit, but the container's ${eventsFile} ` +
      'count did not rise, so the cause is unknown';
  } else if (machineKills !== null && machineKills > 0) {
    // The killer acted on this machine between the last figures and the
    // restarted kernel's first: most likely on the kernel, near the limit
    // or not (memory fills between samples), but it may have been another process.
    verdict = 'near-limit';
    cause =
      `most likely the out-of-memory killer, as ${MACHINE_COUNT} rose` +
      (near || f.usedPercent === null
        ? ''
        : ', though memory was not near the limit at the last sample');
  } else if (machineKills === 0) {
    // The evidence says no: the killer killed nothing on this machine meanwhile.
    verdict = 'unknown';
    cause =
      (near
        ? 'memory was near the limit, but '
        : f.usedPercent === null
          ? ''
          : 'memory was not near the limit, and ') +
      `${MACHINE_COUNT} did not rise, so the out-of-memory killer did not kill it and the cause is unknown`;
  } else if (near) {
    verdict = 'near-limit';
    cause =
      'most likely the out-of-memory killer' +
      (swapFull
        ? ' (its swap was nearly full too)'
        : swapRoom
          ? `, though swap still had ${bytes(swap.free)} free at the last sample`
          : '');
  } else {
    verdict = 'unknown';
    cause =
      f.usedPercent === null
        ? 'the cause is unknown'
        : 'memory was not near the limit, so the cause is unknown';
  }
  // The same "available" as the last figures' (not the RSS plus it, which read as a second one).
  const figures =
    f.rss !== null && f.available !== null
      ? `RAM ${bytes(f.rss)} (${bytes(f.available)} more available)`
      : null;
  return {
    verdict,
    short: shortText(verdict, label, eventsFile, figures),
    summary: `The kernel ${verb} while ${ramText}${age}: ${cause}.`,
    cellText,
    details
  };
}

function shortText(
  verdict: DeathVerdict,
  cellLabel: string,
  eventsFile: string,
  figures: string | null
): string {
  const who = cellLabel ? `The kernel (${cellLabel})` : 'The kernel';
  const at = figures ? ` at ${figures}` : '';
  let text: string;
  switch (verdict) {
    case 'oom-killed':
      text = `${who} was killed by the out-of-memory killer (${eventsFile})${at}.`;
      break;
    case 'near-limit':
      text = `${who} died${at}: most likely the out-of-memory killer.`;
      break;
    default:
      text = `${who} died${at}; the cause is unknown.`;
  }
  return text.length <= NOTIFICATION_CHARS
    ? text
    : text.slice(0, NOTIFICATION_CHARS - 1) + '\u2026';
}
