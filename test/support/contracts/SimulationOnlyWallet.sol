// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// A contract wallet whose ERC-1271 check says yes only where nobody pays for gas: geth-family nodes (and
/// anvil) run eth_call and eth_estimateGas without fee fields at gas price 0, so every simulation (verify,
/// pre-flight, the batch estimate) passes and every transaction on chain fails at its sender's expense.
/// `strict` (set by the attacker at will) makes it refuse everywhere, as a wallet whose owner flipped a flag.
contract SimulationOnlyWallet {
    bool public strict;

    function setStrict(bool value) external {
        strict = value;
    }

    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        return !strict && tx.gasprice == 0 ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
