/** TypeScript shapes of the validated request bodies (kept beside the schemas they mirror). */
export interface AuthorizationBody {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

export interface ExactEvmPayloadBody {
  authorization: AuthorizationBody;
  signature: string;
}

export interface RequirementsBody {
  scheme: 'exact';
  price?: string;
  amount?: string;
  maxAmountRequired?: string;
  network: string;
  payTo: string;
  token?: string;
  asset?: string;
  [extra: string]: unknown;
}

export interface PaymentBody {
  x402Version: 2;
  scheme?: 'exact';
  network?: string;
  payload: ExactEvmPayloadBody;
  [extra: string]: unknown;
}

export interface FormARequest {
  payment: PaymentBody;
  requirements: RequirementsBody;
}

export interface FormBVerifyRequest {
  transaction_hash: string;
  chain: string;
  seller_address: string;
  expected_amount: string;
  expected_token: string;
  metadata: {
    source?: string;
    paymentPayload: { x402Version: 1; scheme: 'exact'; network: string; payload: ExactEvmPayloadBody };
    [extra: string]: unknown;
  };
  webhook_url?: string;
}

export interface FormBSettleRequest {
  verification_id: string;
  destination_address: string;
}
