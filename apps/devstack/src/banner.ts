/** What `npm run dev` prints once the stack is ready: where everything is, and how to use it. */
export interface BannerFacts {
  apiUrl: string;
  rpcUrl: string;
  chainId: number;
  token: string;
  /** Circle's USDC address for this chain in the network registry, when the chain is one it knows. */
  circleUsdc?: string;
  accounts: string[];
  workerMetricsUrl?: string;
  /** what the banner says when the worker's metrics are off */
  workerMetricsOff: string;
  admin: { username: string; password: string };
  devnetFile: string;
  services: string[];
}

/** The pages a newcomer opens in a browser; `/` lists them too. */
export const DEV_PAGES = [
  ['/docs', 'the API reference (OpenAPI)'],
  ['/status', 'the public status page'],
  ['/merchant', "the merchant page (sign in with the merchant's key)"],
  ['/admin/queues', 'Bull Board: every queue'],
] as const;

export function bannerLines(facts: BannerFacts): string[] {
  const { apiUrl } = facts;
  const atCircle = facts.circleUsdc !== undefined && facts.circleUsdc.toLowerCase() === facts.token.toLowerCase();
  return [
    '',
    '==== x402 facilitator dev stack is up ====',
    `API          ${apiUrl}   (ready: ${apiUrl}/readyz, index: ${apiUrl}/)`,
    `x402         facilitator URL for @x402/* and x402-* packages: ${apiUrl}/x402`,
    ...DEV_PAGES.map(([page, what]) => `page         ${apiUrl}${page}  ${what}`),
    `             (${apiUrl}/admin/queues: user ${facts.admin.username}, password ${facts.admin.password})`,
    `metrics      API ${apiUrl}/metrics (requests, queues); worker ${facts.workerMetricsUrl ?? facts.workerMetricsOff}${facts.workerMetricsUrl ? ' (fees, settlements)' : ''}`,
    `chain        ${facts.rpcUrl} (chain id ${facts.chainId}, network eip155:${facts.chainId})`,
    atCircle
      ? `USDC         ${facts.token}, Circle's Base Sepolia address (EIP-712 "USDC" version "2"): stock x402 code (price "$0.01" on eip155:${facts.chainId}, default spend controls) works unchanged`
      : `USDC         ${facts.token}`,
    ...facts.accounts,
    `devnet file  ${facts.devnetFile}  (accounts and keys; examples/, npm run demo and the CLI read it)`,
    ...facts.services,
  ];
}
