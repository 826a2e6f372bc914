export { OpenZeppelinRelayerProvider } from './openzeppelin-relayer-provider';
export { resolveRelayerBindings, type RelayerBinding } from './relayer-bindings';
export { OpenZeppelinRelayerClient } from './api/relayer-api-client';
