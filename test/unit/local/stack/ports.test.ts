// The local stack's ports: a taken port is reported by name before anything starts; 0 picks free ports.
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AnyPorts,
  DefaultPorts,
  PortInfo,
  PortNames,
  PortsInUseError,
  reservePorts,
  type StackPorts,
} from '../../../../local/stack/ports.js';
import { PortInUseError } from '../../../../shared/errors.js';

const allZero: StackPorts = AnyPorts;
const servers: Server[] = [];

async function occupy(): Promise<number> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('reservePorts', () => {
  it("never picks a port of `avoid` (a second controller after the first one's ports were chosen)", async () => {
    const first = await reservePorts(allZero, ['eventBridge', 'eventBridgePubSub', 'lambda']);
    const avoid = PortNames.map((name) => first[name]).filter((p) => p > 0);
    for (let i = 0; i < 20; i++) {
      const second = await reservePorts(allZero, ['eventBridge', 'eventBridgePubSub', 'lambda'], [], avoid);
      for (const port of [second.eventBridge, second.eventBridgePubSub, second.lambda]) {
        expect(avoid).not.toContain(port);
      }
    }
    // A fixed port among them is another part's: refused by name.
    const fixed = avoid[0] ?? 0;
    await expect(reservePorts({ ...allZero, lambda: fixed }, [], [], avoid)).rejects.toThrow(
      /also given to another part/,
    );
  });

  it('picks a distinct free port for each 0 it is asked to pick, and leaves the others 0', async () => {
    const ports = await reservePorts(allZero, ['dynamodb', 'eventBridge', 'eventBridgePubSub', 'lambda']);
    const picked = [ports.dynamodb, ports.eventBridge, ports.eventBridgePubSub, ports.lambda];
    expect(picked.every((p) => p > 0)).toBe(true);
    expect(new Set(picked).size).toBe(4);
    expect(ports.apiServer).toBe(0);
    expect(ports.relay).toBe(0);
  });

  it('keeps a free fixed port as given', async () => {
    const free = await occupy();
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const ports = await reservePorts({ ...allZero, relay: free }, []);
    expect(ports.relay).toBe(free);
  });

  it('names the taken port, what wanted it and the flag that moves it', async () => {
    const taken = await occupy();
    const error: unknown = await reservePorts({ ...allZero, dynamodb: taken }, []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortInUseError);
    expect((error as PortInUseError).message).toBe(
      `port ${taken} (the DynamoDB-compatible server) on 127.0.0.1 is already in use: stop what holds it, or choose another port with --port-dynamodb <port> (0 picks a free one)`,
    );
  });

  it('names every taken port at once (a second stack while one runs)', async () => {
    const [db, lambda] = [await occupy(), await occupy()];
    const error: unknown = await reservePorts({ ...allZero, dynamodb: db, lambda }, []).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PortsInUseError);
    expect((error as PortsInUseError).message).toBe(
      [
        '2 ports on 127.0.0.1 are already in use (another local stack?): stop what holds them, or choose other ports (0 picks a free one):',
        `- port ${db} (the DynamoDB-compatible server): --port-dynamodb <port>`,
        `- port ${lambda} (serverless-offline's Lambda endpoint): --port-lambda <port>`,
      ].join('\n'),
    );
  });

  it('refuses one port given to two parts', async () => {
    const free = await occupy();
    await new Promise((resolve) => servers.pop()?.close(resolve));
    await expect(reservePorts({ ...allZero, lambda: free, relay: free }, [])).rejects.toThrow(/--port-relay/);
  });

  it('does not check the ports it is told to skip (the simulator with a real cluster)', async () => {
    const taken = await occupy();
    await expect(reservePorts({ ...allZero, apiServer: taken }, [], ['apiServer'])).resolves.toMatchObject({
      apiServer: taken,
    });
  });

  it('documents every port with a purpose, a flag and a default', () => {
    for (const name of PortNames) {
      expect(PortInfo[name].flag).toMatch(/^--port-[a-z-]+$/);
      expect(DefaultPorts[name]).toBeGreaterThan(1023);
    }
    expect(new Set(Object.values(DefaultPorts)).size).toBe(PortNames.length);
  });
});
