// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.20;

/// A payer wallet that accepts any signature only where nobody pays for gas: in a simulation a node runs
/// without fee fields (geth-family nodes then use tx.gasprice 0). Mined, it refuses, and the transfer reverts
/// at the expense of whoever sent it.
contract SimulationOnlyWallet {
    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        return tx.gasprice == 0 ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

/// A wallet whose ERC-1271 answer is as large as the gas it is given allows (about 70% of it spent on memory):
/// whoever copies the answer (the ERC-6492 check contract does) then runs out of gas, so the check reverts.
contract ReturnBombWallet {
    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        uint256 budget = (gasleft() * 7) / 10;
        // memory of w words costs 3w + w*w/512 gas: w = sqrt(512 * budget) stays within it
        uint256 words = sqrt(512 * budget);
        assembly {
            return(0, mul(words, 32))
        }
    }

    function sqrt(uint256 x) internal pure returns (uint256 y) {
        if (x == 0) return 0;
        uint256 z = (x + 1) / 2;
        y = x;
        while (z < y) {
            y = z;
            z = (x / z + z) / 2;
        }
    }
}

/// A factory (to be allowlisted) that deploys ReturnBombWallets by CREATE2.
contract ReturnBombFactory {
    function deploy(bytes32 salt) external returns (address) {
        return address(new ReturnBombWallet{salt: salt}());
    }
}

/// Code an EOA can delegate to (EIP-7702) that has no ERC-1271 check at all.
contract PlainDelegate {
    function ping() external pure returns (uint256) {
        return 1;
    }
}

/// Code an EOA can delegate to (EIP-7702) whose ERC-1271 check accepts its own key's ECDSA signature, as
/// smart-EOA implementations do: USDC then takes that EOA's ECDSA signature, by ERC-1271.
contract EcdsaSelfDelegate {
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return bytes4(0xffffffff);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(hash, v, r, s) == address(this) ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

/// A Safe fallback handler (the Safe forwards isValidSignature to it) that accepts any signature only at
/// tx.gasprice 0: a counterfactual Safe set up with it passes any deploy-then-transfer simulation run without
/// fee fields, gets deployed by whoever believes that, and then refuses the real transfer (issue 40, 4).
contract SimulationOnlyFallbackHandler {
    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        return tx.gasprice == 0 ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
