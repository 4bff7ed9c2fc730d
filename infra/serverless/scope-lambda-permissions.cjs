// osls plugin: osls gives each eventBridge event an AWS::Lambda::Permission for events.amazonaws.com
// with the rule's ARN as SourceArn. This adds SourceAccount (the stack's account) to every permission
// granted to an AWS service, and fails the package when one has no SourceArn: a service permission
// without its source lets any resource of that service, in any account, invoke the function.
// scripts/validate-template.ts checkTemplatePolicies and the package test check the result.
'use strict';

class ScopeLambdaPermissions {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'before:package:finalize': () => this.scope() };
  }

  scope() {
    const { Resources } = this.serverless.service.provider.compiledCloudFormationTemplate;
    for (const [id, resource] of Object.entries(Resources)) {
      if (resource.Type !== 'AWS::Lambda::Permission') continue;
      const properties = resource.Properties;
      const principal = properties.Principal;
      if (typeof principal !== 'string' || !principal.endsWith('.amazonaws.com')) continue;
      if (properties.SourceArn === undefined) {
        throw new Error(
          `${id}: a permission for ${principal} without SourceArn; name the resource that invokes`,
        );
      }
      properties.SourceAccount ??= { Ref: 'AWS::AccountId' };
    }
  }
}

module.exports = ScopeLambdaPermissions;
