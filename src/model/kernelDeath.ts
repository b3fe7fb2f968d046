/**
 * Why did the kernel die? This module says, in words and numbers, what the
 * last figures before a death that nobody asked for (status
 * `autorestarting` or `dead`) suggest, and what the kernel left behind as
 * evidence: its cgroup's OOM kill count, or else the machine's, as read by
 * the restarted kernel's helper. It is pure: the model records the facts,
 * this module words them, and views only render.
 *
 * It never guesses beyond the evidence. A container's count that rose is
 * stated as fact, because it counts the kernel's cgroup alone. A machine's
 * count that rose is called "most likely" the out-of-memory killer, whether
 * memory was near the limit or not, because memory can fill between two
 * samples a second apart, but the killer may have taken another process. A
 * count that did not rise clears the killer, even near the limit, and the
 * cause is then unknown. Without a count, memory near the limit is called
 * "most likely" the out-of-memory killer. If swap still had room at the
 * last sample, that is said beside it: past the limit, pages go to swap and
 * the killer acts once that is full too, but a zram swap is RAM itself and
 * the last sample can be a second old, so room there does not clear the
 * killer. Anything else is an unknown cause.
 */
import { ByteUnits, formatBytes } from '../text/format';
import { SampleMessage } from '../protocol/sample';
import { deathProcessLines } from './deathProcesses';
import { hostFigures } from './hostFigures';
import { swapFigures, swapRoomLeft } from './swapFigures';
import { trans } from '../text/translation';

/** Memory in use at or above this share of the limit counts as "near the limit". */
export const NEAR_LIMIT_PERCENT = 90;

/** Figures older than this at the death are said to be old. */
export const STALE_FIGURES_S = 5;

/** The cell the kernel was running when it died. */
export interface RunningCell {
  /** The notebook cell's id from the execute request, when known. */
  cellId: string | null;
  /**
   * The execution count that the kernel gave it in execute_input, when known.
   */
  executionCount: number | null;
  /**
   * Whether the kernel said, with execute_input, that it started the cell.
   * A kernel that dies at once (`os._exit`, a segfault) may not get that
   * message out; then the oldest request it had not answered is named as the
   * most likely one.
   */
  confirmed: boolean;
  /**
   * When the cell started, in Unix seconds on this browser's clock: when the
   * kernel said so, or else when the request was sent. It is absent when
   * unknown.
   */
  startedAt?: number;
}

/** What the model records at a death that nobody asked for. */
export interface KernelDeathFacts {
  /**
   * `autorestarting` when the server restarts the kernel, `dead` when it stays
   * dead.
   */
  status: 'autorestarting' | 'dead';
  /**
   * When the frontend saw the kernel die, in Unix seconds on this browser's
   * clock.
   */
  time: number;
  /** The dead kernel's last sample, or null if none arrived. */
  lastSample: SampleMessage | null;
  /**
   * The seconds between the last sample and the death, or null when unknown.
   */
  figuresAge: number | null;
  runningCell: RunningCell | null;
  /**
   * The container's OOM kill count as the restarted kernel's helper first
   * reports it, if the cgroup limit is the same. It is null until then, or
   * where the count is not readable.
   */
  oomKillsAfter: number | null;
  /**
   * The machine's OOM kill count (/proc/vmstat) as the restarted kernel's
   * helper first reports it, where that is plausibly the dead kernel's
   * machine: the same RAM, the same hostname where known, and a count not
   * below the last one. It is null until then, or where unknown.
   */
  machineOomKillsAfter: number | null;
}

/** JupyterLab shows this much of a notification's message. */
export const NOTIFICATION_CHARS = 140;

/**
 * The verdict on a death. `oom-killed` means the container's count shows,
 * as a fact, that the killer took the kernel. `near-limit` means it was most
 * likely the out-of-memory killer, because memory was near the limit or the
 * machine's count rose. `unknown` means nothing says why.
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
  /**
   * A sentence naming the marked cell, such as "Cell [7] was running.", or
   * "" when none is known.
   */
  cellText: string;
  /**
   * The evidence behind the verdict, such as figures and counts, one per line.
   */
  details: string[];
}

/**
 * Names the running cell for a notification, as in "running [7]", "running
 * cell 3f2a…" or "probably running cell 3f2a…".
 */
export function runningCellLabel(cell: RunningCell | null): string {
  if (!cell) {
    return '';
  }
  if (cell.executionCount !== null) {
    return trans.__('running [%1]', cell.executionCount);
  }
  if (cell.cellId === null) {
    return '';
  }
  return cell.confirmed
    ? trans.__('running cell %1', cell.cellId.slice(0, 8))
    : trans.__('probably running cell %1', cell.cellId.slice(0, 8));
}

/**
 * The panel's sentence that names the running cell, or '' when none is known.
 */
export function runningCellText(cell: RunningCell | null): string {
  if (!cell) {
    return '';
  }
  if (cell.executionCount !== null) {
    return trans.__('Cell [%1] was running.', cell.executionCount);
  }
  if (cell.cellId === null) {
    return '';
  }
  return cell.confirmed
    ? trans.__('The cell marked "kernel died" was running.')
    : trans.__(
        'The cell marked "kernel died" was most likely running: the kernel died before it said it had started it.'
      );
}

/**
 * The OOM kills of the dead kernel's container since its last sample, or null
 * when unknown.
 */
export function oomKillsSince(facts: KernelDeathFacts): number | null {
  const before = facts.lastSample?.host.container?.oom_kill_count ?? null;
  if (before === null || facts.oomKillsAfter === null) {
    return null;
  }
  return Math.max(0, facts.oomKillsAfter - before);
}

/**
 * The OOM kills on the dead kernel's machine (/proc/vmstat) between its last
 * sample and the restarted kernel's first. It is null when unknown: when a
 * count is missing on either side, or the later one is lower, which no
 * single machine's count can be.
 */
export function machineOomKillsSince(facts: KernelDeathFacts): number | null {
  const before = facts.lastSample?.host.oom_kill_count ?? null;
  const after = facts.machineOomKillsAfter;
  if (before === null || after === null || after < before) {
    return null;
  }
  return after - before;
}

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
  const restarted = facts.status === 'autorestarting';
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
      trans.__(
        "The container's %1 count rose from %2 to %3.",
        eventsFile,
        container?.oom_kill_count,
        facts.oomKillsAfter
      )
    );
  }
  // The machine's count is used only where the container's is missing,
  // because the container's counts the kernel's cgroup alone.
  const machineKills = kills === null ? machineOomKillsSince(facts) : null;
  if (machineKills !== null && machineKills > 0) {
    details.push(
      trans.__(
        "The machine's /proc/vmstat oom_kill count rose from %1 to %2 between the last figures and the restarted kernel's first.",
        sample?.host.oom_kill_count,
        facts.machineOomKillsAfter
      ),
      trans.__(
        'That count takes in every process the out-of-memory killer kills on the machine, so it may have killed another one.'
      )
    );
  } else if (machineKills === 0) {
    details.push(
      trans.__(
        "The machine's /proc/vmstat oom_kill count stayed at %1 from the last figures to the restarted kernel's first.",
        facts.machineOomKillsAfter
      )
    );
  }
  if (!sample) {
    const verdict: DeathVerdict = kills ? 'oom-killed' : 'unknown';
    let summary: string;
    if (kills) {
      summary = restarted
        ? trans.__(
            'The kernel died and was restarted: the out-of-memory killer killed it (%1). No memory figures arrived before it died.',
            eventsFile
          )
        : trans.__(
            'The kernel died: the out-of-memory killer killed it (%1). No memory figures arrived before it died.',
            eventsFile
          );
    } else {
      summary = restarted
        ? trans.__(
            'The kernel died and was restarted. No memory figures arrived before it died, so the cause is unknown.'
          )
        : trans.__(
            'The kernel died. No memory figures arrived before it died, so the cause is unknown.'
          );
    }
    return {
      verdict,
      short: shortText(verdict, label, eventsFile, null),
      summary,
      cellText,
      details
    };
  }
  const f = hostFigures(sample.host);
  const limitText = f.container
    ? ' ' + trans.__('(container limit %1)', bytes(f.limit))
    : f.limit !== null
      ? ' ' + trans.__('(machine RAM %1)', bytes(f.limit))
      : '';
  const ramText =
    f.rss === null
      ? trans.__('its memory could not be read')
      : f.available !== null
        ? trans.__(
            'its RAM was %1, with %2 more available%3',
            bytes(f.rss),
            bytes(f.available),
            limitText
          )
        : trans.__('its RAM was %1%2', bytes(f.rss), limitText);
  const age =
    facts.figuresAge !== null && facts.figuresAge > STALE_FIGURES_S
      ? ' ' +
        trans.__('(figures from %1 s before)', Math.round(facts.figuresAge))
      : '';
  details.push(
    f.container
      ? trans.__(
          'Last figures: kernel RSS %1, in use %2 of %3 (container limit), available %4.',
          bytes(f.rss),
          bytes(f.used),
          bytes(f.limit),
          bytes(f.available)
        )
      : trans.__(
          'Last figures: kernel RSS %1, in use %2 of %3, available %4.',
          bytes(f.rss),
          bytes(f.used),
          bytes(f.limit),
          bytes(f.available)
        )
  );
  const swap = swapFigures(sample.host);
  if (swap.kernelSwapped !== null && swap.kernelSwapped > 0) {
    details.push(
      trans.__(
        'The kernel had %1 in swap besides its RSS.',
        bytes(swap.kernelSwapped)
      )
    );
  }
  if (swap.limit !== null && swap.limit > 0) {
    details.push(
      swap.container
        ? trans.__(
            "Swap: %1 in use of %2 (the container's swap limit), %3 free.",
            bytes(swap.used),
            bytes(swap.limit),
            bytes(swap.free)
          )
        : trans.__(
            "Swap: %1 in use of %2 (the machine's swap), %3 free.",
            bytes(swap.used),
            bytes(swap.limit),
            bytes(swap.free)
          )
    );
  } else if (swap.limit === 0 && f.container) {
    details.push(
      trans.__(
        'The kernel could not swap: its memory limit was where it would be killed.'
      )
    );
  }
  const near = f.usedPercent !== null && f.usedPercent >= NEAR_LIMIT_PERCENT;
  // Swap with room left at the last sample is mentioned but not taken as
  // proof (see the module's comment). Unknown swap, as from an older helper,
  // adds nothing.
  const swapRoom = swapRoomLeft(swap, 100 - NEAR_LIMIT_PERCENT);
  const swapFull =
    swap.limit !== null && swap.limit > 0 && !swapRoom && swap.free !== null;
  let verdict: DeathVerdict;
  let cause: string;
  if (kills !== null && kills > 0) {
    verdict = 'oom-killed';
    cause = trans.__('the out-of-memory killer killed it (%1)', eventsFile);
  } else if (facts.status === 'dead') {
    // The kernel is gone without a restart. A kernel shut down from another
    // page, culled by the server or deleted there looks just the same, and
    // no restarted kernel will tell whether the killer acted.
    verdict = 'unknown';
    cause = near
      ? trans.__(
          'a kernel stops this way when it is shut down or culled elsewhere, or dies where the server does not restart it; its memory was near the limit, but the cause is unknown'
        )
      : trans.__(
          'a kernel stops this way when it is shut down or culled elsewhere, or dies where the server does not restart it, so the cause is unknown'
        );
  } else if (near && kills === 0) {
    // The evidence says that the container's killer did not act.
    verdict = 'unknown';
    cause = trans.__(
      "memory was near the limit, but the container's %1 count did not rise, so the cause is unknown",
      eventsFile
    );
  } else if (machineKills !== null && machineKills > 0) {
    // The killer acted on this machine between the last figures and the
    // restarted kernel's first. It most likely took the kernel, near the
    // limit or not, because memory fills between samples; but it may have
    // taken another process.
    verdict = 'near-limit';
    cause =
      near || f.usedPercent === null
        ? trans.__(
            "most likely the out-of-memory killer, as the machine's /proc/vmstat oom_kill count rose"
          )
        : trans.__(
            "most likely the out-of-memory killer, as the machine's /proc/vmstat oom_kill count rose, though memory was not near the limit at the last sample"
          );
  } else if (machineKills === 0) {
    // The evidence says that the killer killed nothing on this machine in
    // the meantime.
    verdict = 'unknown';
    cause = near
      ? trans.__(
          "memory was near the limit, but the machine's /proc/vmstat oom_kill count did not rise, so the out-of-memory killer did not kill it and the cause is unknown"
        )
      : f.usedPercent === null
        ? trans.__(
            "the machine's /proc/vmstat oom_kill count did not rise, so the out-of-memory killer did not kill it and the cause is unknown"
          )
        : trans.__(
            "memory was not near the limit, and the machine's /proc/vmstat oom_kill count did not rise, so the out-of-memory killer did not kill it and the cause is unknown"
          );
  } else if (near) {
    verdict = 'near-limit';
    cause = swapFull
      ? trans.__(
          'most likely the out-of-memory killer (its swap was nearly full too)'
        )
      : swapRoom
        ? trans.__(
            'most likely the out-of-memory killer, though swap still had %1 free at the last sample',
            bytes(swap.free)
          )
        : trans.__('most likely the out-of-memory killer');
  } else {
    verdict = 'unknown';
    cause =
      f.usedPercent === null
        ? trans.__('the cause is unknown')
        : trans.__('memory was not near the limit, so the cause is unknown');
  }
  details.push(
    ...deathProcessLines(
      sample,
      kills !== null && kills > 0 ? kills : machineKills,
      verdict !== 'unknown',
      units
    )
  );

  // This uses the same "available" as the last figures, not the RSS plus
  // it, which would read as a second, different figure.
  const figures =
    f.rss !== null && f.available !== null
      ? trans.__('RAM %1 (%2 more available)', bytes(f.rss), bytes(f.available))
      : null;
  return {
    verdict,
    short: shortText(verdict, label, eventsFile, figures),
    summary: restarted
      ? trans.__(
          'The kernel died and was restarted while %1%2: %3.',
          ramText,
          age,
          cause
        )
      : trans.__('The kernel died while %1%2: %3.', ramText, age, cause),
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
  const who = cellLabel
    ? trans.__('The kernel (%1)', cellLabel)
    : trans.__('The kernel');
  const at = figures ? ' ' + trans.__('at %1', figures) : '';
  let text: string;
  switch (verdict) {
    case 'oom-killed':
      text = trans.__(
        '%1 was killed by the out-of-memory killer (%2)%3.',
        who,
        eventsFile,
        at
      );
      break;
    case 'near-limit':
      text = trans.__(
        '%1 died%2: most likely the out-of-memory killer.',
        who,
        at
      );
      break;
    default:
      text = trans.__('%1 died%2; the cause is unknown.', who, at);
  }
  return text.length <= NOTIFICATION_CHARS
    ? text
    : text.slice(0, NOTIFICATION_CHARS - 1) + '\u2026';
}
