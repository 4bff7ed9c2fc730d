import { describe, expect, it } from 'vitest';
import {
  EventReason,
  NodeControllerSource,
  TaintEvictionControllerSource,
  cancelPodDeletionEvent,
  deletingAllPodsEvent,
  nodeControllerEvictionEvent,
  nodeNotReadyEvent,
  podNodeNotReadyEvent,
  registeredNodeEvent,
  removingNodeEvent,
  taintManagerEvictionEvent,
} from '../../../shared/domain/kubeEvents.js';

const node0 = { name: 'node0', uid: '1234567890' };
const pod0 = { namespace: 'default', name: 'pod0', uid: 'pod0-uid' };

describe('constants', () => {
  it('uses the upstream reasons and source components verbatim', () => {
    expect(EventReason).toEqual({
      RegisteredNode: 'RegisteredNode',
      RemovingNode: 'RemovingNode',
      NodeNotReady: 'NodeNotReady',
      DeletingAllPods: 'DeletingAllPods',
      NodeControllerEviction: 'NodeControllerEviction',
      TaintManagerEviction: 'TaintManagerEviction',
    });
    expect(NodeControllerSource).toBe('node-controller');
    expect(TaintEvictionControllerSource).toBe('taint-eviction-controller');
  });
});

describe('TestPodDeletionEvent', () => {
  it('emitPodDeletionEvent', () => {
    expect(taintManagerEvictionEvent({ name: 'test', namespace: 'test' })).toEqual({
      involvedObject: { kind: 'Pod', namespace: 'test', name: 'test' },
      reason: 'TaintManagerEviction',
      type: 'Normal',
      message: 'Marking for deletion Pod test/test',
      source: 'taint-eviction-controller',
    });
  });

  it('emitCancelPodDeletionEvent', () => {
    expect(cancelPodDeletionEvent({ name: 'test', namespace: 'test' })).toEqual({
      involvedObject: { kind: 'Pod', namespace: 'test', name: 'test' },
      reason: 'TaintManagerEviction',
      type: 'Normal',
      message: 'Cancelling deletion of Pod test/test',
      source: 'taint-eviction-controller',
    });
  });

  it('the taint eviction controller refers to the pod without a UID', () => {
    const event = taintManagerEvictionEvent({ ...pod0 });
    expect(event.involvedObject).not.toHaveProperty('uid');
  });
});

describe('TestNodeEventGeneration', () => {
  // The monitor pass itself is tested with monitorNodeHealth; here: the RegisteredNode event it
  // records carries the node UID, as the test asserts on involvedObject.UID.
  it('RegisteredNode carries the node UID', () => {
    const event = registeredNodeEvent(node0);
    expect(event.reason).toBe('RegisteredNode');
    expect(event.involvedObject.uid).toBe('1234567890');
  });
});

describe('event builders', () => {
  it.each([
    {
      name: 'registeredNodeEvent',
      event: registeredNodeEvent(node0),
      want: {
        involvedObject: { kind: 'Node', name: 'node0', uid: '1234567890' },
        type: 'Normal',
        reason: 'RegisteredNode',
        message: 'Node node0 event: Registered Node node0 in Controller',
        source: 'node-controller',
      },
    },
    {
      name: 'removingNodeEvent',
      event: removingNodeEvent(node0),
      want: {
        involvedObject: { kind: 'Node', name: 'node0', uid: '1234567890' },
        type: 'Normal',
        reason: 'RemovingNode',
        message: 'Node node0 event: Removing Node node0 from Controller',
        source: 'node-controller',
      },
    },
    {
      name: 'nodeNotReadyEvent',
      event: nodeNotReadyEvent(node0),
      want: {
        involvedObject: { kind: 'Node', name: 'node0', uid: '1234567890' },
        type: 'Normal',
        reason: 'NodeNotReady',
        message: 'Node node0 status is now: NodeNotReady',
        source: 'node-controller',
      },
    },
    {
      name: 'deletingAllPodsEvent',
      event: deletingAllPodsEvent(node0),
      want: {
        involvedObject: { kind: 'Node', name: 'node0', uid: '1234567890' },
        type: 'Normal',
        reason: 'DeletingAllPods',
        message: 'Node node0 event: Deleting all Pods from Node node0.',
        source: 'node-controller',
      },
    },
    {
      name: 'podNodeNotReadyEvent',
      event: podNodeNotReadyEvent(pod0),
      want: {
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'pod0', uid: 'pod0-uid' },
        type: 'Warning',
        reason: 'NodeNotReady',
        message: 'Node is not ready',
        source: 'node-controller',
      },
    },
    {
      name: 'nodeControllerEvictionEvent',
      event: nodeControllerEvictionEvent(pod0, 'node0'),
      want: {
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'pod0', uid: 'pod0-uid' },
        type: 'Normal',
        reason: 'NodeControllerEviction',
        message: 'Marking for deletion Pod pod0 from Node node0',
        source: 'node-controller',
      },
    },
  ])('$name', ({ event, want }) => {
    expect(event).toStrictEqual(want);
  });
});
