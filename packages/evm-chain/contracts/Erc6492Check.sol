// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice Never deployed: its creation code runs inside an eth_call. It deploys a counterfactual wallet
/// through its factory (in the simulation only), then asks the wallet about the signature exactly as
/// USDC's SignatureChecker will once the wallet exists: a staticcall of isValidSignature(bytes32,bytes)
/// whose answer must be at least 32 bytes, the first word holding the ERC-1271 magic value (USDC's test).
/// @dev The constructor "returns" one word: 1 accepted, 0 refused, 2 the factory call left no code at `signer`.
contract Erc6492Check {
    constructor(address signer, bytes32 digest, address factory, bytes memory factoryCalldata, bytes memory signature) {
        if (signer.code.length == 0) {
            // a failing factory call is not an answer in itself: the code check below decides
            (bool deployed, ) = factory.call(factoryCalldata);
            deployed;
        }
        uint256 verdict = 2;
        if (signer.code.length > 0) {
            (bool success, bytes memory result) = signer.staticcall(abi.encodeWithSelector(0x1626ba7e, digest, signature));
            verdict = success && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(bytes4(0x1626ba7e)) ? 1 : 0;
        }
        assembly {
            mstore(0, verdict)
            return(0, 32)
        }
    }
}
