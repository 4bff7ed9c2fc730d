import { describe, expect, it } from 'vitest';
import {
  LabelArch,
  LabelArchStable,
  LabelOS,
  LabelOSStable,
  labelReconcileInfo,
  reconcileNodeLabels,
} from '../../../shared/domain/nodeLabels.js';

/** What the adapter does with the result: AddOrUpdateLabelsOnNode merges it into the labels. */
function applyReconcile(labels: Readonly<Record<string, string>>): Record<string, string> {
  return { ...labels, ...reconcileNodeLabels({ labels }) };
}

describe('constants', () => {
  it('uses the upstream label keys verbatim', () => {
    expect([LabelOSStable, LabelArchStable, LabelOS, LabelArch]).toEqual([
      'kubernetes.io/os',
      'kubernetes.io/arch',
      'beta.kubernetes.io/os',
      'beta.kubernetes.io/arch',
    ]);
    expect(labelReconcileInfo).toEqual([
      { primaryKey: 'kubernetes.io/os', secondaryKey: 'beta.kubernetes.io/os', ensureSecondaryExists: true },
      {
        primaryKey: 'kubernetes.io/arch',
        secondaryKey: 'beta.kubernetes.io/arch',
        ensureSecondaryExists: true,
      },
    ]);
  });
});

interface Case {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

describe('TestReconcileNodeLabels', () => {
  // Upstream runs the cases in sequence, but each fakeNodeHandler.Update replaces node0's labels,
  // so the cases are independent.
  it.each<Case & { expectedLabels: Readonly<Record<string, string>> }>([
    {
      name: 'No-op if node has no labels',
      // Upstream: Labels nil, expected nil (0 labels). Our Node always has a record.
      labels: {},
      expectedLabels: {},
    },
    {
      name: 'No-op if no target labels present',
      labels: { 'topology.kubernetes.io/region': 'region1' },
      expectedLabels: { 'topology.kubernetes.io/region': 'region1' },
    },
    {
      name: "Create OS/arch beta labels when they don't exist",
      labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
      expectedLabels: {
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    {
      name: 'Reconcile OS/arch beta labels to match stable labels',
      labels: {
        'beta.kubernetes.io/os': 'windows',
        'beta.kubernetes.io/arch': 'arm',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
      expectedLabels: {
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
  ])('$name', ({ labels, expectedLabels }) => {
    expect(applyReconcile(labels)).toEqual(expectedLabels);
  });
});

describe('reconcileNodeLabels', () => {
  it.each<Case & { want: Readonly<Record<string, string>> | undefined }>([
    { name: 'no labels: no patch', labels: {}, want: undefined },
    {
      name: 'no target labels: no patch',
      labels: { 'topology.kubernetes.io/region': 'region1' },
      want: undefined,
    },
    {
      name: 'beta labels already in step: no patch',
      labels: { 'kubernetes.io/os': 'linux', 'beta.kubernetes.io/os': 'linux' },
      want: undefined,
    },
    {
      name: 'only the beta label present: ignored (the stable label is the source of truth)',
      labels: { 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'arm64' },
      want: undefined,
    },
    {
      name: 'creates only the missing beta label',
      labels: {
        'kubernetes.io/os': 'linux',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'arm64',
      },
      want: { 'beta.kubernetes.io/arch': 'arm64' },
    },
    {
      name: 'updates only the diverging beta label',
      labels: {
        'kubernetes.io/os': 'linux',
        'beta.kubernetes.io/os': 'windows',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/arch': 'amd64',
      },
      want: { 'beta.kubernetes.io/os': 'linux' },
    },
    {
      name: 'an empty stable value is copied too',
      labels: { 'kubernetes.io/os': '', 'beta.kubernetes.io/os': 'linux' },
      want: { 'beta.kubernetes.io/os': '' },
    },
  ])('$name', ({ labels, want }) => {
    const before = { ...labels };
    expect(reconcileNodeLabels({ labels })).toEqual(want);
    expect(labels).toEqual(before);
  });

  it('reads own labels only, never the prototype', () => {
    const labels = Object.create({ 'kubernetes.io/os': 'linux' }) as Record<string, string>;
    expect(reconcileNodeLabels({ labels })).toBeUndefined();
  });

  it('is idempotent once applied', () => {
    const once = applyReconcile({
      'kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'arm',
      'kubernetes.io/arch': 'amd64',
    });
    expect(reconcileNodeLabels({ labels: once })).toBeUndefined();
  });
});
