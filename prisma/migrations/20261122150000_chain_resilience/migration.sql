-- Smart-wallet payers (issue 15, docs/decisions.md).
-- An ERC-6492 payer's wallet is deployed through its factory before the fee and the transfer.
ALTER TYPE "SettlementState" ADD VALUE IF NOT EXISTS 'deploying_wallet' AFTER 'pending';
