// What the leader still has to publish, bounded so a long bus outage cannot exhaust memory, and shaped so
// that nothing the functions need is lost:
// - the latest Heartbeat Digest only (its parts): a digest is a full snapshot, so a newer one makes an
//   unsent older one worthless;
// - every pending Node Changed and Pod Changed, coalesced per object (kind, name, uid): two changes of
//   one object while the bus is down become one event with the latest state and the right type. So the
//   queue is bounded by the number of objects; `maxChanges` is a guard above that, and reaching it
//   drops the oldest change, reported to the caller (a metric and a loud log), never silently.
// - in a second lane, what a new leader republishes (its current view, relay.ts): the publisher paces
//   that lane, so a hand-over at 5,000 nodes is not a burst of Lambda invocations ahead of the digests.
//   An object is pending in one lane at most: a live change of an object waiting in the republish lane
//   takes it over (coalesced, so the newest state goes, unpaced), and a republish of an object with a
//   live change pending merges into that change.
// Taken items are "in flight": the caller gives back the ones that failed, and a give-back never
// overwrites a newer change or revives a superseded digest.
import type { EpochMillis } from '../shared/domain/types.js';
import {
  HeartbeatDigestDetailType,
  NodeChangedDetailType,
  PodChangedDetailType,
  type HeartbeatDigest,
  type NodeChanged,
  type OutgoingEvent,
  type PodChanged,
} from '../shared/events.js';

export type ChangeEvent =
  | { readonly detailType: typeof NodeChangedDetailType; readonly detail: NodeChanged }
  | { readonly detailType: typeof PodChangedDetailType; readonly detail: PodChanged };

export interface QueuedChange {
  readonly kind: 'change';
  readonly key: string;
  readonly event: ChangeEvent;
  /** When the relay observed the change (relay clock): the start of its publish lag. */
  readonly observedAt: EpochMillis;
  /** From a new leader's republish (the paced lane), not from a change observed while leading. */
  readonly republished?: true;
}

export interface QueuedDigestPart {
  readonly kind: 'digest';
  /** Which setDigest call it came from: a give-back of an older generation is dropped. */
  readonly generation: number;
  readonly event: { readonly detailType: typeof HeartbeatDigestDetailType; readonly detail: HeartbeatDigest };
  readonly observedAt: EpochMillis;
}

export type QueuedItem = QueuedChange | QueuedDigestPart;

/** The object a change is about: a node or pod re-created with the same name is another object. */
export function changeKey(event: ChangeEvent): string {
  return event.detailType === NodeChangedDetailType
    ? `node/${event.detail.node.name}/${event.detail.node.uid}`
    : `pod/${event.detail.pod.namespace}/${event.detail.pod.name}/${event.detail.pod.uid}`;
}

/**
 * One event saying what `older` then `newer` (changes of the same object) say together: the latest
 * state; DELETED if it was deleted; ADDED if the consumers never heard of it before; for a pod moved
 * twice, the node it was on when the consumers last heard of it. An update's "before" fields (a node's
 * old NoExecute taints; a pod's old tolerations, Ready and deletionTimestamp) are the older event's:
 * the state before both, which is what the consumers last heard (the newer event's would hide a change
 * the older one carried, e.g. tolerations changed and then the pod marked NotReady).
 */
export function coalesceChanges(older: ChangeEvent, newer: ChangeEvent): ChangeEvent {
  const type =
    newer.detail.type === 'DELETED' ? 'DELETED' : older.detail.type === 'ADDED' ? 'ADDED' : newer.detail.type;
  if (newer.detailType === NodeChangedDetailType) {
    const { oldNoExecuteTaints: _newerOld, ...rest } = newer.detail;
    const before = older.detailType === NodeChangedDetailType ? older.detail.oldNoExecuteTaints : undefined;
    return {
      detailType: NodeChangedDetailType,
      detail: {
        ...rest,
        type,
        ...(type === 'MODIFIED' && before !== undefined && { oldNoExecuteTaints: before }),
      },
    };
  }
  const olderPod = older.detailType === PodChangedDetailType ? older.detail : undefined;
  const oldNodeName = type === 'ADDED' ? undefined : (olderPod?.oldNodeName ?? newer.detail.oldNodeName);
  const {
    oldNodeName: _dropped,
    oldTolerations: _tolerations,
    oldReady: _ready,
    oldDeletionTimestamp: _deletion,
    nodeReady: _nodeReady,
    ...rest
  } = newer.detail;
  // The node's Ready when the pod lost its own: that loss is the older change's if it carries one.
  const nodeReady = olderPod?.nodeReady ?? newer.detail.nodeReady;
  const before = type === 'MODIFIED' ? olderPod : undefined;
  return {
    detailType: PodChangedDetailType,
    detail: {
      ...rest,
      type,
      ...(oldNodeName !== undefined && oldNodeName !== newer.detail.pod.nodeName && { oldNodeName }),
      ...(before?.oldTolerations !== undefined && { oldTolerations: before.oldTolerations }),
      ...(before?.oldReady !== undefined && { oldReady: before.oldReady }),
      ...(before?.oldDeletionTimestamp !== undefined && {
        oldDeletionTimestamp: before.oldDeletionTimestamp,
      }),
      ...(type === 'MODIFIED' && nodeReady !== undefined && { nodeReady }),
    },
  };
}

export interface PublishQueueOptions {
  /** Pending changes kept at most; beyond it the oldest is dropped and reported. */
  readonly maxChanges: number;
}

export class PublishQueue {
  private readonly changes = new Map<string, QueuedChange>();
  /** The republish lane (a new leader's view), published at the pace the publisher allows. */
  private readonly republished = new Map<string, QueuedChange>();
  private digestParts: QueuedDigestPart[] = [];
  private generation = 0;

  constructor(private readonly options: PublishQueueOptions) {}

  /**
   * Queues a change, merged with a pending one for the same object (in either lane: the merged change
   * is live). Returns the change dropped to keep within maxChanges, if any.
   */
  addChange(event: ChangeEvent, observedAt: EpochMillis): QueuedChange | undefined {
    const key = changeKey(event);
    const pending = this.changes.get(key) ?? this.republished.get(key);
    if (pending !== undefined) {
      // The merged change goes to the back.
      this.changes.delete(key);
      this.republished.delete(key);
    }
    this.changes.set(key, {
      kind: 'change',
      key,
      event: pending === undefined ? event : coalesceChanges(pending.event, event),
      observedAt: pending?.observedAt ?? observedAt,
    });
    return this.dropOverCap();
  }

  /**
   * Queues a republished event (the paced lane). An object with a live change pending gets this newer
   * state in that change, in place; one already in the lane is replaced in place. Returns the change
   * dropped to keep within maxChanges, if any.
   */
  addRepublished(event: ChangeEvent, observedAt: EpochMillis): QueuedChange | undefined {
    const key = changeKey(event);
    const live = this.changes.get(key);
    if (live !== undefined) {
      this.changes.set(key, { ...live, event: coalesceChanges(live.event, event) });
      return undefined;
    }
    const pending = this.republished.get(key);
    this.republished.set(key, {
      kind: 'change',
      key,
      event: pending === undefined ? event : coalesceChanges(pending.event, event),
      observedAt: pending?.observedAt ?? observedAt,
      republished: true,
    });
    return this.dropOverCap();
  }

  /** Replaces any unsent digest by this one (its parts). Returns how many unsent parts it superseded. */
  setDigest(parts: readonly HeartbeatDigest[], observedAt: EpochMillis): number {
    const superseded = this.digestParts.length;
    this.generation++;
    this.digestParts = parts.map((detail) => ({
      kind: 'digest',
      generation: this.generation,
      event: { detailType: HeartbeatDigestDetailType, detail },
      observedAt,
    }));
    return superseded;
  }

  /**
   * Takes the digest parts, up to `maxChanges` changes, oldest first, and with what room is left, up to
   * `maxRepublished` republished events, out of the queue.
   */
  take(maxChanges: number, maxRepublished = 0): QueuedItem[] {
    const items: QueuedItem[] = this.digestParts;
    this.digestParts = [];
    let taken = 0;
    for (const [key, change] of this.changes) {
      if (taken >= maxChanges) break;
      items.push(change);
      this.changes.delete(key);
      taken++;
    }
    let republished = 0;
    for (const [key, change] of this.republished) {
      if (taken >= maxChanges || republished >= maxRepublished) break;
      items.push(change);
      this.republished.delete(key);
      taken++;
      republished++;
    }
    return items;
  }

  /**
   * Puts back an item whose publishing failed. A change merges under a newer pending change of the same
   * object (in either lane, keeping that one's lane); a digest part comes back only if no newer digest
   * was set meanwhile. Returns false when the item was superseded (nothing to resend), or when it had
   * to be dropped to stay within maxChanges (then `dropped` receives it).
   */
  giveBack(item: QueuedItem, dropped?: (change: QueuedChange) => void): boolean {
    if (item.kind === 'digest') {
      if (item.generation !== this.generation) return false;
      this.digestParts.push(item);
      this.digestParts.sort((a, b) => a.event.detail.part.index - b.event.detail.part.index);
      return true;
    }
    for (const lane of [this.changes, this.republished]) {
      const pending = lane.get(item.key);
      if (pending === undefined) continue;
      // A newer change arrived while this one was in flight: one event says both, in its place.
      lane.set(item.key, {
        ...pending,
        event: coalesceChanges(item.event, pending.event),
        observedAt: item.observedAt,
      });
      return true;
    }
    const lane = item.republished === true ? this.republished : this.changes;
    lane.set(item.key, item);
    if (this.pendingChanges > this.options.maxChanges) {
      lane.delete(item.key);
      dropped?.(item);
      return false;
    }
    return true;
  }

  /** Forgets everything (leadership lost: the next leader publishes from its own view). */
  clear(): void {
    this.changes.clear();
    this.republished.clear();
    this.digestParts = [];
    this.generation++;
  }

  /** Pending changes, both lanes. */
  get pendingChanges(): number {
    return this.changes.size + this.republished.size;
  }

  /** Pending changes of the republish lane. */
  get pendingRepublished(): number {
    return this.republished.size;
  }

  get pendingDigestParts(): number {
    return this.digestParts.length;
  }

  get size(): number {
    return this.pendingChanges + this.digestParts.length;
  }

  /** When the oldest pending item was observed, or undefined when the queue is empty. */
  oldestObservedAt(): EpochMillis | undefined {
    let oldest: EpochMillis | undefined;
    for (const items of [this.digestParts, this.changes.values(), this.republished.values()]) {
      for (const item of items) oldest = Math.min(oldest ?? item.observedAt, item.observedAt);
    }
    return oldest;
  }

  /** Over the cap: drops the oldest pending change of either lane (by when it was observed). */
  private dropOverCap(): QueuedChange | undefined {
    if (this.pendingChanges <= this.options.maxChanges) return undefined;
    const live = this.changes.values().next().value;
    const republished = this.republished.values().next().value;
    const oldest =
      live === undefined || (republished !== undefined && republished.observedAt < live.observedAt)
        ? republished
        : live;
    if (oldest === undefined) return undefined;
    (oldest.republished === true ? this.republished : this.changes).delete(oldest.key);
    return oldest;
  }
}

/** The events of queued items, in order, for EventSink.publish. */
export function eventsOf(items: readonly QueuedItem[]): OutgoingEvent[] {
  return items.map((item) => item.event);
}
