/**
 * Takes the cell sessions that an earlier page saved in the browser
 * (CellHistoryPersistence) into a CellHistory. It loads when the first saved
 * history is read, not at start-up.
 *
 * Saved sessions that the history does not hold go before its own sessions,
 * and a saved session of a series that the history holds is merged with it,
 * floor included. Every session is then numbered again in order. When
 * nothing has been seen live yet, the newest saved session becomes the
 * current one, so that the kernel's own `history` reply for the same series
 * does not duplicate it. A saved series whose records were all cleared gets
 * a session only when it becomes that current one; otherwise its floor is
 * kept aside, in case its kernel is followed again later.
 */
import {
  CellHistory,
  RestoredCellSession,
  SavedCellSession
} from '../model/CellHistory';

/**
 * Puts the saved cell records of earlier kernel sessions back into a cell
 * history.
 */
export function restoreCellSessions(
  history: CellHistory,
  saved: readonly SavedCellSession[]
): void {
  if (!saved.length) {
    return;
  }
  const sessions: RestoredCellSession[] = [];
  const byIdentity = new Map<string, RestoredCellSession>();
  const sessionOf = (identity: string): RestoredCellSession => {
    let session = byIdentity.get(identity);
    if (!session) {
      session = { identity, floor: 0, records: new Map() };
      byIdentity.set(identity, session);
      sessions.push(session);
    }
    return session;
  };
  // Session 0 holds records taken in before any session started, which
  // happens in tests.
  const firstLive = history.entries.some(e => e.session === 0) ? 0 : 1;
  const live: string[] = [];
  for (let s = firstLive; s <= history.lastSession; s++) {
    live.push(history.identityOf(s) ?? '');
  }
  const aside = new Map<string, { floor: number; maxIdSeen: number }>();
  saved.forEach((session, i) => {
    if (live.includes(session.identity)) {
      return;
    }
    const holds = session.records.some(r => r.record_id > session.floor);
    if (holds || (!live.length && i === saved.length - 1)) {
      sessionOf(session.identity);
    } else if (session.floor > 0) {
      const maxIdSeen = Math.max(
        session.floor,
        ...session.records.map(r => r.record_id)
      );
      aside.set(session.identity, { floor: session.floor, maxIdSeen });
    }
  });
  // The live sessions follow, in order.
  for (const identity of live) {
    sessionOf(identity);
  }
  for (const entry of history.entries) {
    byIdentity
      .get(history.identityOf(entry.session) ?? '')!
      .records.set(entry.record.record_id, entry.record);
  }
  for (const session of saved) {
    const held = byIdentity.get(session.identity);
    if (!held) {
      continue;
    }
    held.floor = Math.max(held.floor, session.floor);
    for (const record of session.records) {
      if (!held.records.has(record.record_id)) {
        held.records.set(record.record_id, record);
      }
    }
  }
  // What this page cleared or evicted from every series it holds stays out.
  // This matters for a clear made while the setting to keep the history was
  // off, which the saved floors do not know of.
  for (const { identity, floor } of history.floors()) {
    const held = byIdentity.get(identity);
    if (held) {
      held.floor = Math.max(held.floor, floor);
    }
  }
  const currentIdentity = live.length
    ? (history.identityOf(history.session) ?? '')
    : null;
  const current =
    currentIdentity !== null
      ? byIdentity.get(currentIdentity)
      : sessions[sessions.length - 1];
  history.rebuild(sessions, current, aside);
}
