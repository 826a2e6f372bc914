// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @notice Never deployed: its creation code is run by `eth_call` without a `to` (a "deployless" call, which
/// every node answers), to simulate an ERC-6492 payer's wallet deployment and the payment after it in one
/// state, before a relayer pays for the deployment. The constructor deploys the wallet through its factory,
/// checks that the wallet now has code, runs the token call (transferWithAuthorization from the new wallet),
/// and returns the gas each step used; any failure reverts with which step failed and why.
contract WalletDeploymentProbe {
    error DeploymentFailed(bytes reason);
    error WalletNotDeployed();
    error TransferFailed(bytes reason);

    constructor(address factory, bytes memory factoryCalldata, address wallet, address token, bytes memory transferCalldata) {
        uint256 start = gasleft();
        (bool ok, bytes memory result) = factory.call(factoryCalldata);
        if (!ok) revert DeploymentFailed(result);
        if (wallet.code.length == 0) revert WalletNotDeployed();
        uint256 deployed = gasleft();
        (ok, result) = token.call(transferCalldata);
        if (!ok) revert TransferFailed(result);
        uint256 deployGas = start - deployed;
        uint256 transferGas = deployed - gasleft();
        // the creation's "runtime code" is the answer of the eth_call: the two gas figures
        assembly {
            mstore(0, deployGas)
            mstore(32, transferGas)
            return(0, 64)
        }
    }
}
