// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// A contract wallet whose ERC-1271 check reads a flag its owner can flip at any time: it accepts every
/// signature while `refusing` is false, and none while it is true. Flipped on by a transaction placed
/// just ahead of ours and off again just after, it passes every simulation (verify, pre-flight, the batch
/// estimate, with or without fee fields) and fails on chain at the sender's expense.
contract FlippingWallet {
    bool public refusing;

    function setRefusing(bool value) external {
        refusing = value;
    }

    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        return refusing ? bytes4(0xffffffff) : bytes4(0x1626ba7e);
    }
}
