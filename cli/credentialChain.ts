// The AWS SDK's default credential chain, imported statically so that cli/lazyCredentials.ts can load it
// with a dynamic import of this module (a CommonJS package imported dynamically straight from a bundle
// would lose its named exports: scripts/build-cli.ts).
export { defaultProvider } from '@aws-sdk/credential-provider-node';
