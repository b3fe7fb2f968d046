/**
 * The worker deaths, pauses and out-of-memory errors of the clusters, as a
 * list kept by event id, newest first: a sentence per kind, the worker's
 * last figures before it, and the engine's own words. The items are keyed,
 * so a message that repeats the same events touches nothing.
 *
 * The engine's words and the worker's id are kernel text: text only.
 */
import type { ByteUnits } from '../../text/format';
import { trans } from '../../text/translation';
import {
  element,
  setData,
  setHidden,
  setText,
  syncKeyedChildren
} from '../../ui/dom';
import type { KeptClusterEvent } from './ClusterTracker';
import { ageText, eventSentence, lastFiguresText } from './clusterText';

/** One event's item. */
class EventItem {
  constructor() {
    this.node = element('li', 'jp-vram-ClusterEvent', {
      role: 'cluster-event'
    });
    this._sentence = element('div', 'jp-vram-ClusterEvent-sentence');
    this._last = element('div', 'jp-vram-ClusterEvent-last', {
      role: 'cluster-event-last'
    });
    this._words = element('div', 'jp-vram-ClusterEvent-words', {
      role: 'cluster-event-words'
    });
    this.node.append(this._sentence, this._last, this._words);
  }

  readonly node: HTMLElement;

  show(kept: KeptClusterEvent, now: number | null, units: ByteUnits): void {
    const e = kept.event;
    setData(this.node, 'vramEventKind', e.kind);
    setData(this.node, 'vramEventKey', kept.key);
    const when = now === null ? '' : trans.__('%1 ago', ageText(now - e.time));
    setText(
      this._sentence,
      when ? `${eventSentence(e)} (${when})` : eventSentence(e)
    );
    const last = lastFiguresText(e.last, e.time, units);
    setText(this._last, last ? trans.__('Its last figures: %1.', last) : '');
    setHidden(this._last, !last);
    setText(
      this._words,
      e.engine_message ? trans.__('The engine said: %1', e.engine_message) : ''
    );
    setHidden(this._words, !e.engine_message);
  }

  private _sentence: HTMLElement;
  private _last: HTMLElement;
  private _words: HTMLElement;
}

/** The events' list, with its heading. */
export class ClusterEvents {
  constructor() {
    this.node = element('div', 'jp-vram-ClusterEvents', {
      role: 'cluster-events'
    });
    const heading = element('h4', 'jp-vram-ClusterEvents-heading', {
      text: trans.__('Worker events')
    });
    this._list = element('ul', 'jp-vram-ClusterEvents-list');
    this.node.append(heading, this._list);
  }

  readonly node: HTMLElement;

  /** Shows `events` (newest first); hidden while there is none. */
  show(
    events: readonly KeptClusterEvent[],
    now: number | null,
    units: ByteUnits
  ): void {
    setHidden(this.node, !events.length);
    syncKeyedChildren(
      this._list,
      this._items,
      events,
      e => e.key,
      () => new EventItem(),
      (item, e) => item.show(e, now, units)
    );
  }

  private _list: HTMLElement;
  private _items = new Map<string, EventItem>();
}
