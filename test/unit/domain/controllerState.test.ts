// The working copy: changes made through a zone's WorkingQueue are what every reader of the working
// copy, and the frozen state, sees; the maps a pass rarely changes are copied on their first change only,
// and the state the pass started from never changes.
import { describe, expect, it } from 'vitest';
import {
  type ControllerState,
  emptyControllerState,
  freeze,
  workingCopy,
  workingZoneQueue,
} from '../../../shared/domain/controllerState.js';
import {
  add,
  newRateLimitedTimedQueue,
  type RateLimitedTimedQueue,
} from '../../../shared/domain/rateLimitedTimedQueue.js';
import { fakeNeverRateLimiter } from '../../../shared/domain/tokenBucket.js';

const T0 = Date.parse('2017-01-01T12:00:00Z');

function queueOf(...names: string[]): RateLimitedTimedQueue {
  let q = newRateLimitedTimedQueue(fakeNeverRateLimiter);
  for (const name of names) q = add(q, name, `uid-${name}`, T0).queue;
  return q;
}

function stateWith(queues: Record<string, RateLimitedTimedQueue>): ControllerState {
  return { ...emptyControllerState(), zoneQueues: new Map(Object.entries(queues)) };
}

const values = (q: RateLimitedTimedQueue | undefined): string[] => (q?.queue ?? []).map((v) => v.value);

describe('WorkingZoneQueues', () => {
  it('a read of the zone, an iteration and freeze see the changes made through its WorkingQueue', () => {
    const s = workingCopy(stateWith({ b: queueOf('n1', 'n2'), a: queueOf('m1') }));
    const working = workingZoneQueue(s, 'b');
    working.remove('n1');
    working.add('n1', 'uid-n1', T0 + 5_000);
    expect(values(s.zoneQueues.get('b'))).toEqual(['n2', 'n1']);
    working.add('n3', 'uid-n3', T0 + 5_000);
    expect([...s.zoneQueues].map(([zone, q]) => [zone, values(q)])).toEqual([
      ['b', ['n2', 'n1', 'n3']],
      ['a', ['m1']],
    ]);
    const frozen = freeze(s);
    expect(frozen.zoneQueues).toBeInstanceOf(Map);
    expect([...frozen.zoneQueues.keys()]).toEqual(['b', 'a']);
    expect(frozen.zoneQueues.get('b')?.set).toEqual(['n2', 'n1', 'n3']);
  });

  it('keeps every unchanged queue the same object, as the store compares them by identity', () => {
    const before = stateWith({ a: queueOf('m1'), b: queueOf('n1') });
    const s = workingCopy(before);
    workingZoneQueue(s, 'a').add('m1', 'uid-m1', T0 + 1);
    workingZoneQueue(s, 'b').remove('unknown');
    const frozen = freeze(s);
    expect(frozen.zoneQueues.get('a')).toBe(before.zoneQueues.get('a'));
    expect(frozen.zoneQueues.get('b')).toBe(before.zoneQueues.get('b'));
  });

  it('set replaces the zone queue and its WorkingQueue; later changes start from the new queue', () => {
    const s = workingCopy(stateWith({ a: queueOf('m1') }));
    workingZoneQueue(s, 'a').add('m2', 'uid-m2', T0);
    s.zoneQueues.set('a', queueOf('x'));
    expect(values(s.zoneQueues.get('a'))).toEqual(['x']);
    workingZoneQueue(s, 'a').add('y', 'uid-y', T0);
    expect(values(freeze(s).zoneQueues.get('a'))).toEqual(['x', 'y']);
  });

  it('leaves the state it copied alone', () => {
    const before = stateWith({ a: queueOf('m1') });
    const s = workingCopy(before);
    workingZoneQueue(s, 'a').remove('m1');
    s.zoneQueues.set('new', queueOf('z'));
    freeze(s);
    expect([...before.zoneQueues.keys()]).toEqual(['a']);
    expect(values(before.zoneQueues.get('a'))).toEqual(['m1']);
  });

  it('has a queue only for zones given one', () => {
    const s = workingCopy(stateWith({ a: queueOf() }));
    expect(s.zoneQueues.has('a')).toBe(true);
    expect(s.zoneQueues.has('b')).toBe(false);
    expect(() => workingZoneQueue(s, 'b')).toThrow('invariant: no eviction queue for zone "b"');
  });
});

describe('the registered nodes, retries and eviction statuses of a working copy', () => {
  const before = (): ControllerState => ({
    ...emptyControllerState(),
    knownNodes: new Map([
      ['a', 'uid-a'],
      ['b', 'uid-b'],
    ]),
    nodesToRetry: new Set(['a']),
    nodeEvictionStatus: new Map([['a', 'toBeEvicted' as const]]),
  });

  it('are the very maps of the state while the pass changes none of them', () => {
    const state = before();
    const s = workingCopy(state);
    s.knownNodes.delete('absent');
    s.nodesToRetry.delete('absent');
    s.nodesToRetry.add('a');
    s.nodeEvictionStatus.delete('absent');
    const after = freeze(s);
    expect(after.knownNodes).toBe(state.knownNodes);
    expect(after.nodesToRetry).toBe(state.nodesToRetry);
    expect(after.nodeEvictionStatus).toBe(state.nodeEvictionStatus);
  });

  it('are copies once changed, and the state the pass started from stays as it was', () => {
    const state = before();
    const s = workingCopy(state);
    s.knownNodes.set('c', 'uid-c');
    s.knownNodes.delete('a');
    s.nodesToRetry.delete('a');
    s.nodesToRetry.add('b');
    s.nodeEvictionStatus.set('b', 'evicted');
    expect(s.knownNodes.get('c')).toBe('uid-c');
    expect(s.knownNodes.has('a')).toBe(false);
    expect(s.knownNodes.size).toBe(2);
    const after = freeze(s);
    expect([...after.knownNodes]).toEqual([
      ['b', 'uid-b'],
      ['c', 'uid-c'],
    ]);
    expect([...after.nodesToRetry]).toEqual(['b']);
    expect([...after.nodeEvictionStatus]).toEqual([
      ['a', 'toBeEvicted'],
      ['b', 'evicted'],
    ]);
    expect(state).toEqual(before());
  });
});
