// A worker of `npm run chaos` (scripts/chaos.ts): runs the scenarios it is sent, one at a time, in
// process, and answers each with the run's final state (or why it failed). It ends when its parent
// disconnects.
import { readFile } from 'node:fs/promises';
import { parseScenarioDocument } from '../local/simulate/scenario.js';
import { runSimulation } from '../local/simulate/simulation.js';
import { finalStateOf, type Task, type TaskAnswer } from './chaos.js';

async function run(task: Task): Promise<TaskAnswer> {
  try {
    const scenario = parseScenarioDocument(await readFile(task.file, 'utf8'), task.file);
    const result = await runSimulation(scenario, {
      ...(task.chaos !== undefined && { chaos: task.chaos }),
      ...(task.quietDigests === true && { relayQuietDigestPeriod: 'asDeployed' as const }),
    });
    return { id: task.id, state: finalStateOf(result.lines) };
  } catch (error) {
    return { id: task.id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

process.on('message', (task: Task) => {
  void run(task).then((answer) => {
    process.send?.(answer);
  });
});
process.on('disconnect', () => {
  process.exit(0);
});
