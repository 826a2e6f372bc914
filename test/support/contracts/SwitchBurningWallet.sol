// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// A contract wallet that accepts any signature while its owner has not switched it, and afterwards burns
/// all the gas it is given and refuses: it passes verification and every pre-flight, then sinks on chain
/// whatever transaction carries its payment.
contract SwitchBurningWallet {
    bool public burning;

    function setBurning(bool burning_) external {
        burning = burning_;
    }

    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        if (!burning) return bytes4(0x1626ba7e);
        while (gasleft() > 2_000) {}
        return bytes4(0);
    }
}
