import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { loadManifests, main, validateManifests } from '../../../scripts/validate-manifests.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('validateManifests', () => {
  it('reports unknown fields, wrong shapes, missing required fields, wrong apiVersion, scope and kind', async () => {
    const issues = validateManifests(await loadManifests([fixture('bad-manifests.yaml')]));
    const lines = issues.map(
      (issue) => `${issue.path.replace(/^.*bad-manifests\.yaml/, '')}: ${issue.message}`,
    );
    expect(lines).toEqual([
      '#0 Deployment/broken: Deployment.spec.replicas: expected a number, got string "two"',
      '#0 Deployment/broken: Deployment.spec.template.spec.containers[0].name: missing required field (V1Container)',
      '#0 Deployment/broken: Deployment.spec.template.spec.containers[0].readinesProbe: unknown field readinesProbe of V1Container',
      '#0 Deployment/broken: Deployment.spec.template.spec.containers[0].env: expected a list, got a map',
      '#1 ClusterRole/broken: metadata.namespace: ClusterRole is cluster-scoped',
      '#1 ClusterRole/broken: ClusterRole.rules[0].verbs: missing required field (V1PolicyRule)',
      '#2 PodDisruptionBudget/broken: apiVersion: PodDisruptionBudget is policy/v1, not policy/v1beta1',
      '#2 PodDisruptionBudget/broken: metadata.namespace: PodDisruptionBudget is namespaced: name its namespace',
      '#3 Pod/not-here: kind Pod is not one infra/ may hold',
    ]);
  });

  it('reports RBAC that is schema-valid but grants less than it says', async () => {
    const issues = validateManifests(await loadManifests([fixture('bad-rbac.yaml')]));
    expect(issues.map((issue) => `${issue.path.replace(/^.*bad-rbac\.yaml/, '')}: ${issue.message}`)).toEqual(
      [
        '#0 Role/leader: Role.rules[0].verbs: create requests name no object, so resourceNames never allow them: give create a rule without resourceNames',
        '#1 RoleBinding/leader: RoleBinding.roleRef: no Role leader in namespace team-b: a RoleBinding grants only a Role of its own namespace',
      ],
    );
  });

  it('reports a document without kind or name', () => {
    const issues = validateManifests([
      { file: 'x.yaml', index: 0, object: { apiVersion: 'v1', metadata: {} } },
    ]);
    expect(issues.map((i) => i.path)).toEqual(['x.yaml#0: kind', 'x.yaml#0: metadata.name']);
  });

  it('CLI: exit 1 on issues, 2 without input or on unreadable input', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main([fixture('bad-manifests.yaml')])).toBe(1);
      expect(await main([])).toBe(2);
      expect(await main([fixture('missing.yaml')])).toBe(2);
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  });
});
