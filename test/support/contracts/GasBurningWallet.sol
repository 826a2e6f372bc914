// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// A contract wallet whose ERC-1271 check accepts any signature after burning `rounds` loop iterations:
/// a payer that would make whoever submits its transfer pay for all that gas.
contract GasBurningWallet {
    uint256 public immutable rounds;

    constructor(uint256 rounds_) {
        rounds = rounds_;
    }

    function isValidSignature(bytes32 hash, bytes calldata) external view returns (bytes4) {
        uint256 x = uint256(hash);
        for (uint256 i = 0; i < rounds; i++) {
            x = uint256(keccak256(abi.encode(x, i)));
        }
        return x == 0 ? bytes4(0) : bytes4(0x1626ba7e);
    }
}
