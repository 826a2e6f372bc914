// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// The slice of Circle's FiatTokenV2_2 (USDC) the executor calls.
interface IFiatToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external;
}

/// @notice The code the facilitator's treasury EOA delegates to (EIP-7702), so that one transaction sent by a
/// relayer collects the merchant's fee (spending the merchant's allowance to the treasury) and executes the
/// payer's EIP-3009 authorization to that merchant.
/// @dev Deliberately small. It holds no storage and has no owner: token, treasury, fee and the relayers are
/// immutables of the deployed code, so the only way to change what it does is a new deployment and a new
/// delegation signed by the treasury key. It can move exactly `fee` of `token` from an authorization's
/// recipient to the treasury, and only together with that authorization. Fees are withdrawn by the treasury
/// key itself (an EOA keeps sending its own transactions under a delegation); nothing here can move them.
contract SettlementExecutor {
    /// One payer's signed transferWithAuthorization; its recipient (`to`) is the merchant who pays the fee.
    struct Item {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        bytes signature;
        /// gas given to this item alone, so that one item cannot starve the others of a batch
        uint256 gas;
    }

    /// The fee was collected and the authorization executed, in this order.
    event Settled(address indexed payer, bytes32 indexed nonce);
    /// Nothing of this item happened (both calls undone); `reason` is FeeNotCollected or TransferNotExecuted.
    event NotSettled(address indexed payer, bytes32 indexed nonce, bytes reason);

    error NotTreasury();
    error NotRelayer();
    error NotSelf();
    error TooManyRelayers();
    error PaymentBelowFee();
    error FeeNotCollected(bytes reason);
    error TransferNotExecuted(bytes reason);

    uint256 private constant MAX_RELAYERS = 8;

    IFiatToken public immutable token;
    address public immutable treasury;
    uint256 public immutable fee;
    uint256 public immutable relayerCount;
    // immutables cannot be arrays; unused ones stay zero, and address zero never sends a transaction
    address private immutable relayer0;
    address private immutable relayer1;
    address private immutable relayer2;
    address private immutable relayer3;
    address private immutable relayer4;
    address private immutable relayer5;
    address private immutable relayer6;
    address private immutable relayer7;

    constructor(IFiatToken token_, address treasury_, uint256 fee_, address[] memory relayers_) {
        if (relayers_.length > MAX_RELAYERS) revert TooManyRelayers();
        token = token_;
        treasury = treasury_;
        fee = fee_;
        relayerCount = relayers_.length;
        relayer0 = _at(relayers_, 0);
        relayer1 = _at(relayers_, 1);
        relayer2 = _at(relayers_, 2);
        relayer3 = _at(relayers_, 3);
        relayer4 = _at(relayers_, 4);
        relayer5 = _at(relayers_, 5);
        relayer6 = _at(relayers_, 6);
        relayer7 = _at(relayers_, 7);
    }

    /// @notice Settles each item on its own: fee first, then the transfer; an item that fails is undone
    /// entirely (the merchant is not charged for a transfer that did not happen) and the others go on.
    function settle(Item[] calldata items) external {
        // only as the treasury's delegated code: the deployed contract itself, or anyone else's delegation, does nothing
        if (address(this) != treasury) revert NotTreasury();
        if (!isRelayer(msg.sender)) revert NotRelayer();
        for (uint256 i = 0; i < items.length; ++i) {
            Item calldata item = items[i];
            try this.settleOne{gas: item.gas}(item) {
                emit Settled(item.from, item.nonce);
            } catch (bytes memory reason) {
                emit NotSettled(item.from, item.nonce, reason);
            }
        }
    }

    /// @notice One item; callable only by this account itself (from `settle`), so its revert undoes just this item.
    function settleOne(Item calldata item) external {
        if (msg.sender != address(this)) revert NotSelf();
        // a merchant is never worse off after an item, whoever signed it: even a leaked relayer key cannot
        // charge fees for payments smaller than the fee (the worker settles those sequentially)
        if (item.value < fee) revert PaymentBelowFee();
        (bool ok, bytes memory result) = address(token).call(abi.encodeCall(IFiatToken.transferFrom, (item.to, treasury, fee)));
        if (!ok || (result.length != 0 && !abi.decode(result, (bool)))) revert FeeNotCollected(result);
        (ok, result) = address(token).call(
            abi.encodeCall(
                IFiatToken.transferWithAuthorization,
                (item.from, item.to, item.value, item.validAfter, item.validBefore, item.nonce, item.signature)
            )
        );
        if (!ok) revert TransferNotExecuted(result);
    }

    /// @notice The relayers allowed to call `settle`, besides the treasury itself.
    function relayers() external view returns (address[] memory list) {
        list = new address[](relayerCount);
        for (uint256 i = 0; i < relayerCount; ++i) list[i] = _relayer(i);
    }

    function isRelayer(address account) public view returns (bool) {
        if (account == address(0)) return false;
        if (account == treasury) return true;
        return account == relayer0 || account == relayer1 || account == relayer2 || account == relayer3
            || account == relayer4 || account == relayer5 || account == relayer6 || account == relayer7;
    }

    /// The treasury stays an ordinary account for native currency (gas refills, refunds).
    receive() external payable {}

    function _relayer(uint256 i) private view returns (address) {
        if (i == 0) return relayer0;
        if (i == 1) return relayer1;
        if (i == 2) return relayer2;
        if (i == 3) return relayer3;
        if (i == 4) return relayer4;
        if (i == 5) return relayer5;
        if (i == 6) return relayer6;
        return relayer7;
    }

    function _at(address[] memory list, uint256 i) private pure returns (address) {
        return i < list.length ? list[i] : address(0);
    }
}
