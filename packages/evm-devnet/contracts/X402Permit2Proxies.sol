// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

// Test doubles of x402's Permit2 proxies, written from the x402 scheme specifications (`exact` on EVM,
// "Permit2" asset transfer method; `upto` on EVM) and the ABI @x402/evm 2.27 ships, for the devnet to
// place at the proxies' canonical addresses: no bytecode of the deployed proxies is published on npm.
// What a client signs and what the facilitator can make them do is what these enforce: the witness binds
// the recipient (and, for upto, the facilitator), Permit2 checks the signature, the nonce and the deadline.
// Permit2 is at its canonical address on every chain, so it is a constant here (the deployed proxies take
// it in their constructor; a constant keeps the runtime code free of immutables for anvil_setCode). The
// checks run in the deployed proxies' order and revert with their errors, so a test meets what a chain does.

struct TokenPermissions {
    address token;
    uint256 amount;
}

struct PermitTransferFrom {
    TokenPermissions permitted;
    uint256 nonce;
    uint256 deadline;
}

struct SignatureTransferDetails {
    address to;
    uint256 requestedAmount;
}

struct EIP2612Permit {
    uint256 value;
    uint256 deadline;
    bytes32 r;
    bytes32 s;
    uint8 v;
}

interface ISignatureTransfer {
    function permitWitnessTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;
}

abstract contract X402Permit2ProxyBase {
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    event Settled();
    event SettledWithPermit();
    event EIP2612PermitFailedWithReason(address indexed token, address indexed owner, string reason);
    event EIP2612PermitFailedWithPanic(address indexed token, address indexed owner, uint256 errorCode);
    event EIP2612PermitFailedWithData(address indexed token, address indexed owner, bytes data);

    error InvalidOwner();
    error InvalidDestination();
    error InvalidAmount();
    error PaymentTooEarly();
    error Permit2612AmountMismatch();
    error ReentrancyGuardReentrantCall();

    // The deployed proxies are non-reentrant (a status word set to 1 by their constructor, 2 while a call
    // runs); the devnet writes the 1 into slot 0 when it places this code, so each call costs the same gas.
    uint256 private _status;

    modifier nonReentrant() {
        if (_status == 2) revert ReentrancyGuardReentrantCall();
        _status = 2;
        _;
        _status = 1;
    }

    function _checkTransfer(uint256 amount, address owner, address to, uint256 validAfter) internal view {
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (to == address(0)) revert InvalidDestination();
        if (block.timestamp < validAfter) revert PaymentTooEarly();
    }

    /// The payer's EIP-2612 permit for Permit2, for the whole permitted amount. A permit that fails (already
    /// used, or front-run by anyone who saw it) is reported in an event and otherwise ignored: the transfer
    /// then needs the allowance to be there anyway, and fails in Permit2 if it is not.
    function _permitForPermit2(EIP2612Permit calldata permit2612, address token, address owner, uint256 permittedAmount) internal {
        if (permit2612.value != permittedAmount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s) {}
        catch Error(string memory reason) {
            emit EIP2612PermitFailedWithReason(token, owner, reason);
        } catch Panic(uint256 errorCode) {
            emit EIP2612PermitFailedWithPanic(token, owner, errorCode);
        } catch (bytes memory data) {
            emit EIP2612PermitFailedWithData(token, owner, data);
        }
    }
}

/// `exact` through Permit2: always the whole permitted amount, to the witness's recipient.
contract X402ExactPermit2Proxy is X402Permit2ProxyBase {
    string public constant WITNESS_TYPE_STRING = "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    struct Witness {
        address to;
        uint256 validAfter;
    }

    function settle(PermitTransferFrom calldata permit, address owner, Witness calldata witness, bytes calldata signature) external nonReentrant {
        _settle(permit, owner, witness, signature);
        emit Settled();
    }

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _permitForPermit2(permit2612, permit.permitted.token, owner, permit.permitted.amount);
        _settle(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(PermitTransferFrom calldata permit, address owner, Witness calldata witness, bytes calldata signature) private {
        _checkTransfer(permit.permitted.amount, owner, witness.to, witness.validAfter);
        PERMIT2.permitWitnessTransferFrom(
            permit,
            SignatureTransferDetails({to: witness.to, requestedAmount: permit.permitted.amount}),
            owner,
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter)),
            WITNESS_TYPE_STRING,
            signature
        );
    }
}

/// `upto` through Permit2: any amount up to the permitted one, to the witness's recipient, and only when
/// sent by the facilitator the payer named in the witness.
contract X402UptoPermit2Proxy is X402Permit2ProxyBase {
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    error AmountExceedsPermitted();
    error UnauthorizedFacilitator();

    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    function settle(PermitTransferFrom calldata permit, uint256 amount, address owner, Witness calldata witness, bytes calldata signature)
        external
        nonReentrant
    {
        _authorize(permit, amount, witness);
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _authorize(permit, amount, witness);
        _permitForPermit2(permit2612, permit.permitted.token, owner, permit.permitted.amount);
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    /// Before anything else, the permit included: at most the signed maximum, sent by the named facilitator.
    function _authorize(PermitTransferFrom calldata permit, uint256 amount, Witness calldata witness) private view {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
    }

    function _settle(PermitTransferFrom calldata permit, uint256 amount, address owner, Witness calldata witness, bytes calldata signature) private {
        _checkTransfer(amount, owner, witness.to, witness.validAfter);
        PERMIT2.permitWitnessTransferFrom(
            permit,
            SignatureTransferDetails({to: witness.to, requestedAmount: amount}),
            owner,
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter)),
            WITNESS_TYPE_STRING,
            signature
        );
    }
}
