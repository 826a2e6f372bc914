// What other workspaces' tests sign Permit2 payments with (`@facilitator/payment-mechanisms/testing`).
export { signPermit2 } from './permit2-signing';
