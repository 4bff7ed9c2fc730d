// osls variable resolver for NLC_DRY_RUN: `${file(./infra/serverless/mode.cjs)}`. Whether the functions
// write to the cluster is decided once, at package time, from the stage parameters:
//
//   mode=active    write (dryRun must not be true)
//   mode=shadow    never write: record every decision only (dryRun must not be false)
//   mode unset     dryRun if it is set; otherwise shadow against EKS, active elsewhere
//
// Why EKS defaults to shadow: a managed control plane runs its own NodeLifecycleController, which no one
// can switch off. Deploying this one active beside it makes two controllers taint and evict the same
// nodes; shadow mode records what this one would do, for `nlc agreement` to compare, until the operator
// asks for `mode=active` (docs/deploy.md, "Managed control planes").
'use strict';

const MODES = ['', 'shadow', 'active'];
const BOOLEANS = ['', 'true', 'false'];

/**
 * The NLC_DRY_RUN value for the given stage parameters (strings as osls resolves them), or an Error
 * naming the parameter at fault.
 */
function dryRunFor({ mode, dryRun, eksClusterName }) {
  const m = String(mode ?? '').trim();
  const d = String(dryRun ?? '')
    .trim()
    .toLowerCase();
  if (!MODES.includes(m)) {
    return new Error(`param mode: expected "shadow" or "active" (or nothing), got "${m}"`);
  }
  if (!BOOLEANS.includes(d)) return new Error(`param dryRun: expected "true" or "false", got "${d}"`);
  if (m === 'active' && d === 'true') {
    return new Error(
      'params mode=active and dryRun=true disagree: drop one (mode=active writes to the cluster)',
    );
  }
  if (m === 'shadow' && d === 'false') {
    return new Error('params mode=shadow and dryRun=false disagree: drop one (mode=shadow never writes)');
  }
  if (m === 'active') return 'false';
  if (m === 'shadow') return 'true';
  if (d !== '') return d;
  return String(eksClusterName ?? '').trim() === '' ? 'false' : 'true';
}

module.exports = async ({ resolveVariable }) => {
  const [mode, dryRun, eksClusterName] = await Promise.all([
    resolveVariable('param:mode'),
    resolveVariable('param:dryRun'),
    resolveVariable('param:eksClusterName'),
  ]);
  const result = dryRunFor({ mode, dryRun, eksClusterName });
  if (result instanceof Error) {
    // osls prints a resolver's error with its stack: the message is the whole story.
    result.stack = `Error: ${result.message}`;
    throw result;
  }
  return result;
};
module.exports.dryRunFor = dryRunFor;
