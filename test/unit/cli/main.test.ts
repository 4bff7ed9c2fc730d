// cli/main.ts loads only the command being run. The summaries `nlc --help` lists are each command's own
// description; the built CLI's entry and `nlc config` load neither the AWS SDK nor the Kubernetes
// client (read from the build's metafile, test/globalSetup.ts keeps the build current).
import { readFileSync } from 'node:fs';
import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { COMMANDS, invokedCommand, relaunchArgs } from '../../../cli/main.js';
import type { CliIo, CommandContext } from '../../../shared/present/output.js';
import { CliMetafile } from '../../../scripts/build-cli.js';

const io: CliIo = {
  stdout: { write: () => true },
  stderr: { write: () => true },
  env: {},
  clock: { now: () => 0 },
};

describe('COMMANDS', () => {
  it.each(Object.entries(COMMANDS))(
    '%s: the summary is the command’s own description',
    async (name, entry) => {
      const ctx: CommandContext = { io, exitCode: 0 };
      const command = (await entry.load())(ctx);
      expect(command.name()).toBe(name);
      expect(command.description()).toBe(entry.summary);
    },
  );
});

describe('invokedCommand', () => {
  it('is the first operand, or the one after help', () => {
    expect(invokedCommand(['--verbose', 'status', '-o', 'json'])).toBe('status');
    expect(invokedCommand(['help', 'queue'])).toBe('queue');
    expect(invokedCommand(['explain', 'start'])).toBe('explain');
    expect(invokedCommand(['--help'])).toBeUndefined();
    expect(invokedCommand(['stauts'])).toBeUndefined();
    expect(invokedCommand([])).toBeUndefined();
  });
});

describe('the built CLI', () => {
  const meta = JSON.parse(readFileSync(CliMetafile, 'utf8')) as Metafile;
  const outputs = meta.outputs;
  const outputOf = (entry: string): string => {
    const found = Object.entries(outputs).find(([, o]) => o.entryPoint === entry);
    if (found === undefined) throw new Error(`no output for ${entry}`);
    return found[0];
  };
  /** Every input loaded when `output` loads (static imports, transitively). */
  const loadedBy = (output: string): Set<string> => {
    const seen = new Set<string>();
    const inputs = new Set<string>();
    const visit = (path: string): void => {
      if (seen.has(path)) return;
      seen.add(path);
      const out = outputs[path];
      if (out === undefined) return;
      for (const input of Object.keys(out.inputs)) inputs.add(input);
      for (const imported of out.imports) if (imported.kind === 'import-statement') visit(imported.path);
    };
    visit(output);
    return inputs;
  };
  const heavy = (inputs: Set<string>): string[] => [
    ...new Set(
      [...inputs].flatMap(
        (input) => /node_modules\/(@aws-sdk\/[^/]+|@kubernetes\/[^/]+|osls|@smithy)/.exec(input)?.[1] ?? [],
      ),
    ),
  ];
  const chunkImporting = (source: string): string => {
    const found = Object.entries(outputs).find(([, o]) => Object.hasOwn(o.inputs, source));
    if (found === undefined) throw new Error(`no output holds ${source}`);
    return found[0];
  };

  it('starts (`nlc --help`) without the AWS SDK or the Kubernetes client', () => {
    expect(heavy(loadedBy(outputOf('cli/main.ts')))).toEqual([]);
  });

  it('runs `nlc config` and `nlc status --help` without them', () => {
    expect(heavy(loadedBy(chunkImporting('cli/commands/config.ts')))).toEqual([]);
    expect(heavy(loadedBy(chunkImporting('cli/commands/status.ts')))).toEqual([]);
  });

  it('loads the DynamoDB client only when `nlc status` reads the tables', () => {
    expect(heavy(loadedBy(chunkImporting('cli/storeClient.ts')))).toContain('@aws-sdk/client-dynamodb');
  });

  it('reads YAML only for `-o yaml` and serverless.yml (shared/present/yaml.ts), never at the start of `nlc status`', () => {
    const status = loadedBy(chunkImporting('cli/storeClient.ts'));
    const yaml = (inputs: Set<string>): string[] =>
      [...inputs].filter((i) => i.includes('node_modules/yaml/'));
    expect(yaml(status)).toEqual([]);
    expect(yaml(loadedBy(chunkImporting('cli/commands/config.ts')))).toEqual([]);
    expect(yaml(loadedBy(chunkImporting('shared/present/yaml.ts')))).not.toEqual([]);
  });

  it("bundles zod without its 50 languages' messages, and the DynamoDB client without unused commands", () => {
    const all = new Set(Object.values(outputs).flatMap((o) => Object.keys(o.inputs)));
    const zod = [...all].filter((i) => i.includes('node_modules/zod/'));
    expect(zod.some((i) => i.endsWith('/v4/classic/schemas.js'))).toBe(true);
    expect(zod.filter((i) => i.includes('/locales/'))).toEqual([
      expect.stringMatching(/node_modules\/zod\/v4\/locales\/en\.js$/),
    ]);
    // The ES module build (one module per command) rather than the whole CommonJS one.
    const dynamodb = [...all].filter((i) => i.includes('node_modules/@aws-sdk/client-dynamodb/'));
    expect(dynamodb.some((i) => i.includes('/dist-cjs/'))).toBe(false);
    expect(dynamodb.some((i) => i.endsWith('/commands/QueryCommand.js'))).toBe(true);
    expect(dynamodb.some((i) => i.endsWith('/commands/RestoreTableToPointInTimeCommand.js'))).toBe(false);
  });

  it('loads the AWS credential chain only when a client needs credentials (cli/lazyCredentials.ts)', () => {
    const withClient = loadedBy(chunkImporting('cli/storeClient.ts'));
    expect(withClient.has('cli/lazyCredentials.ts')).toBe(true);
    expect(heavy(withClient)).not.toContain('@aws-sdk/credential-provider-node');
    expect(heavy(loadedBy(chunkImporting('cli/credentialChain.ts')))).toContain(
      '@aws-sdk/credential-provider-node',
    );
  });
});

describe('relaunchArgs (nlc simulate runs again with a heap sized for the scenario)', () => {
  const argv = ['/usr/bin/node', '/repo/cli/bin.mjs', 'simulate', '--json', 'x.yaml'];

  it('runs the same script and arguments with the options first and the current Node options kept', () => {
    expect(
      relaunchArgs(['--max-old-space-size=900'], {
        execArgv: ['--enable-source-maps'],
        nodeOptions: '',
        argv,
      }),
    ).toEqual([
      '--max-old-space-size=900',
      '--enable-source-maps',
      '/repo/cli/bin.mjs',
      'simulate',
      '--json',
      'x.yaml',
    ]);
  });

  it('keeps a heap limit the user gave, on the command line or in NODE_OPTIONS: nothing to run again', () => {
    const limit = ['--max-old-space-size=900'];
    expect(
      relaunchArgs(limit, { execArgv: ['--max-old-space-size=4000'], nodeOptions: '', argv }),
    ).toBeUndefined();
    expect(
      relaunchArgs(limit, { execArgv: [], nodeOptions: '--trace-warnings  --max-old-space-size=300', argv }),
    ).toBeUndefined();
  });

  it('adds only the options the user did not give', () => {
    const options = ['--max-old-space-size=900', '--max-semi-space-size=64'];
    expect(relaunchArgs(options, { execArgv: [], nodeOptions: '--max-old-space-size=2000', argv })).toEqual([
      '--max-semi-space-size=64',
      '/repo/cli/bin.mjs',
      'simulate',
      '--json',
      'x.yaml',
    ]);
  });

  it('needs a script to run', () => {
    expect(
      relaunchArgs(['--max-old-space-size=900'], { execArgv: [], nodeOptions: '', argv: ['/usr/bin/node'] }),
    ).toBeUndefined();
  });
});
