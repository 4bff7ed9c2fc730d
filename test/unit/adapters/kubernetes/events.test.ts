import { describe, expect, it } from 'vitest';
import { makeEvent } from '../../../../shared/adapters/kubernetes/events.js';
import {
  podNodeNotReadyEvent,
  registeredNodeEvent,
  taintManagerEvictionEvent,
} from '../../../../shared/domain/kubeEvents.js';

const now = Date.parse('2024-05-01T10:00:00.123Z');

describe('makeEvent (client-go record makeEvent)', () => {
  it('puts Node events in the default namespace, with the node UID and upstream fields', () => {
    const event = makeEvent(registeredNodeEvent({ name: 'node-a', uid: 'u-1' }), now, 456);
    expect(event).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `node-a.${(BigInt(now) * 1_000_000n + 456n).toString(16)}`, namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'u-1' },
      reason: 'RegisteredNode',
      message: 'Node node-a event: Registered Node node-a in Controller',
      type: 'Normal',
      source: { component: 'node-controller' },
      reportingComponent: 'node-controller',
      firstTimestamp: new Date('2024-05-01T10:00:00Z'),
      lastTimestamp: new Date('2024-05-01T10:00:00Z'),
      count: 1,
    });
  });

  it("puts Pod events in the pod's namespace; a taint-eviction ref has no UID", () => {
    const warning = makeEvent(podNodeNotReadyEvent({ namespace: 'ns', name: 'p', uid: 'pu' }), now, 0);
    expect(warning.metadata.namespace).toBe('ns');
    expect(warning.involvedObject).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      name: 'p',
      namespace: 'ns',
      uid: 'pu',
    });
    expect(warning.type).toBe('Warning');
    const eviction = makeEvent(taintManagerEvictionEvent({ namespace: 'ns', name: 'p' }), now, 0);
    expect(eviction.involvedObject).toEqual({ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'ns' });
    expect(eviction.source).toEqual({ component: 'taint-eviction-controller' });
  });

  it('gives distinct names to events on one object within a millisecond', () => {
    const names = new Set(
      [1, 2, 3].map((n) => makeEvent(registeredNodeEvent({ name: 'n', uid: '' }), now, n).metadata.name),
    );
    expect(names.size).toBe(3);
    for (const name of names) expect(name).toMatch(/^n\.[0-9a-f]+$/);
  });
});
