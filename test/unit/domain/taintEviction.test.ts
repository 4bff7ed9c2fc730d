import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideFiredEviction,
  deletePodRetries,
  deletePodRetryInterval,
  disruptionTargetCondition,
  type FiredEviction,
  handleNodeUpdate,
  handlePodUpdate,
  nodeUpdated,
  nodeUpdatedNeedsProcessing,
  podUpdated,
  podUpdatedNeedsProcessing,
  processPodOnNode,
  type PodEvictionAction,
  type PodUpdateItem,
  type ScheduledEviction,
} from '../../../shared/domain/taintEviction.js';
import {
  cancelPodDeletionEvent as cancelEvent,
  type KubeEvent,
  taintManagerEvictionEvent,
} from '../../../shared/domain/kubeEvents.js';
import { parsePodKey } from '../../../shared/domain/types.js';

const podDeletionEvent = (key: string): KubeEvent => taintManagerEvictionEvent(parsePodKey(key));
const cancelPodDeletionEvent = (key: string): KubeEvent => cancelEvent(parsePodKey(key));
import {
  addWork,
  cancelWork,
  completeWork,
  createWorkerQueue,
  dueWork,
  getWorkerUnsafe,
  startFiring,
  type TimedWorkerQueue,
} from '../../../shared/domain/timedWorkerQueue.js';
import {
  podKey,
  type EpochMillis,
  type Node,
  type Pod,
  type PodKey,
  type Taint,
  type Toleration,
} from '../../../shared/domain/types.js';

const second = 1000;
const fakeNow: EpochMillis = Date.parse('2017-01-01T12:00:00Z');
/** verifyPodActions polls every 10ms for up to 5s. */
const pollWindow = 5 * second;

// --- upstream test helpers (testutil.NewPod / NewNode, createNoExecuteTaint, addToleration, addTaintsToNode)

function newPod(name: string, nodeName: string): Pod {
  return { namespace: 'default', name, uid: `uid-${name}`, nodeName, tolerations: [], ready: 'True' };
}

function newNode(name: string): Node {
  return {
    name,
    uid: `uid-${name}`,
    creationTimestamp: fakeNow,
    labels: {},
    taints: [],
    unschedulable: false,
    conditions: [],
  };
}

function createNoExecuteTaint(index: number, timeAdded: EpochMillis = fakeNow): Taint {
  return { key: `testTaint${index}`, value: `test${index}`, effect: 'NoExecute', timeAdded };
}

/** duration < 0: no tolerationSeconds (forever). */
function addToleration(pod: Pod, index: number, duration: number): Pod {
  const toleration: Toleration = { key: `testTaint${index}`, value: `test${index}`, effect: 'NoExecute' };
  return {
    ...pod,
    tolerations: [duration < 0 ? toleration : { ...toleration, tolerationSeconds: duration }],
  };
}

function addTaintsToNode(node: Node, indices: number[]): Node {
  return { ...node, taints: indices.map((i) => createNoExecuteTaint(i)) };
}

// --- a tiny controller harness in virtual time ---------------------------------------------------
//
// It plays upstream's Controller around the pure decisions: the informer listers, taintedNodes, the
// TimedWorkerQueue, deletePodHandler and the fake clientset. Where upstream polls the fake client with a
// real clock, the harness advances virtual time and fires due timers: "patch + delete" means a scheduled
// deletion fired and found the pod; "no delete" means nothing fired within the upstream poll window.

interface PodApiAction {
  readonly verb: 'patch' | 'delete';
  readonly key: PodKey;
  readonly at: EpochMillis;
}

class Controller {
  now: EpochMillis = fakeNow;
  queue: TimedWorkerQueue = createWorkerQueue();
  readonly taintedNodes = new Map<string, readonly Taint[]>();
  readonly nodeLister = new Map<string, Node>();
  readonly podLister = new Map<PodKey, Pod>();
  /** The fake clientset: getPodsAssignedToNode lists it, the deletion GETs, patches and deletes in it. */
  readonly client = new Map<PodKey, Pod>();
  readonly podsWithDisruptionTarget = new Set<PodKey>();
  podActions: PodApiAction[] = [];
  readonly events: KubeEvent[] = [];
  readonly getAttempts: PodKey[] = [];
  lastActions: PodEvictionAction[] = [];

  constructor(clientPods: readonly Pod[] = [], taintedNodes: Record<string, Taint[]> = {}) {
    for (const pod of clientPods) this.client.set(podKey(pod), pod);
    for (const [name, taints] of Object.entries(taintedNodes)) this.taintedNodes.set(name, taints);
  }

  private readonly lookup = (key: PodKey): ScheduledEviction | undefined => getWorkerUnsafe(this.queue, key);

  /** Upstream reads time.Now() for every handled update and it never repeats: each delivery is 1ms later. */
  private deliver(): void {
    this.advance(1);
  }

  PodUpdated(oldPod: Pod | undefined, newPod: Pod | undefined): void {
    this.deliver();
    const item = podUpdated(oldPod, newPod);
    if (item !== undefined) this.handlePodUpdate(item);
  }

  NodeUpdated(oldNode: Node | undefined, newNode: Node | undefined): void {
    this.deliver();
    const name = nodeUpdated(oldNode, newNode);
    if (name !== undefined) this.handleNodeUpdate(name);
  }

  handlePodUpdate(item: PodUpdateItem): void {
    const pod = this.podLister.get(item.key);
    this.apply(handlePodUpdate(item, pod, this.taintedNodes.get(item.nodeName), this.lookup, this.now));
  }

  handleNodeUpdate(nodeName: string): void {
    const node = this.nodeLister.get(nodeName);
    const pods = [...this.client.values()].filter((p) => p.nodeName === nodeName);
    const outcome = handleNodeUpdate(nodeName, node, pods, this.lookup, this.now);
    // taintedNodes is updated before the pods are listed upstream; the outcome carries both.
    if (outcome.noExecuteTaints === undefined) this.taintedNodes.delete(nodeName);
    else this.taintedNodes.set(nodeName, outcome.noExecuteTaints);
    this.apply(outcome.actions);
  }

  private apply(actions: PodEvictionAction[]): void {
    this.lastActions = actions;
    for (const action of actions) {
      if (action.kind === 'cancel') {
        const { queue, cancelled } = cancelWork(this.queue, action.key);
        this.queue = queue;
        if (cancelled) this.events.push(cancelPodDeletionEvent(action.key));
        continue;
      }
      const added = addWork(this.queue, action.key, action.createdAt, action.fireAt, this.now);
      this.queue = added.queue;
      if (added.kind === 'firing') this.deletePodHandler(action.key, added.entry.token);
    }
  }

  /** Upstream deletePodHandler + addConditionAndDeletePod against the fake clientset. */
  private deletePodHandler(key: PodKey, token: number): void {
    this.events.push(podDeletionEvent(key));
    for (let i = 0; i < deletePodRetries; i++) {
      this.getAttempts.push(key);
      if (!this.client.has(key)) continue; // GET NotFound: retry after 10ms, then give up
      if (!this.podsWithDisruptionTarget.has(key)) {
        this.podsWithDisruptionTarget.add(key);
        this.podActions.push({ verb: 'patch', key, at: this.now });
      }
      this.client.delete(key);
      this.podActions.push({ verb: 'delete', key, at: this.now });
      break;
    }
    this.queue = completeWork(this.queue, key, token);
  }

  /** Moves virtual time forward, running every timer that fires on the way, in order. */
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      const [due] = dueWork(this.queue, target);
      if (due === undefined) break;
      this.now = due.firesAt;
      const { queue, started } = startFiring(this.queue, due.key, due.token);
      this.queue = queue;
      if (started) this.deletePodHandler(due.key, due.token);
    }
    this.now = target;
  }

  advanceTo(t: EpochMillis): void {
    this.advance(Math.max(0, t - this.now));
  }

  deletedPods(): PodKey[] {
    return this.podActions.filter((a) => a.verb === 'delete').map((a) => a.key);
  }

  /** Upstream verifyPodActions: any pods patch / any pods delete within the poll window. */
  verifyPodActions(expectPatch: boolean, expectDelete: boolean, windowMs: number = pollWindow): void {
    this.advance(windowMs);
    expect({
      patch: this.podActions.some((a) => a.verb === 'patch'),
      delete: this.podActions.some((a) => a.verb === 'delete'),
    }).toEqual({ patch: expectPatch, delete: expectDelete });
  }
}

// --- upstream tests ------------------------------------------------------------------------------

describe('TestCreatePod', () => {
  it.each<{
    description: string;
    pod: Pod;
    taintedNodes: Record<string, Taint[]>;
    expectPatch: boolean;
    expectDelete: boolean;
  }>([
    {
      description: 'not scheduled - ignore',
      pod: newPod('pod1', ''),
      taintedNodes: {},
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'scheduled on untainted Node',
      pod: newPod('pod1', 'node1'),
      taintedNodes: {},
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'schedule on tainted Node',
      pod: newPod('pod1', 'node1'),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'schedule on tainted Node with finite toleration',
      pod: addToleration(newPod('pod1', 'node1'), 1, 100),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'schedule on tainted Node with infinite toleration',
      pod: addToleration(newPod('pod1', 'node1'), 1, -1),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'schedule on tainted Node with infinite invalid toleration',
      pod: addToleration(newPod('pod1', 'node1'), 2, -1),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: true,
      expectDelete: true,
    },
  ])('$description', ({ pod, taintedNodes, expectPatch, expectDelete }) => {
    const controller = new Controller([pod], taintedNodes);
    controller.podLister.set(podKey(pod), pod);
    controller.PodUpdated(undefined, pod);
    controller.verifyPodActions(expectPatch, expectDelete);
  });
});

describe('TestDeletePod', () => {
  it('a deleted pod with nothing scheduled is cancelled quietly', () => {
    const controller = new Controller([], { node1: [createNoExecuteTaint(1)] });
    expect(() => {
      controller.PodUpdated(newPod('pod1', 'node1'), undefined);
    }).not.toThrow();
    expect(controller.lastActions).toEqual([{ kind: 'cancel', key: 'default/pod1' }]);
    expect(controller.events).toEqual([]);
    expect(controller.queue.workers).toEqual({});
  });
});

describe('TestUpdatePod', () => {
  it.each<{
    description: string;
    prevPod: Pod;
    awaitForScheduledEviction?: boolean;
    newPod: Pod;
    taintedNodes: Record<string, Taint[]>;
    expectPatch: boolean;
    expectDelete: boolean;
  }>([
    {
      description: 'scheduling onto tainted Node',
      prevPod: newPod('pod1', ''),
      newPod: newPod('pod1', 'node1'),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'scheduling onto tainted Node with toleration',
      prevPod: addToleration(newPod('pod1', ''), 1, -1),
      newPod: addToleration(newPod('pod1', 'node1'), 1, -1),
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'removing toleration',
      prevPod: addToleration(newPod('pod1', 'node1'), 1, 100),
      newPod: newPod('pod1', 'node1'),
      awaitForScheduledEviction: true,
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: "lengthening toleration shouldn't work",
      prevPod: addToleration(newPod('pod1', 'node1'), 1, 1),
      newPod: addToleration(newPod('pod1', 'node1'), 1, 100),
      awaitForScheduledEviction: true,
      taintedNodes: { node1: [createNoExecuteTaint(1)] },
      expectPatch: true,
      expectDelete: true,
    },
  ])(
    '$description',
    ({ prevPod, awaitForScheduledEviction, newPod: updated, taintedNodes, expectPatch, expectDelete }) => {
      const controller = new Controller([prevPod], taintedNodes);
      const key = podKey(prevPod);
      controller.podLister.set(key, prevPod);
      controller.PodUpdated(undefined, prevPod);
      if (awaitForScheduledEviction === true) expect(getWorkerUnsafe(controller.queue, key)).toBeDefined();

      controller.podLister.set(key, updated);
      controller.PodUpdated(prevPod, updated);
      controller.verifyPodActions(expectPatch, expectDelete);
    },
  );

  it("lengthening toleration shouldn't work: the deletion fires at the first countdown's end", () => {
    const prevPod = addToleration(newPod('pod1', 'node1'), 1, 1);
    const updated = addToleration(newPod('pod1', 'node1'), 1, 100);
    const controller = new Controller([prevPod], { node1: [createNoExecuteTaint(1)] });
    controller.podLister.set('default/pod1', prevPod);
    controller.PodUpdated(undefined, prevPod);
    const scheduled = getWorkerUnsafe(controller.queue, 'default/pod1');
    controller.podLister.set('default/pod1', updated);
    controller.PodUpdated(prevPod, updated);
    expect(controller.lastActions).toEqual([]); // the earlier eviction is kept
    controller.verifyPodActions(true, true);
    expect(controller.podActions.map((a) => a.at)).toEqual([scheduled?.fireAt, scheduled?.fireAt]);
    expect(scheduled?.fireAt).toBe(fakeNow + 1 + second);
  });
});

describe('TestCreateNode', () => {
  it.each<{ description: string; pods: Pod[]; node: Node; expectPatch: boolean; expectDelete: boolean }>([
    {
      description: 'Creating Node matching already assigned Pod',
      pods: [newPod('pod1', 'node1')],
      node: newNode('node1'),
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'Creating tainted Node matching already assigned Pod',
      pods: [newPod('pod1', 'node1')],
      node: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'Creating tainted Node matching already assigned tolerating Pod',
      pods: [addToleration(newPod('pod1', 'node1'), 1, -1)],
      node: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: false,
      expectDelete: false,
    },
  ])('$description', ({ pods, node, expectPatch, expectDelete }) => {
    const controller = new Controller(pods);
    controller.nodeLister.set(node.name, node);
    controller.NodeUpdated(undefined, node);
    controller.verifyPodActions(expectPatch, expectDelete);
  });
});

describe('TestDeleteNode', () => {
  it('drops the taintedNodes entry of a node gone from the lister', () => {
    const controller = new Controller([], { node1: [createNoExecuteTaint(1)] });
    controller.NodeUpdated(newNode('node1'), undefined);
    expect(controller.taintedNodes.has('node1')).toBe(false);
  });
});

describe('TestUpdateNode', () => {
  it.each<{
    description: string;
    pods: Pod[];
    oldNode: Node;
    newNode: Node;
    expectPatch: boolean;
    expectDelete: boolean;
    additionalSleep?: number;
  }>([
    {
      description: 'Added taint, expect node patched and deleted',
      pods: [newPod('pod1', 'node1')],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'Added tolerated taint',
      pods: [addToleration(newPod('pod1', 'node1'), 1, 100)],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: false,
      expectDelete: false,
    },
    {
      description: 'Only one added taint tolerated',
      pods: [addToleration(newPod('pod1', 'node1'), 1, 100)],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1, 2]),
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'Taint removed',
      pods: [addToleration(newPod('pod1', 'node1'), 1, 1)],
      oldNode: addTaintsToNode(newNode('node1'), [1]),
      newNode: newNode('node1'),
      expectPatch: false,
      expectDelete: false,
      additionalSleep: 1500,
    },
    {
      description: 'Pod with multiple tolerations are evicted when first one runs out',
      pods: [
        {
          ...newPod('pod1', 'node1'),
          tolerations: [
            { key: 'testTaint1', value: 'test1', effect: 'NoExecute', tolerationSeconds: 1 },
            { key: 'testTaint2', value: 'test2', effect: 'NoExecute', tolerationSeconds: 100 },
          ],
        },
      ],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1, 2]),
      expectPatch: true,
      expectDelete: true,
    },
  ])('$description', ({ pods, oldNode, newNode: updated, expectPatch, expectDelete, additionalSleep }) => {
    const controller = new Controller(pods);
    controller.nodeLister.set(updated.name, updated);
    controller.NodeUpdated(oldNode, updated);
    if (additionalSleep !== undefined) controller.advance(additionalSleep);
    controller.verifyPodActions(expectPatch, expectDelete);
  });

  it('Pod with multiple tolerations are evicted when first one runs out: at the shortest toleration', () => {
    const pod: Pod = {
      ...newPod('pod1', 'node1'),
      tolerations: [
        { key: 'testTaint1', value: 'test1', effect: 'NoExecute', tolerationSeconds: 1 },
        { key: 'testTaint2', value: 'test2', effect: 'NoExecute', tolerationSeconds: 100 },
      ],
    };
    const controller = new Controller([pod]);
    const node = addTaintsToNode(newNode('node1'), [1, 2]);
    controller.nodeLister.set('node1', node);
    controller.NodeUpdated(newNode('node1'), node);
    const observedAt = controller.now;
    controller.verifyPodActions(true, true);
    expect(controller.podActions).toEqual([
      { verb: 'patch', key: 'default/pod1', at: observedAt + second },
      { verb: 'delete', key: 'default/pod1', at: observedAt + second },
    ]);
  });
});

describe('TestUpdateNodeWithMultipleTaints', () => {
  it('is queued only while a temporarily tolerated taint is present, and never deleted', () => {
    const taint1 = createNoExecuteTaint(1);
    const taint2 = createNoExecuteTaint(2);
    const pod: Pod = {
      ...newPod('pod1', 'node1'),
      tolerations: [
        { key: taint1.key, operator: 'Exists', effect: 'NoExecute' },
        { key: taint2.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
      ],
    };
    const key = podKey(pod);
    const untaintedNode = newNode('node1');
    const doubleTaintedNode: Node = { ...newNode('node1'), taints: [taint1, taint2] };
    const singleTaintedNode: Node = { ...newNode('node1'), taints: [taint1] };
    const controller = new Controller([pod]);
    const step = (node: Node) => {
      controller.advance(1);
      controller.nodeLister.set('node1', node);
      controller.handleNodeUpdate('node1');
    };

    // no taint
    step(untaintedNode);
    expect(getWorkerUnsafe(controller.queue, key)).toBeUndefined();
    // no taint -> infinitely tolerated taint
    step(singleTaintedNode);
    expect(getWorkerUnsafe(controller.queue, key)).toBeUndefined();
    // infinitely tolerated taint -> temporarily tolerated taint
    step(doubleTaintedNode);
    expect(getWorkerUnsafe(controller.queue, key)).toMatchObject({ fireAt: controller.now + 60 * second });
    // temporarily tolerated taint -> infinitely tolerated taint
    step(singleTaintedNode);
    expect(getWorkerUnsafe(controller.queue, key)).toBeUndefined();
    expect(controller.events).toEqual([cancelPodDeletionEvent(key)]);

    // verify pod is not deleted (not even after the 60s would have passed)
    controller.advance(120 * second);
    expect(controller.deletedPods()).toEqual([]);
  });
});

describe('TestUpdateNodeWithMultiplePods', () => {
  it.each<{
    description: string;
    pods: Pod[];
    oldNode: Node;
    newNode: Node;
    expectedDeleteTimes: { names: string[]; timestamp: number }[];
  }>([
    {
      description: 'Pods with different toleration times are evicted appropriately',
      pods: [
        newPod('pod1', 'node1'),
        addToleration(newPod('pod2', 'node1'), 1, 1),
        addToleration(newPod('pod3', 'node1'), 1, -1),
      ],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectedDeleteTimes: [
        { names: ['pod1'], timestamp: 0 },
        { names: ['pod2'], timestamp: second },
      ],
    },
    {
      description: 'Evict all pods not matching all taints instantly',
      pods: [
        newPod('pod1', 'node1'),
        addToleration(newPod('pod2', 'node1'), 1, 1),
        addToleration(newPod('pod3', 'node1'), 1, -1),
      ],
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1, 2]),
      expectedDeleteTimes: [{ names: ['pod1', 'pod2', 'pod3'], timestamp: 0 }],
    },
  ])('$description', ({ pods, oldNode, newNode: updated, expectedDeleteTimes }) => {
    const controller = new Controller(pods);
    controller.nodeLister.set(updated.name, updated);
    controller.NodeUpdated(oldNode, updated);
    const startedAt = controller.now;
    const groups = [...expectedDeleteTimes].sort((a, b) => a.timestamp - b.timestamp);
    groups.forEach((group, i) => {
      // Upstream checks half-way to the next group's time, or 500ms after the last one.
      const next = groups[i + 1];
      const increment = next === undefined ? 500 : (next.timestamp - group.timestamp) / 2;
      controller.advanceTo(startedAt + group.timestamp + increment);
      expect(controller.deletedPods().sort()).toEqual(group.names.map((n) => `default/${n}`).sort());
      controller.podActions = []; // fakeClientset.ClearActions()
    });
    // Whatever is left (pod3, tolerating forever) is never deleted.
    controller.advance(10 * 60 * second);
    expect(controller.deletedPods()).toEqual([]);
  });
});

describe('TestEventualConsistency', () => {
  it.each<{
    description: string;
    pods: Pod[];
    prevPod: Pod | undefined;
    newPod: Pod;
    oldNode: Node;
    newNode: Node;
    expectPatch: boolean;
    expectDelete: boolean;
    pod2TolerationSeconds?: number;
  }>([
    {
      description: 'existing pod2 scheduled onto tainted Node',
      pods: [newPod('pod1', 'node1')],
      prevPod: newPod('pod2', ''),
      newPod: newPod('pod2', 'node1'),
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'existing pod2 with taint toleration scheduled onto tainted Node',
      pods: [newPod('pod1', 'node1')],
      prevPod: addToleration(newPod('pod2', ''), 1, 100),
      newPod: addToleration(newPod('pod2', 'node1'), 1, 100),
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
      pod2TolerationSeconds: 100,
    },
    {
      description: 'new pod2 created on tainted Node',
      pods: [newPod('pod1', 'node1')],
      prevPod: undefined,
      newPod: newPod('pod2', 'node1'),
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
    },
    {
      description: 'new pod2 with tait toleration created on tainted Node',
      pods: [newPod('pod1', 'node1')],
      prevPod: undefined,
      newPod: addToleration(newPod('pod2', 'node1'), 1, 100),
      oldNode: newNode('node1'),
      newNode: addTaintsToNode(newNode('node1'), [1]),
      expectPatch: true,
      expectDelete: true,
      pod2TolerationSeconds: 100,
    },
  ])(
    '$description',
    ({
      pods,
      prevPod,
      newPod: pod2,
      oldNode,
      newNode: updated,
      expectPatch,
      expectDelete,
      pod2TolerationSeconds,
    }) => {
      const controller = new Controller(pods);
      controller.nodeLister.set(updated.name, updated);
      if (prevPod !== undefined) {
        controller.podLister.set(podKey(prevPod), prevPod);
        controller.PodUpdated(undefined, prevPod);
      }

      // First the node update, which deletes pod1: it does not know about pod2 yet.
      controller.NodeUpdated(oldNode, updated);
      controller.verifyPodActions(expectPatch, expectDelete);
      expect(controller.deletedPods()).toEqual(['default/pod1']);
      controller.podActions = [];

      // Then the delayed update of pod2 reaches the controller: it is handled as well. (Upstream only
      // waits 20ms here; these assertions follow from the semantics.)
      controller.podLister.set(podKey(pod2), pod2);
      controller.PodUpdated(prevPod, pod2);
      if (pod2TolerationSeconds === undefined) {
        // Deleted at once: the deletion fires, but pod2 never reached the fake clientset, so every
        // GET fails and the worker gives up after 5 attempts without patching or deleting.
        expect(controller.events.at(-1)).toEqual(podDeletionEvent('default/pod2'));
        expect(controller.getAttempts.filter((k) => k === 'default/pod2')).toHaveLength(5);
        expect(controller.podActions).toEqual([]);
        expect(getWorkerUnsafe(controller.queue, 'default/pod2')).toBeUndefined();
      } else {
        expect(getWorkerUnsafe(controller.queue, 'default/pod2')).toMatchObject({
          createdAt: controller.now,
          fireAt: controller.now + pod2TolerationSeconds * second,
        });
      }
    },
  );
});

// --- own cases -----------------------------------------------------------------------------------

describe('constants', () => {
  it('match upstream', () => {
    expect(deletePodRetries).toBe(5);
    expect(deletePodRetryInterval).toBe(10);
    expect(disruptionTargetCondition).toEqual({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
    });
  });
});

describe('podUpdatedNeedsProcessing / podUpdated', () => {
  const base = addToleration(newPod('pod1', 'node1'), 1, 100);
  it.each<{ name: string; oldPod: Pod | undefined; newPod: Pod | undefined; want: boolean }>([
    { name: 'add', oldPod: undefined, newPod: base, want: true },
    { name: 'delete', oldPod: base, newPod: undefined, want: true },
    {
      name: 'nothing the controller reads changed',
      oldPod: base,
      newPod: { ...base, ready: 'False' },
      want: false,
    },
    { name: 'rebound to another node', oldPod: base, newPod: { ...base, nodeName: 'node2' }, want: true },
    { name: 'bound', oldPod: { ...base, nodeName: '' }, newPod: base, want: true },
    {
      name: 'tolerationSeconds changed',
      oldPod: base,
      newPod: addToleration(newPod('pod1', 'node1'), 1, 1),
      want: true,
    },
    {
      name: 'seconds removed',
      oldPod: base,
      newPod: addToleration(newPod('pod1', 'node1'), 1, -1),
      want: true,
    },
    {
      name: 'toleration added',
      oldPod: base,
      newPod: { ...base, tolerations: [...base.tolerations, { operator: 'Exists' }] },
      want: true,
    },
    {
      name: 'same tolerations, reordered',
      oldPod: { ...base, tolerations: [{ key: 'a' }, { key: 'b' }] },
      newPod: { ...base, tolerations: [{ key: 'b' }, { key: 'a' }] },
      want: true,
    },
    {
      name: 'absent and empty strings are semantically equal',
      oldPod: { ...base, tolerations: [{ key: 'a' }] },
      newPod: { ...base, tolerations: [{ key: 'a', operator: '', value: '', effect: '' }] },
      want: false,
    },
    {
      name: 'operator changed',
      oldPod: { ...base, tolerations: [{ key: 'a' }] },
      newPod: { ...base, tolerations: [{ key: 'a', operator: 'Exists' }] },
      want: true,
    },
    {
      name: 'effect changed',
      oldPod: { ...base, tolerations: [{ key: 'a' }] },
      newPod: { ...base, tolerations: [{ key: 'a', effect: 'NoExecute' }] },
      want: true,
    },
    {
      name: 'value changed',
      oldPod: { ...base, tolerations: [{ key: 'a' }] },
      newPod: { ...base, tolerations: [{ key: 'a', value: 'v' }] },
      want: true,
    },
  ])('$name', ({ oldPod, newPod: updated, want }) => {
    expect(podUpdatedNeedsProcessing(oldPod, updated)).toBe(want);
    // Symmetric for updates.
    if (oldPod !== undefined && updated !== undefined)
      expect(podUpdatedNeedsProcessing(updated, oldPod)).toBe(want);
    expect(podUpdated(oldPod, updated) !== undefined).toBe(want);
  });

  it('the item names the new pod and its node; a delete names the old one', () => {
    expect(podUpdated({ ...base, nodeName: 'node0' }, base)).toEqual({
      key: 'default/pod1',
      nodeName: 'node1',
    });
    expect(podUpdated(base, undefined)).toEqual({ key: 'default/pod1', nodeName: 'node1' });
    expect(podUpdated(undefined, undefined)).toBeUndefined();
  });
});

describe('nodeUpdatedNeedsProcessing / nodeUpdated', () => {
  const tainted = addTaintsToNode(newNode('node1'), [1]);
  const noSchedule: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' };
  it.each<{ name: string; oldNode: Node | undefined; newNode: Node | undefined; want: boolean }>([
    { name: 'add', oldNode: undefined, newNode: tainted, want: true },
    { name: 'delete', oldNode: tainted, newNode: undefined, want: true },
    {
      name: 'untainted, conditions changed',
      oldNode: newNode('node1'),
      newNode: { ...newNode('node1'), conditions: [{ type: 'Ready', status: 'False' }] },
      want: false,
    },
    {
      name: 'NoSchedule taint added only',
      oldNode: tainted,
      newNode: { ...tainted, taints: [...tainted.taints, noSchedule] },
      want: false,
    },
    { name: 'NoExecute taint added', oldNode: newNode('node1'), newNode: tainted, want: true },
    {
      name: 'NoExecute taint re-added with a new timeAdded',
      oldNode: tainted,
      newNode: { ...newNode('node1'), taints: [createNoExecuteTaint(1, fakeNow + 1)] },
      want: true,
    },
    {
      name: 'NoExecute taint value changed',
      oldNode: tainted,
      newNode: { ...newNode('node1'), taints: [{ ...createNoExecuteTaint(1), value: 'other' }] },
      want: true,
    },
    {
      name: 'NoExecute taint key changed',
      oldNode: tainted,
      newNode: { ...newNode('node1'), taints: [{ ...createNoExecuteTaint(1), key: 'other' }] },
      want: true,
    },
    {
      name: 'absent and empty taint values are semantically equal',
      oldNode: { ...newNode('node1'), taints: [{ key: 'k', effect: 'NoExecute' }] },
      newNode: { ...newNode('node1'), taints: [{ key: 'k', value: '', effect: 'NoExecute' }] },
      want: false,
    },
    {
      name: 'NoExecute taints reordered',
      oldNode: addTaintsToNode(newNode('node1'), [1, 2]),
      newNode: addTaintsToNode(newNode('node1'), [2, 1]),
      want: true,
    },
  ])('$name', ({ oldNode, newNode: updated, want }) => {
    expect(nodeUpdatedNeedsProcessing(oldNode, updated)).toBe(want);
    if (oldNode !== undefined && updated !== undefined)
      expect(nodeUpdatedNeedsProcessing(updated, oldNode)).toBe(want);
    expect(nodeUpdated(oldNode, updated)).toBe(want ? 'node1' : undefined);
  });

  it('nothing to name without a node', () => {
    expect(nodeUpdated(undefined, undefined)).toBeUndefined();
  });
});

describe('processPodOnNode', () => {
  const now = fakeNow + 10 * second;
  const key = 'default/pod1';
  const taints = [createNoExecuteTaint(1)];
  const pod = (tolerations: Toleration[]) => ({ key, nodeName: 'node1', tolerations });
  const tol = (tolerationSeconds?: number): Toleration => ({
    key: 'testTaint1',
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds,
  });
  const schedule = (createdAt: EpochMillis, fireAt: EpochMillis): PodEvictionAction => ({
    kind: 'schedule',
    key,
    nodeName: 'node1',
    createdAt,
    fireAt,
  });
  const cancel: PodEvictionAction = { kind: 'cancel', key };
  const earlier: ScheduledEviction = { createdAt: fakeNow, fireAt: fakeNow + 300 * second };

  it.each<{
    name: string;
    tolerations: Toleration[];
    existing?: ScheduledEviction;
    taints?: Taint[];
    want: PodEvictionAction[];
  }>([
    { name: 'not tolerated: cancel, then delete now', tolerations: [], want: [cancel, schedule(now, now)] },
    {
      name: 'not tolerated with a scheduled eviction: cancel it, delete now',
      tolerations: [],
      existing: earlier,
      want: [cancel, schedule(now, now)],
    },
    { name: 'tolerated forever: cancel', tolerations: [tol()], want: [cancel] },
    {
      name: 'tolerated forever with a scheduled eviction: cancel',
      tolerations: [tol()],
      existing: earlier,
      want: [cancel],
    },
    {
      name: 'finite toleration: delete after it',
      tolerations: [tol(300)],
      want: [schedule(now, now + 300 * second)],
    },
    { name: 'zero seconds: delete now', tolerations: [tol(0)], want: [schedule(now, now)] },
    { name: 'negative seconds: delete now', tolerations: [tol(-10)], want: [schedule(now, now)] },
    {
      name: 'earlier scheduled eviction kept on lengthening (#108982)',
      tolerations: [tol(600)],
      existing: earlier,
      want: [],
    },
    {
      name: 'earlier scheduled eviction kept on shortening (#108982)',
      tolerations: [tol(1)],
      existing: earlier,
      want: [],
    },
    {
      name: 'earlier scheduled eviction kept even when seconds drop to zero',
      tolerations: [tol(0)],
      existing: earlier,
      want: [],
    },
    {
      name: 'replacement branch (derived): existing created at this very instant is cancelled and re-added with its createdAt',
      tolerations: [tol(60)],
      existing: { createdAt: now, fireAt: now + 300 * second },
      want: [cancel, schedule(now, now + 60 * second)],
    },
    {
      name: 'replacement branch (derived): existing created in the future (clock stepped back)',
      tolerations: [tol(60)],
      existing: { createdAt: now + 5 * second, fireAt: now + 305 * second },
      want: [cancel, schedule(now + 5 * second, now + 60 * second)],
    },
    {
      name: 'first match wins: finite before forever is evicted after the finite time',
      tolerations: [tol(30), tol()],
      want: [schedule(now, now + 30 * second)],
    },
    {
      name: 'first match wins: forever before finite is never evicted',
      tolerations: [tol(), tol(30)],
      want: [cancel],
    },
    {
      name: 'docs/upstream.md#quirk-21: called with no taints it cancels and then deletes now',
      tolerations: [tol()],
      taints: [],
      want: [cancel, schedule(now, now)],
    },
  ])('$name', ({ tolerations, existing, taints: t, want }) => {
    expect(processPodOnNode(pod(tolerations), t ?? taints, existing, now)).toEqual(want);
  });

  it('replacement branch timing: the re-added timer runs fireAt - createdAt from the call (docs/upstream.md#quirk-22)', () => {
    const existing = { createdAt: now + 5 * second, fireAt: now + 305 * second };
    const actions = processPodOnNode(pod([tol(60)]), taints, existing, now);
    const added = actions.find((a) => a.kind === 'schedule');
    if (added?.kind !== 'schedule') throw new Error('expected a schedule');
    const result = addWork(createWorkerQueue(), key, added.createdAt, added.fireAt, now);
    // 55s after the call: 5s before the intended fireAt.
    expect(getWorkerUnsafe(result.queue, key)).toMatchObject({
      fireAt: now + 60 * second,
      firesAt: now + 55 * second,
    });
  });
});

describe('handleNodeUpdate', () => {
  const now = fakeNow;
  const pods = [newPod('pod1', 'node1'), addToleration(newPod('pod2', 'node1'), 1, 100)];
  const nothingScheduled = () => undefined;

  it('node gone: drop the taintedNodes entry, cancel nothing (docs/upstream.md#quirk-20)', () => {
    const existing = () => ({ createdAt: now - second, fireAt: now + 99 * second });
    expect(handleNodeUpdate('node1', undefined, pods, existing, now)).toEqual({
      noExecuteTaints: undefined,
      actions: [],
    });
  });

  it('no NoExecute taints: drop the entry and cancel every pod', () => {
    const node: Node = {
      ...newNode('node1'),
      taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }],
    };
    expect(handleNodeUpdate('node1', node, pods, nothingScheduled, now)).toEqual({
      noExecuteTaints: undefined,
      actions: [
        { kind: 'cancel', key: 'default/pod1' },
        { kind: 'cancel', key: 'default/pod2' },
      ],
    });
  });

  it('no pods: only the taints are stored', () => {
    const node = addTaintsToNode(newNode('node1'), [1]);
    expect(handleNodeUpdate('node1', node, [], nothingScheduled, now)).toEqual({
      noExecuteTaints: [createNoExecuteTaint(1)],
      actions: [],
    });
  });

  it('tainted: NoExecute taints stored, every pod processed with the same now', () => {
    const node: Node = {
      ...addTaintsToNode(newNode('node1'), [1]),
      taints: [{ key: 'x', effect: 'NoSchedule' }, createNoExecuteTaint(1)],
    };
    expect(handleNodeUpdate('node1', node, pods, nothingScheduled, now)).toEqual({
      noExecuteTaints: [createNoExecuteTaint(1)],
      actions: [
        { kind: 'cancel', key: 'default/pod1' },
        // Each bound to the pod it was decided for (its UID).
        {
          kind: 'schedule',
          key: 'default/pod1',
          uid: 'uid-pod1',
          nodeName: 'node1',
          createdAt: now,
          fireAt: now,
        },
        {
          kind: 'schedule',
          key: 'default/pod2',
          uid: 'uid-pod2',
          nodeName: 'node1',
          createdAt: now,
          fireAt: now + 100 * second,
        },
      ],
    });
  });

  it('property: without NoExecute taints it never schedules (the docs/upstream.md#quirk-21 pattern is unreachable)', () => {
    const effect = fc.constantFrom<'NoSchedule' | 'PreferNoSchedule'>('NoSchedule', 'PreferNoSchedule');
    const taint = fc.record({ key: fc.string(), effect });
    const toleration = fc.record({
      key: fc.option(fc.string(), { nil: undefined }),
      tolerationSeconds: fc.option(fc.integer(), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(taint),
        fc.array(fc.array(toleration), { maxLength: 4 }),
        (taints, tolerationSets) => {
          const node: Node = { ...newNode('node1'), taints };
          const podsOnNode = tolerationSets.map((tolerations, i) => ({
            ...newPod(`p${i}`, 'node1'),
            tolerations,
          }));
          const outcome = handleNodeUpdate(
            'node1',
            node,
            podsOnNode,
            () => ({ createdAt: now, fireAt: now }),
            now,
          );
          expect(outcome.noExecuteTaints).toBeUndefined();
          expect(outcome.actions.every((a) => a.kind === 'cancel')).toBe(true);
        },
      ),
    );
  });
});

describe('handlePodUpdate', () => {
  const now = fakeNow;
  const taints = [createNoExecuteTaint(1)];
  const nothingScheduled = () => undefined;
  const item: PodUpdateItem = { key: 'default/pod1', nodeName: 'node1' };

  it.each<{ name: string; pod: Pod | undefined; nodeTaints: Taint[] | undefined; want: PodEvictionAction[] }>(
    [
      {
        name: 'pod gone (NotFound): cancel',
        pod: undefined,
        nodeTaints: taints,
        want: [{ kind: 'cancel', key: 'default/pod1' }],
      },
      {
        name: 'pod now bound elsewhere (stale item): nothing',
        pod: newPod('pod1', 'node2'),
        nodeTaints: taints,
        want: [],
      },
      {
        name: 'node has no taintedNodes entry: nothing',
        pod: newPod('pod1', 'node1'),
        nodeTaints: undefined,
        want: [],
      },
      {
        name: 'an empty entry counts as none (never stored upstream)',
        pod: newPod('pod1', 'node1'),
        nodeTaints: [],
        want: [],
      },
      {
        name: 'tainted node, no toleration: delete now',
        pod: newPod('pod1', 'node1'),
        nodeTaints: taints,
        want: [
          { kind: 'cancel', key: 'default/pod1' },
          {
            kind: 'schedule',
            key: 'default/pod1',
            uid: 'uid-pod1',
            nodeName: 'node1',
            createdAt: now,
            fireAt: now,
          },
        ],
      },
    ],
  )('$name', ({ pod, nodeTaints, want }) => {
    expect(handlePodUpdate(item, pod, nodeTaints, nothingScheduled, now)).toEqual(want);
  });

  it('unbound pod: nothing, even with an entry for ""', () => {
    expect(
      handlePodUpdate(
        { key: 'default/pod1', nodeName: '' },
        newPod('pod1', ''),
        taints,
        nothingScheduled,
        now,
      ),
    ).toEqual([]);
  });

  it('passes the lookup of its own key to processPodOnNode', () => {
    const seen: PodKey[] = [];
    const existing = (key: PodKey) => {
      seen.push(key);
      return { createdAt: now - second, fireAt: now + 99 * second };
    };
    expect(
      handlePodUpdate(item, addToleration(newPod('pod1', 'node1'), 1, 100), taints, existing, now),
    ).toEqual([]);
    expect(seen).toEqual(['default/pod1']);
  });
});

describe('controller scenarios (own)', () => {
  it('taint removal cancels a pending eviction with an Event, and nothing is deleted', () => {
    const pod = addToleration(newPod('pod1', 'node1'), 1, 300);
    const controller = new Controller([pod]);
    const tainted = addTaintsToNode(newNode('node1'), [1]);
    controller.nodeLister.set('node1', tainted);
    controller.NodeUpdated(newNode('node1'), tainted);
    expect(getWorkerUnsafe(controller.queue, 'default/pod1')).toBeDefined();
    controller.advance(100 * second);
    controller.nodeLister.set('node1', newNode('node1'));
    controller.NodeUpdated(tainted, newNode('node1'));
    expect(controller.events).toEqual([cancelPodDeletionEvent('default/pod1')]);
    controller.advance(600 * second);
    expect(controller.deletedPods()).toEqual([]);
  });

  it('node deletion does not cancel a pending eviction (docs/upstream.md#quirk-20): the pod is still deleted on time', () => {
    const pod = addToleration(newPod('pod1', 'node1'), 1, 300);
    const controller = new Controller([pod]);
    const tainted = addTaintsToNode(newNode('node1'), [1]);
    controller.nodeLister.set('node1', tainted);
    controller.NodeUpdated(undefined, tainted);
    const taintSeenAt = controller.now;
    controller.advance(10 * second);
    controller.nodeLister.delete('node1');
    controller.NodeUpdated(tainted, undefined);
    expect(controller.taintedNodes.has('node1')).toBe(false);
    controller.advance(600 * second);
    expect(controller.podActions.filter((a) => a.verb === 'delete')).toEqual([
      { verb: 'delete', key: 'default/pod1', at: taintSeenAt + 300 * second },
    ]);
  });

  it('a re-added taint (new timeAdded, e.g. a KCM restart) restarts the countdown (docs/upstream.md#quirk-14, #108268)', () => {
    const pod = addToleration(newPod('pod1', 'node1'), 1, 300);
    const controller = new Controller([pod]);
    const first = addTaintsToNode(newNode('node1'), [1]);
    controller.nodeLister.set('node1', first);
    controller.NodeUpdated(undefined, first);
    controller.advance(200 * second);
    // Stripped and re-added: the controller sees the removal, then the new taint.
    controller.nodeLister.set('node1', newNode('node1'));
    controller.NodeUpdated(first, newNode('node1'));
    const readded: Node = { ...newNode('node1'), taints: [createNoExecuteTaint(1, controller.now)] };
    controller.nodeLister.set('node1', readded);
    controller.NodeUpdated(newNode('node1'), readded);
    const restartedAt = controller.now;
    controller.advance(600 * second);
    expect(controller.podActions.filter((a) => a.verb === 'delete').map((a) => a.at)).toEqual([
      restartedAt + 300 * second,
    ]);
  });

  it('countdowns start when the controller sees the taint, not at timeAdded (docs/upstream.md#quirk-15)', () => {
    const pod = addToleration(newPod('pod1', 'node1'), 1, 60);
    const controller = new Controller([pod]);
    const node: Node = { ...newNode('node1'), taints: [createNoExecuteTaint(1, fakeNow - 3600 * second)] };
    controller.nodeLister.set('node1', node);
    controller.NodeUpdated(undefined, node);
    expect(getWorkerUnsafe(controller.queue, 'default/pod1')?.fireAt).toBe(controller.now + 60 * second);
  });

  it('first-match order: finite before forever evicts after the finite time, reversed never', () => {
    const finiteFirst: Pod = {
      ...newPod('pod1', 'node1'),
      tolerations: [
        { key: 'testTaint1', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
        { key: 'testTaint1', operator: 'Exists', effect: 'NoExecute' },
      ],
    };
    const foreverFirst: Pod = {
      ...newPod('pod2', 'node1'),
      tolerations: [...finiteFirst.tolerations].reverse(),
    };
    const controller = new Controller([finiteFirst, foreverFirst]);
    const node = addTaintsToNode(newNode('node1'), [1]);
    controller.nodeLister.set('node1', node);
    controller.NodeUpdated(undefined, node);
    const seenAt = controller.now;
    controller.advance(3600 * second);
    expect(controller.podActions.filter((a) => a.verb === 'delete')).toEqual([
      { verb: 'delete', key: 'default/pod1', at: seenAt + 30 * second },
    ]);
  });

  it('an update within the same instant takes the replacement branch and emits a cancel Event', () => {
    const pod = addToleration(newPod('pod1', 'node1'), 1, 100);
    const controller = new Controller([pod], { node1: [createNoExecuteTaint(1)] });
    controller.podLister.set('default/pod1', pod);
    controller.handlePodUpdate({ key: 'default/pod1', nodeName: 'node1' });
    const shorter = addToleration(newPod('pod1', 'node1'), 1, 10);
    controller.podLister.set('default/pod1', shorter);
    controller.handlePodUpdate({ key: 'default/pod1', nodeName: 'node1' }); // same `now`
    expect(controller.events).toEqual([cancelPodDeletionEvent('default/pod1')]);
    expect(getWorkerUnsafe(controller.queue, 'default/pod1')).toMatchObject({
      createdAt: controller.now,
      fireAt: controller.now + 10 * second,
    });
  });
});

describe("decideFiredEviction (a timer is decided again on the API's node and pod)", () => {
  const fired: FiredEviction = {
    key: 'default/pod1',
    uid: 'uid-pod1',
    nodeName: 'node1',
    createdAt: fakeNow - 100 * second,
    fireAt: fakeNow,
  };
  const tainted = addTaintsToNode(newNode('node1'), [1]);
  const tolerating = (seconds: number): Pod => addToleration(newPod('pod1', 'node1'), 1, seconds);
  const cases: {
    name: string;
    pod: Pod | undefined;
    node: Node | undefined;
    eviction?: FiredEviction;
    want: string;
  }[] = [
    {
      name: 'the taint is still there, tolerated for 100 s: due, deleted',
      pod: tolerating(100),
      node: tainted,
      want: 'delete',
    },
    {
      name: 'the taint is no longer tolerated at all: deleted',
      pod: newPod('pod1', 'node1'),
      node: tainted,
      want: 'delete',
    },
    {
      name: 'a longer toleration since does not lengthen the timer (upstream #108982): deleted',
      pod: tolerating(1000),
      node: tainted,
      want: 'delete',
    },
    {
      name: 'the node lost its NoExecute taints (a lost Node Changed): cancelled',
      pod: tolerating(100),
      node: newNode('node1'),
      want: 'cancel',
    },
    {
      name: 'the pod now tolerates the taint forever: cancelled',
      pod: tolerating(-1),
      node: tainted,
      want: 'cancel',
    },
    { name: 'the pod is gone: dropped', pod: undefined, node: tainted, want: 'drop' },
    {
      name: 'another pod holds the name: dropped',
      pod: { ...tolerating(100), uid: 'uid-other' },
      node: tainted,
      want: 'drop',
    },
    {
      name: 'the pod is terminating already: dropped, no second deletion',
      pod: { ...tolerating(100), deletionTimestamp: fakeNow - second },
      node: tainted,
      want: 'drop',
    },
    {
      name: 'the pod is bound elsewhere now: dropped',
      pod: tolerating(100),
      node: tainted,
      eviction: { ...fired, nodeName: 'node2' },
      want: 'drop',
    },
    { name: 'the node was deleted: dropped (PodGC)', pod: tolerating(100), node: undefined, want: 'drop' },
    {
      name: 'an entry without a UID is the pod of its name',
      pod: tolerating(100),
      node: tainted,
      eviction: {
        key: fired.key,
        nodeName: fired.nodeName,
        createdAt: fired.createdAt,
        fireAt: fired.fireAt,
      },
      want: 'delete',
    },
  ];
  it.each(cases)('$name', ({ pod, node, eviction, want }) => {
    expect(decideFiredEviction(eviction ?? fired, pod, node, fakeNow).kind).toBe(want);
  });

  it('a timer created after now (the clock stepped back) moves later, as processPodOnNode re-adds it', () => {
    const ahead = { ...fired, createdAt: fakeNow + 10 * second, fireAt: fakeNow + 110 * second };
    expect(decideFiredEviction(ahead, tolerating(100), tainted, fakeNow)).toEqual({
      kind: 'reschedule',
      createdAt: fakeNow + 10 * second,
      fireAt: fakeNow + 100 * second,
    });
  });

  it('deletes exactly when processPodOnNode, run on the same node and pod with the timer, calls for a deletion now', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 600 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 600 }),
        (seconds, hasTaint, age) => {
          const pod = seconds < 0 ? newPod('pod1', 'node1') : tolerating(seconds);
          const node = hasTaint ? tainted : newNode('node1');
          const eviction = { ...fired, createdAt: fakeNow - age * second };
          const decision = decideFiredEviction(eviction, pod, node, fakeNow);
          const actions = hasTaint
            ? processPodOnNode(
                { key: fired.key, uid: pod.uid, nodeName: 'node1', tolerations: pod.tolerations },
                node.taints.filter((t) => t.effect === 'NoExecute'),
                { createdAt: eviction.createdAt, fireAt: eviction.fireAt },
                fakeNow,
              )
            : [{ kind: 'cancel' as const, key: fired.key }];
          const deletesNow =
            actions.length === 0 || actions.some((a) => a.kind === 'schedule' && a.fireAt <= fakeNow);
          expect(decision.kind === 'delete').toBe(deletesNow);
        },
      ),
    );
  });
});
