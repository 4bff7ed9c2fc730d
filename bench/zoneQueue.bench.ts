// One monitor pass's queue work in a zone whose 1,000 nodes are Unknown and not tainted yet (as zone a
// in bench/simulateRun.ts): markNodeForTainting runs Remove then Add for each of them. Compared with
// the same calls on the plain queue functions, which copy the queue and the set arrays per call.
// Run: npm run bench (reports ops/s, one op = one pass; never asserted).
import { bench, describe } from 'vitest';
import {
  type ControllerState,
  emptyControllerState,
  freeze,
  workingCopy,
} from '../shared/domain/controllerState.js';
import {
  add,
  newRateLimitedTimedQueue,
  type RateLimitedTimedQueue,
  remove,
} from '../shared/domain/rateLimitedTimedQueue.js';
import { markNodeForTainting } from '../shared/domain/taintBasedEviction.js';
import { newTokenBucketRateLimiter } from '../shared/domain/tokenBucket.js';
import type { Node } from '../shared/domain/types.js';
import { getZoneKey } from '../shared/domain/zones.js';

const start = Date.parse('2026-01-01T00:00:00Z');
const size = 1_000;
const labels = { 'topology.kubernetes.io/region': 'region-1', 'topology.kubernetes.io/zone': 'zone-a' };
const zone = getZoneKey(labels);

const nodes: Node[] = Array.from({ length: size }, (_, i) => ({
  name: `a-${i}`,
  uid: `uid-${i}`,
  creationTimestamp: start - 86_400_000,
  labels,
  taints: [],
  unschedulable: false,
  conditions: [{ type: 'Ready', status: 'Unknown', lastHeartbeatTime: start, lastTransitionTime: start }],
}));

function queuedZone(): RateLimitedTimedQueue {
  let queue = newRateLimitedTimedQueue(newTokenBucketRateLimiter(0.1, 1, start));
  for (const node of nodes) queue = add(queue, node.name, node.uid, start).queue;
  return queue;
}

describe(`one pass of ${size.toLocaleString('en')} Remove+Add in one zone`, () => {
  let state: ControllerState = { ...emptyControllerState(), zoneQueues: new Map([[zone, queuedZone()]]) };
  let passAt = start;
  bench('markNodeForTainting on the working copy, then freeze', () => {
    passAt += 5_000;
    const s = workingCopy(state);
    for (const node of nodes) markNodeForTainting(s, node, 'Unknown', passAt);
    state = freeze(s);
  });

  let plain = queuedZone();
  let plainAt = start;
  bench('plain remove and add (a new queue per call)', () => {
    plainAt += 5_000;
    for (const node of nodes) plain = add(remove(plain, node.name).queue, node.name, node.uid, plainAt).queue;
  });
});
