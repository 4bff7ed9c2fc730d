import { describe, expect, it } from 'vitest';
import {
  updatePodCondition,
  type PodConditionJson,
} from '../../../../shared/adapters/kubernetes/podConditions.js';

const now = Date.parse('2024-05-01T10:00:00.750Z');
const earlier = '2024-05-01T09:00:00Z';

describe('updatePodCondition (upstream UpdatePodCondition)', () => {
  it.each<{
    name: string;
    before: PodConditionJson[];
    set: PodConditionJson;
    after: PodConditionJson[];
    changed: boolean;
  }>([
    {
      name: 'a new condition type is appended with lastTransitionTime now (whole seconds)',
      before: [{ type: 'Ready', status: 'True', lastTransitionTime: earlier }],
      set: { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'm' },
      after: [
        { type: 'Ready', status: 'True', lastTransitionTime: earlier },
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByTaintManager',
          message: 'm',
          lastTransitionTime: '2024-05-01T10:00:00Z',
        },
      ],
      changed: true,
    },
    {
      name: 'a status change stamps lastTransitionTime and keeps reason/message as given',
      before: [{ type: 'Ready', status: 'True', reason: 'r', lastTransitionTime: earlier }],
      set: { type: 'Ready', status: 'False', reason: 'r' },
      after: [{ type: 'Ready', status: 'False', reason: 'r', lastTransitionTime: '2024-05-01T10:00:00Z' }],
      changed: true,
    },
    {
      name: 'the same status keeps the old lastTransitionTime and reports no change',
      before: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(earlier) }],
      set: { type: 'Ready', status: 'False' },
      after: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(earlier) }],
      changed: false,
    },
    {
      name: 'the same status with another message is a change, without a new transition time',
      before: [{ type: 'DisruptionTarget', status: 'True', message: 'old', lastTransitionTime: earlier }],
      set: { type: 'DisruptionTarget', status: 'True', message: 'new' },
      after: [{ type: 'DisruptionTarget', status: 'True', message: 'new', lastTransitionTime: earlier }],
      changed: true,
    },
  ])('$name', ({ before, set, after, changed }) => {
    const result = updatePodCondition(before, set, now);
    expect(result).toEqual({ conditions: after, changed });
    // Idempotent: setting it again changes nothing.
    expect(updatePodCondition(result.conditions, set, now + 60_000).changed).toBe(false);
  });
});
