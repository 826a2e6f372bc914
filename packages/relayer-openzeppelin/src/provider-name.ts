/** chain_transactions.provider of the rows this package sends (and TRANSACTION_PROVIDER's value for it). */
export const OPENZEPPELIN_RELAYER_PROVIDER = 'openzeppelin-relayer';
