/**
 * The readers of everything the kernel's helper sends on its own (hello,
 * samples with their GPU, load and process sections, cell records with
 * their out-of-memory diagnoses, the recovered history and timeline, and
 * the records this browser kept): the
 * lazily loaded half of messageReaders.ts, a chunk of its own that a page
 * without a kernel never fetches.
 */
export { parseKernelMessage } from './messages';
export { parseCellRecord, parseHistoryResult } from './cell';
export { parseTimeline } from './timeline';
