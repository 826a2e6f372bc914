// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IFiatToken {
    function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes memory signature) external;
}

/// Test contract: runs several signed EIP-3009 authorizations in one transaction, as an attacker's
/// multicall would (using one payment's nonce to pay someone else, and paying the merchant by another).
contract AuthorizationMulticall {
    struct Authorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        bytes signature;
    }

    function run(IFiatToken token, Authorization[] calldata authorizations) external {
        for (uint256 i = 0; i < authorizations.length; i++) {
            Authorization calldata a = authorizations[i];
            token.transferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.signature);
        }
    }
}
