// `@facilitator/relayer-openzeppelin/testing`: a local OpenZeppelin Relayer for tests. Never imported by production
// code (scripts/check-packages.ts).
export {
  startOpenZeppelinRelayerServer,
  type LocalRelayerFaults,
  type LocalRelayerServer,
  type LocalRelayerServerOptions,
  type LocalRelayerWebhookDelivery,
} from './local-relayer-server';
export type { LocalRelayerTransaction } from './local-relayer';
