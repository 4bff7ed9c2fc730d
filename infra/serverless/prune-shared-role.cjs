// osls plugin: with serverless-iam-roles-per-function every function gets its own role, but the
// framework's shared IamRoleLambdaExecution stays in the template, unused, with log permissions on every
// function's log group. This drops it when nothing references it any more, so the stack holds exactly one
// role per function. Listed after serverless-iam-roles-per-function: hooks on the same event run in
// plugin order.
'use strict';

const SHARED_ROLE = 'IamRoleLambdaExecution';

function references(value, logicalId) {
  if (Array.isArray(value)) return value.some((item) => references(item, logicalId));
  if (value === null || typeof value !== 'object') return false;
  if (value.Ref === logicalId) return true;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt[0] === logicalId) return true;
  if (
    value.DependsOn === logicalId ||
    (Array.isArray(value.DependsOn) && value.DependsOn.includes(logicalId))
  ) {
    return true;
  }
  return Object.values(value).some((item) => references(item, logicalId));
}

class PruneSharedRole {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'before:package:finalize': () => this.prune() };
  }

  prune() {
    const { Resources } = this.serverless.service.provider.compiledCloudFormationTemplate;
    if (!(SHARED_ROLE in Resources)) return;
    const others = Object.entries(Resources).filter(([id]) => id !== SHARED_ROLE);
    if (others.some(([, resource]) => references(resource, SHARED_ROLE))) return;
    delete Resources.IamRoleLambdaExecution;
  }
}

module.exports = PruneSharedRole;
