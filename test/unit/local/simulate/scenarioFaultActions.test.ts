// The timeline actions that inject faults: restartRelay and relayClockStep (the relay's terms and
// clock), injectEvent (a forged or replayed event) and restoreApiServer (an etcd restore), each read into
// the action the simulator runs, and each mistake named by its field.
import { describe, expect, it } from 'vitest';
import { parseScenario, scenarioFromObject } from '../../../../local/simulate/scenario.js';
import { ScenarioError } from '../../../../shared/errors.js';

function issuesOf(doc: unknown): string[] {
  try {
    scenarioFromObject(doc);
  } catch (error) {
    if (error instanceof ScenarioError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

const base = {
  duration: '10m',
  nodes: [{ name: 'a-1', zone: 'zone-a' }],
  pods: [
    { name: 'web-1', node: 'a-1' },
    { name: 'agent-1', namespace: 'kube-system', node: 'a-1' },
  ],
};
const actionsOf = (timeline: readonly unknown[]) =>
  scenarioFromObject({ ...base, timeline }).timeline.map((e) => [e.at, e.action]);

describe('restartRelay', () => {
  it('reads {} and true as a relay whose clock is right, and clockSkew as a signed duration', () => {
    expect(
      actionsOf([
        { at: '1m', restartRelay: {} },
        { at: '2m', restartRelay: true },
        { at: '3m', restartRelay: { clockSkew: '-2m' } },
        { at: '4m', restartRelay: { clockSkew: 90 } },
        { at: '5m', restartRelay: { clockSkew: '1h' } },
      ]),
    ).toEqual([
      [60_000, { kind: 'restartRelay', clockSkew: 0 }],
      [120_000, { kind: 'restartRelay', clockSkew: 0 }],
      [180_000, { kind: 'restartRelay', clockSkew: -120_000 }],
      [240_000, { kind: 'restartRelay', clockSkew: 90_000 }],
      [300_000, { kind: 'restartRelay', clockSkew: 3_600_000 }],
    ]);
    expect(
      parseScenario(
        'duration: 5m\nnodes: [{name: a-1}]\ntimeline: [{at: 1m, restartRelay: {clockSkew: +30s}}]\n',
      ).timeline[0]?.action,
    ).toEqual({ kind: 'restartRelay', clockSkew: 30_000 });
  });

  it('names the field of every mistake', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', restartRelay: { clockSkew: '-1h1s' } },
          { at: '1m', restartRelay: { clockSkew: 'later' } },
          { at: '1m', restartRelay: { skew: '2m' } },
          { at: '1m', restartRelay: 'now' },
          { at: '1m', restartRelay: false },
          { at: '1m', restartRely: {} },
        ],
      }),
    ).toEqual([
      'timeline[5].restartRely: unknown action "restartRely"; did you mean restartRelay?',
      'timeline[0].restartRelay.clockSkew: expected a skew of at most 1h either way, got "-1h1s"',
      'timeline[1].restartRelay.clockSkew: expected a signed duration like "-2m", "+90s" or a number of seconds, got "later"',
      'timeline[2].restartRelay: unknown field "skew"',
      'timeline[3].restartRelay: expected {} or {clockSkew: <signed duration>}, got "now"',
      'timeline[4].restartRelay: expected {} or {clockSkew: <signed duration>}, got false',
    ]);
  });
});

describe('relayClockStep', () => {
  it('reads a signed duration or a number of seconds', () => {
    expect(
      actionsOf([
        { at: '30s', relayClockStep: '+30s' },
        { at: '1m', relayClockStep: '-2m' },
        { at: '1m', relayClockStep: -1.5 },
        { at: '2m', relayClockStep: 0 },
      ]),
    ).toEqual([
      [30_000, { kind: 'relayClockStep', step: 30_000 }],
      [60_000, { kind: 'relayClockStep', step: -120_000 }],
      [60_000, { kind: 'relayClockStep', step: -1_500 }],
      [120_000, { kind: 'relayClockStep', step: 0 }],
    ]);
  });

  it('is at most an hour either way; an error names the field', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', relayClockStep: '-2h' },
          { at: '1m', relayClockStep: 'soon' },
          { at: '1m', relayClockStep: null },
          { at: '1m', relayClockStep: { by: '1m' } },
          { at: '1m', relayClockstep: '1m' },
        ],
      }),
    ).toEqual([
      'timeline[4].relayClockstep: unknown action "relayClockstep"; did you mean relayClockStep?',
      'timeline[0].relayClockStep: expected a step of at most 1h either way, got "-2h"',
      'timeline[1].relayClockStep: expected a signed duration like "-2m", "+90s" or a number of seconds, got "soon"',
      'timeline[2].relayClockStep: expected a signed duration like "-2m", "+90s" or a number of seconds, got null',
      'timeline[3].relayClockStep: expected a signed duration like "-2m", "+90s" or a number of seconds, got {"by":"1m"}',
    ]);
  });
});

describe('suggestions for a misspelt action', () => {
  it('name the action sharing the longest start with it', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', stopRely: true },
          { at: '1m', startKub: 'a-1' },
        ],
      }),
    ).toEqual([
      'timeline[0].stopRely: unknown action "stopRely"; did you mean stopRelay?',
      'timeline[1].startKub: unknown action "startKub"; did you mean startKubelet?',
    ]);
  });
});

describe('injectEvent', () => {
  it('reads the detail type, the fields to merge, and what the event is about', () => {
    const node = { node: { name: 'a-1', taints: [{ key: 'k', effect: 'NoExecute' }] } };
    expect(
      actionsOf([
        { at: '1m', injectEvent: { detailType: 'Node Changed', detail: node } },
        {
          at: '1m',
          injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'web-1' }, type: 'DELETED' } },
        },
        {
          at: '1m',
          injectEvent: {
            detailType: 'Pod Changed',
            detail: { pod: { name: 'agent-1', namespace: 'kube-system' } },
          },
        },
        {
          at: '2m',
          injectEvent: { detailType: 'Heartbeat Digest', detail: { sequence: 99, anything: [null] } },
        },
        { at: '2m', injectEvent: { detailType: 'Heartbeat Digest' } },
      ]),
    ).toEqual([
      [60_000, { kind: 'injectEvent', detailType: 'Node Changed', detail: node, node: 'a-1' }],
      [
        60_000,
        {
          kind: 'injectEvent',
          detailType: 'Pod Changed',
          detail: { pod: { name: 'web-1' }, type: 'DELETED' },
          pod: { namespace: 'default', name: 'web-1' },
        },
      ],
      [
        60_000,
        {
          kind: 'injectEvent',
          detailType: 'Pod Changed',
          detail: { pod: { name: 'agent-1', namespace: 'kube-system' } },
          pod: { namespace: 'kube-system', name: 'agent-1' },
        },
      ],
      [
        120_000,
        { kind: 'injectEvent', detailType: 'Heartbeat Digest', detail: { sequence: 99, anything: [null] } },
      ],
      [120_000, { kind: 'injectEvent', detailType: 'Heartbeat Digest', detail: {} }],
    ]);
  });

  it('validates nothing in the detail but what names the node or pod', () => {
    const [action] = actionsOf([
      {
        at: '1m',
        injectEvent: {
          detailType: 'Node Changed',
          detail: { schemaVersion: 'two', cluster: 'other', node: { name: 'a-1', uid: 7, taints: 'none' } },
        },
      },
    ]);
    expect(action?.[1]).toMatchObject({ node: 'a-1', detail: { schemaVersion: 'two', cluster: 'other' } });
  });

  it('names the field of every mistake', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', injectEvent: { detailType: 'Node changed', detail: {} } },
          { at: '1m', injectEvent: { detail: {} } },
          { at: '1m', injectEvent: { detailType: 'Node Changed' } },
          { at: '1m', injectEvent: { detailType: 'Node Changed', detail: { node: {} } } },
          { at: '1m', injectEvent: { detailType: 'Node Changed', detail: { node: 'a-1' } } },
          { at: '1m', injectEvent: { detailType: 'Node Changed', detail: { node: { name: 'A_1' } } } },
          { at: '1m', injectEvent: { detailType: 'Node Changed', detail: { node: { name: 'a-9' } } } },
          { at: '1m', injectEvent: { detailType: 'Pod Changed', detail: { pod: { namespace: 'default' } } } },
          { at: '1m', injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'web-9' } } } },
          {
            at: '1m',
            injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'web-1', namespace: 'Kube' } } },
          },
          { at: '1m', injectEvent: { detailType: 'Heartbeat Digest', detail: [] } },
          { at: '1m', injectEvent: { detailType: 'Heartbeat Digest', source: 'x' } },
          { at: '1m', injectEvent: 'Heartbeat Digest' },
        ],
      }),
    ).toEqual([
      'timeline[0].injectEvent.detailType: expected "Node Changed", "Pod Changed" or "Heartbeat Digest", got "Node changed"',
      'timeline[1].injectEvent.detailType: missing: "Node Changed", "Pod Changed" or "Heartbeat Digest"',
      'timeline[2].injectEvent.detail.node.name: missing: the node the event is about, e.g. detail: {node: {name: a-1}}',
      'timeline[3].injectEvent.detail.node.name: missing: the node the event is about, e.g. "a-1"',
      'timeline[4].injectEvent.detail.node: expected an object with the node\'s name, e.g. {node: {name: a-1}}, got "a-1"',
      'timeline[5].injectEvent.detail.node.name: expected a node name (a DNS-1123 subdomain: lowercase letters, digits, "-" and "."), got "A_1"',
      'timeline[6].injectEvent.detail.node.name: no node "a-9"',
      'timeline[7].injectEvent.detail.pod.name: missing: the pod the event is about, e.g. "web-1"',
      'timeline[8].injectEvent.detail.pod.name: no pod "default/web-9"',
      'timeline[9].injectEvent.detail.pod.namespace: expected a namespace (a DNS-1123 label), got "Kube"',
      "timeline[10].injectEvent.detail: expected an object: the fields to set in the event's detail, got []",
      'timeline[11].injectEvent: unknown field "source"',
      'timeline[12].injectEvent: expected {detailType, detail}, got "Heartbeat Digest"',
    ]);
  });

  it('knows the nodes and pods the timeline makes and removes', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', addNode: { name: 'b-1' } },
          { at: '1m', addPod: { name: 'job-1', node: 'b-1' } },
          { at: '2m', injectEvent: { detailType: 'Node Changed', detail: { node: { name: 'b-1' } } } },
          { at: '2m', injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'job-1' } } } },
          { at: '3m', deleteNode: 'b-1' },
          { at: '3m', deletePod: 'job-1' },
          { at: '4m', injectEvent: { detailType: 'Node Changed', detail: { node: { name: 'b-1' } } } },
          { at: '4m', injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'job-1' } } } },
        ],
      }),
    ).toEqual([
      'timeline[6].injectEvent.detail.node.name: no node "b-1"',
      'timeline[7].injectEvent.detail.pod.name: no pod "default/job-1"',
    ]);
  });
});

describe('restoreApiServer', () => {
  it('reads how far back, 0 included', () => {
    expect(
      actionsOf([
        { at: '5m', restoreApiServer: '2m' },
        { at: '6m', restoreApiServer: 90 },
        { at: '7m', restoreApiServer: '7m' },
        { at: '8m', restoreApiServer: '0s' },
      ]),
    ).toEqual([
      [300_000, { kind: 'restoreApiServer', back: 120_000 }],
      [360_000, { kind: 'restoreApiServer', back: 90_000 }],
      [420_000, { kind: 'restoreApiServer', back: 420_000 }],
      [480_000, { kind: 'restoreApiServer', back: 0 }],
    ]);
  });

  it('names the field of every mistake; there is no state before the start', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', restoreApiServer: '1m1s' },
          { at: '1m', restoreApiServer: '-30s' },
          { at: '1m', restoreApiServer: null },
          { at: '1m', restoreApiServer: {} },
          { at: '1m', restoreApiServer: 'a while' },
        ],
      }),
    ).toEqual([
      'timeline[0].restoreApiServer: expected at most 1m (there is no state before the start), got "1m1s"',
      'timeline[1].restoreApiServer: expected a duration of 0 or more, got "-30s"',
      'timeline[2].restoreApiServer: expected a duration like "40s", "5m" or a number of seconds, got null',
      'timeline[3].restoreApiServer: expected a duration like "40s", "5m" or a number of seconds, got an object',
      'timeline[4].restoreApiServer: expected a duration like "40s", "5m" or a number of seconds, got "a while"',
    ]);
  });

  it('brings back the names of the instant it goes back to, for the actions after it', () => {
    expect(
      issuesOf({
        ...base,
        timeline: [
          { at: '1m', addNode: { name: 'b-1' } },
          { at: '2m', deleteNode: 'a-1' },
          { at: '2m', deletePod: 'web-1' },
          // Back to 1m, before its actions: b-1 never was; a-1 and web-1 are back.
          { at: '3m', restoreApiServer: '2m' },
          { at: '4m', cordon: 'a-1' },
          { at: '4m', injectEvent: { detailType: 'Pod Changed', detail: { pod: { name: 'web-1' } } } },
          { at: '4m', cordon: 'b-1' },
          { at: '4m', addNode: { name: 'b-1' } },
        ],
      }),
    ).toEqual(['timeline[6].cordon: no node "b-1"']);
  });
});
