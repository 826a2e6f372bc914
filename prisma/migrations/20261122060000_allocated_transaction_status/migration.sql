-- A chain transaction row exists from the moment its nonce is allocated; `allocated` says no version of it
-- is signed yet. The first signed version moves it to `signed` in the same statement that stores it, so
-- concurrent resumers agree on one first version without a lock held across round trips.
ALTER TYPE "ChainTransactionStatus" ADD VALUE IF NOT EXISTS 'allocated' BEFORE 'signed';
