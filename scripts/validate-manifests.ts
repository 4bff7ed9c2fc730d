// Offline schema check of the Kubernetes manifests under infra/: every field is checked against the
// API types that @kubernetes/client-node generates from the Kubernetes OpenAPI (the attribute maps of
// V1Deployment, V1PolicyRule, ...): unknown fields (a typo such as `readinesProbe`), the wrong shape (a
// map where a list belongs), a wrong apiVersion for the kind, and the required fields the OpenAPI marks.
// Why not `kubectl apply --dry-run`: client dry-run validates nothing without a server's OpenAPI, the
// local API simulator serves only the kinds the controller uses (no Deployments or RBAC), and kubectl
// is not part of the project's toolchain.
//
// CLI: npx tsx scripts/validate-manifests.ts infra/relay infra/cluster-access [file.yaml ...]
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { z } from 'zod';

export interface ManifestIssue {
  /** `<file>#<document index> <Kind>/<name>: <dotted path>` */
  readonly path: string;
  readonly message: string;
}

export interface LoadedManifest {
  readonly file: string;
  readonly index: number;
  readonly object: Readonly<Record<string, unknown>>;
}

/** The kinds infra/ may hold, with their apiVersion. Anything else is reported. */
const KINDS: Readonly<Record<string, string>> = {
  Namespace: 'v1',
  ServiceAccount: 'v1',
  ConfigMap: 'v1',
  Secret: 'v1',
  Service: 'v1',
  Deployment: 'apps/v1',
  PodDisruptionBudget: 'policy/v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
};

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

/**
 * Fields the Kubernetes OpenAPI marks required, for the types the manifests use (the generated
 * attribute maps do not carry required-ness).
 */
const REQUIRED: Readonly<Record<string, readonly string[]>> = {
  V1DeploymentSpec: ['selector', 'template'],
  V1Container: ['name'],
  V1ContainerPort: ['containerPort'],
  V1EnvVar: ['name'],
  V1ObjectFieldSelector: ['fieldPath'],
  V1Volume: ['name'],
  V1VolumeMount: ['name', 'mountPath'],
  V1HTTPGetAction: ['port'],
  V1TopologySpreadConstraint: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'],
  V1LabelSelectorRequirement: ['key', 'operator'],
  V1ServicePort: ['port'],
  V1PolicyRule: ['verbs'],
  V1RoleRef: ['apiGroup', 'kind', 'name'],
  V1ClusterRoleBinding: ['roleRef'],
  V1RoleBinding: ['roleRef'],
  RbacV1Subject: ['kind', 'name'],
  V1SeccompProfile: ['type'],
};

interface Attribute {
  readonly baseName: string;
  readonly type: string;
}

const KindedObject = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
});

function attributesOf(model: string): readonly Attribute[] | undefined {
  const candidate = (k8s as Readonly<Record<string, unknown>>)[model];
  if (typeof candidate !== 'function' || !('getAttributeTypeMap' in candidate)) return undefined;
  const getMap = candidate.getAttributeTypeMap;
  return typeof getMap === 'function' ? (getMap.call(candidate) as readonly Attribute[]) : undefined;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'a map' : `${typeof value} ${JSON.stringify(value)}`;
}

/** Issues of one value against one generated type name ('string', 'Array<V1EnvVar>', 'V1Probe', ...). */
function checkValue(value: unknown, type: string, path: string): ManifestIssue[] {
  const list = /^Array<(.+)>$/.exec(type);
  if (list !== null) {
    if (!Array.isArray(value)) return [{ path, message: `expected a list, got ${describe(value)}` }];
    return value.flatMap((item, i) => checkValue(item, list[1] ?? 'any', `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) {
    if (!isRecord(value)) return [{ path, message: `expected a map, got ${describe(value)}` }];
    return Object.entries(value).flatMap(([k, v]) => checkValue(v, map[1] ?? 'any', `${path}.${k}`));
  }
  switch (type) {
    case 'string':
    case 'Date':
      return typeof value === 'string'
        ? []
        : [{ path, message: `expected a string, got ${describe(value)}` }];
    case 'number':
      return typeof value === 'number'
        ? []
        : [{ path, message: `expected a number, got ${describe(value)}` }];
    case 'boolean':
      return typeof value === 'boolean'
        ? []
        : [{ path, message: `expected true or false, got ${describe(value)}` }];
    case 'IntOrString':
      return typeof value === 'string' || typeof value === 'number'
        ? []
        : [{ path, message: `expected a number or a string, got ${describe(value)}` }];
    case 'any':
    case 'object':
      return [];
  }
  const attributes = attributesOf(type);
  if (attributes === undefined) return [{ path, message: `no schema for type ${type}` }];
  if (!isRecord(value)) return [{ path, message: `expected a map (${type}), got ${describe(value)}` }];
  const byName = new Map(attributes.map((a) => [a.baseName, a.type]));
  const issues: ManifestIssue[] = [];
  for (const field of REQUIRED[type] ?? []) {
    if (!(field in value))
      issues.push({ path: `${path}.${field}`, message: `missing required field (${type})` });
  }
  for (const [field, child] of Object.entries(value)) {
    const childType = byName.get(field);
    if (childType === undefined) {
      issues.push({ path: `${path}.${field}`, message: `unknown field ${field} of ${type}` });
    } else {
      issues.push(...checkValue(child, childType, `${path}.${field}`));
    }
  }
  return issues;
}

/**
 * Validates manifests (parsed YAML documents) against the Kubernetes API types.
 *
 * @example
 * const issues = validateManifests(await loadManifests(['infra/relay']));
 */
export function validateManifests(manifests: readonly LoadedManifest[]): ManifestIssue[] {
  return [...manifests.flatMap(validateManifest), ...checkRbac(manifests)];
}

function validateManifest({ file, index, object }: LoadedManifest): ManifestIssue[] {
  const where = `${file}#${index}`;
  const head = KindedObject.safeParse(object);
  if (!head.success) {
    return head.error.issues.map((issue) => ({
      path: `${where}: ${issue.path.map(String).join('.')}`,
      message: issue.message,
    }));
  }
  const { kind, apiVersion, metadata } = head.data;
  const label = `${where} ${kind}/${metadata.name}`;
  const expected = KINDS[kind];
  if (expected === undefined) return [{ path: label, message: `kind ${kind} is not one infra/ may hold` }];
  const issues: ManifestIssue[] = [];
  if (apiVersion !== expected) {
    issues.push({ path: `${label}: apiVersion`, message: `${kind} is ${expected}, not ${apiVersion}` });
  }
  if (CLUSTER_SCOPED.has(kind) && metadata.namespace !== undefined) {
    issues.push({ path: `${label}: metadata.namespace`, message: `${kind} is cluster-scoped` });
  }
  if (!CLUSTER_SCOPED.has(kind) && metadata.namespace === undefined) {
    issues.push({
      path: `${label}: metadata.namespace`,
      message: `${kind} is namespaced: name its namespace`,
    });
  }
  // The schema of the right version, also when the manifest names a wrong one (reported above).
  const model = `${expected.split('/').at(-1)?.replace(/^v/, 'V') ?? ''}${kind}`;
  return [
    ...issues,
    ...checkValue(object, model, kind).map((issue) => ({
      path: `${label}: ${issue.path}`,
      message: issue.message,
    })),
  ];
}

const RbacRule = z.looseObject({
  verbs: z.array(z.string()).optional(),
  resourceNames: z.array(z.string()).optional(),
});
const RbacObject = z.looseObject({
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
  rules: z.array(RbacRule).optional(),
  roleRef: z.looseObject({ kind: z.string(), name: z.string() }).optional(),
});

/** Verbs whose requests carry no object name, so a rule with resourceNames never allows them. */
const UNNAMED_VERBS = new Set(['create', 'deletecollection']);

/**
 * What the API server accepts but never does what it says: a rule that restricts `create` (or
 * `deletecollection`) to resourceNames allows nothing, and a RoleBinding whose Role is not in its own
 * namespace grants nothing. Both fail only at run time, as a 403 (a relay that cannot create its Lease).
 */
function checkRbac(manifests: readonly LoadedManifest[]): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const objects = manifests.flatMap(({ file, index, object }) => {
    const parsed = RbacObject.safeParse(object);
    return parsed.success ? [{ where: `${file}#${index}`, object: parsed.data }] : [];
  });
  const roles = new Set(
    objects
      .filter(({ object }) => object.kind === 'Role')
      .map(({ object }) => `${object.metadata.namespace ?? ''}/${object.metadata.name}`),
  );
  for (const { where, object } of objects) {
    const label = `${where} ${object.kind}/${object.metadata.name}`;
    if (object.kind === 'Role' || object.kind === 'ClusterRole') {
      for (const [i, rule] of (object.rules ?? []).entries()) {
        if ((rule.resourceNames ?? []).length === 0) continue;
        for (const verb of rule.verbs ?? []) {
          if (UNNAMED_VERBS.has(verb)) {
            issues.push({
              path: `${label}: ${object.kind}.rules[${i}].verbs`,
              message: `${verb} requests name no object, so resourceNames never allow them: give ${verb} a rule without resourceNames`,
            });
          }
        }
      }
    }
    if (object.kind === 'RoleBinding' && object.roleRef?.kind === 'Role') {
      const namespace = object.metadata.namespace ?? '';
      if (!roles.has(`${namespace}/${object.roleRef.name}`)) {
        issues.push({
          path: `${label}: RoleBinding.roleRef`,
          message: `no Role ${object.roleRef.name} in namespace ${namespace}: a RoleBinding grants only a Role of its own namespace`,
        });
      }
    }
  }
  return issues;
}

/**
 * Loads manifests: a directory with a kustomization.yaml loads the files its `resources` list (as
 * `kubectl apply -k` would); a file loads all its YAML documents.
 */
export async function loadManifests(paths: readonly string[]): Promise<LoadedManifest[]> {
  const loaded: LoadedManifest[] = [];
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) {
      loaded.push(...(await loadManifests(await kustomizationResources(path))));
      continue;
    }
    const documents = parseAllDocuments(await readFile(path, 'utf8'));
    for (const [index, document] of documents.entries()) {
      if (document.errors.length > 0)
        throw new Error(`${path}#${index}: ${document.errors[0]?.message ?? ''}`);
      const object: unknown = document.toJS();
      if (object === null) continue; // an empty document (a trailing ---)
      loaded.push({ file: path, index, object: isRecord(object) ? object : { value: object } });
    }
  }
  return loaded;
}

const Kustomization = z.object({
  apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
  kind: z.literal('Kustomization'),
  resources: z.array(z.string()).min(1),
});

/** The files a directory's kustomization.yaml lists, as paths. */
export async function kustomizationResources(directory: string): Promise<string[]> {
  const file = join(directory, 'kustomization.yaml');
  const kustomization = Kustomization.parse(parseYaml(await readFile(file, 'utf8')));
  return kustomization.resources.map((resource) => join(dirname(file), resource));
}

/** CLI: prints one line per issue; exit 0 clean, 1 issues, 2 unreadable input. */
export async function main(paths: readonly string[]): Promise<number> {
  if (paths.length === 0) {
    console.error(
      'usage: tsx scripts/validate-manifests.ts <directory with kustomization.yaml | file.yaml>...',
    );
    return 2;
  }
  let manifests: LoadedManifest[];
  try {
    manifests = await loadManifests(paths);
  } catch (error) {
    console.error(`cannot load the manifests: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  const issues = validateManifests(manifests);
  for (const issue of issues) console.log(`${issue.path}: ${issue.message}`);
  if (issues.length === 0) console.log(`OK, ${manifests.length} objects checked`);
  return issues.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
