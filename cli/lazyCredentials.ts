// The AWS SDK's default credential chain, loaded when a client first needs credentials. In the `nlc`
// bundle the SDK clients import this module in place of @aws-sdk/credential-provider-node
// (scripts/build-cli.ts): the chain and the SSO, STS and instance-metadata clients behind it are a
// third of the DynamoDB client's load time, and `nlc status` next to a local stack signs with fixed
// credentials, so it never loads them. Against AWS the chain is loaded on the first request and
// behaves as the SDK's own (same provider, same init, memoized by the SDK as before).
import type { defaultProvider as DefaultProvider } from '@aws-sdk/credential-provider-node';

export const defaultProvider: typeof DefaultProvider = (init) => {
  let chain: ReturnType<typeof DefaultProvider> | undefined;
  return async (options) => {
    chain ??= (await import('./credentialChain.js')).defaultProvider(init);
    return chain(options);
  };
};
