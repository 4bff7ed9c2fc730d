// The core/v1 Event client-go's EventRecorder would create for a KubeEvent (kubeEvents.ts): port of
// makeEvent and recordToSink's create path (k8s.io/client-go/tools/record/event.go).
// What differs: no aggregation or spam filtering (the recorder's EventCorrelator): every Event is created
// with count 1. A monitor pass records each upstream event once, so correlation has little to merge, and
// Events are best effort in both implementations.
import type { KubeEvent } from '../../domain/kubeEvents.js';
import type { EpochMillis } from '../../domain/types.js';

/** metav1.NamespaceDefault: where Events about cluster-scoped objects (Nodes) go. */
export const EventNamespaceDefault = 'default';

/** core/v1 Event, the fields client-go's recorder sets (times as Date, as the client's model has them). */
export interface EventBody {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: { apiVersion: 'v1'; kind: string; name: string; namespace?: string; uid?: string };
  reason: string;
  message: string;
  type: string;
  source: { component: string };
  reportingComponent: string;
  firstTimestamp: Date;
  lastTimestamp: Date;
  count: number;
}

/**
 * The Event object. Its name is `<object>.<hex nanoseconds>` as client-go's
 * `fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`; our clock has milliseconds, so the sub-millisecond
 * digits come from `nanos` (random), which keeps names unique when one object gets several Events in a
 * millisecond.
 *
 * @example
 * makeEvent(registeredNodeEvent({ name: 'node-a', uid: 'u1' }), now, 42).metadata?.name; // 'node-a.1871f…'
 */
export function makeEvent(event: KubeEvent, now: EpochMillis, nanos: number): EventBody {
  const { involvedObject } = event;
  const namespace = involvedObject.namespace ?? EventNamespaceDefault;
  const ref: EventBody['involvedObject'] = {
    apiVersion: 'v1',
    kind: involvedObject.kind,
    name: involvedObject.name,
  };
  if (involvedObject.namespace !== undefined) ref.namespace = involvedObject.namespace;
  if (involvedObject.uid !== undefined) ref.uid = involvedObject.uid;
  const unixNano = BigInt(Math.floor(now)) * 1_000_000n + BigInt(Math.floor(nanos) % 1_000_000);
  // metav1.Time has second precision on the wire.
  const timestamp = new Date(Math.floor(now / 1000) * 1000);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${involvedObject.name}.${unixNano.toString(16)}`, namespace },
    involvedObject: ref,
    reason: event.reason,
    message: event.message,
    type: event.type,
    source: { component: event.source },
    // client-go's recorder sets ReportingController from the source component as well.
    reportingComponent: event.source,
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    count: 1,
  };
}
