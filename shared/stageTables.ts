// The table names serverless.yml gives a stage, read from serverless.yml itself so that a rename there is
// picked up by every reader: the CLI's commands and the local stack. The YAML library loads on use.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { TableNames } from './adapters/dynamodb/tables.js';

const SERVERLESS_YML = new URL('../serverless.yml', import.meta.url);

const TablesTemplateSchema = z.object({
  service: z.string().min(1),
  stageDefault: z.string().min(1),
  tables: z.object({
    nodes: z.string(),
    zones: z.string(),
    evictionQueue: z.string(),
    podEvictions: z.string(),
    decisions: z.string(),
  }),
});

/**
 * The table names serverless.yml gives a stage: its `custom.tables` with `${self:service}` and
 * `${sls:stage}` resolved (e.g. stage prod → nlc-prod-nodes, …).
 *
 * @example await stageTableNames('prod') // { nodes: 'nlc-prod-nodes', zones: 'nlc-prod-zones', … }
 */
export async function stageTableNames(stage: string | undefined): Promise<TableNames> {
  const { parseDocument } = await import('./present/yaml.js');
  const doc = parseDocument(await readFile(SERVERLESS_YML, 'utf8'), { logLevel: 'silent' });
  const provider: unknown = doc.getIn(['provider', 'stage']);
  const template = TablesTemplateSchema.parse({
    service: doc.get('service'),
    // `${opt:stage, 'dev'}`: the stage osls uses when none is given.
    stageDefault:
      /\$\{opt:stage,\s*'([^']+)'\}/.exec(typeof provider === 'string' ? provider : '')?.[1] ?? 'dev',
    tables: (doc.getIn(['custom', 'tables']) as { toJSON?: () => unknown } | undefined)?.toJSON?.(),
  });
  const resolve = (name: string): string =>
    name
      .replaceAll('${self:service}', template.service)
      .replaceAll('${sls:stage}', stage ?? template.stageDefault);
  const { nodes, zones, evictionQueue, podEvictions, decisions } = template.tables;
  return {
    nodes: resolve(nodes),
    zones: resolve(zones),
    evictionQueue: resolve(evictionQueue),
    podEvictions: resolve(podEvictions),
    decisions: resolve(decisions),
  };
}
