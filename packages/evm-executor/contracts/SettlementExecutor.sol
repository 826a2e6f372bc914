// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// The slice of Circle's FiatTokenV2_2 (USDC) the executor calls, and the two EIP-3009 entry points an item may run.
interface IFiatToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);

    function balanceOf(address account) external view returns (uint256);
}

/// USDC's transferWithAuthorization that takes any signature (ERC-1271 included).
interface IAuthorizationWithSignature {
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

/// USDC's transferWithAuthorization of an ECDSA signature given as v, r, s.
interface IAuthorizationWithVrs {
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// The types x402's Permit2 proxies take (x402ExactPermit2Proxy, x402UptoPermit2Proxy), for their selectors.
struct TokenPermissions {
    address token;
    uint256 amount;
}

struct PermitTransferFrom {
    TokenPermissions permitted;
    uint256 nonce;
    uint256 deadline;
}

struct EIP2612Permit {
    uint256 value;
    uint256 deadline;
    bytes32 r;
    bytes32 s;
    uint8 v;
}

struct ExactWitness {
    address to;
    uint256 validAfter;
}

struct UptoWitness {
    address to;
    address facilitator;
    uint256 validAfter;
}

interface IExactPermit2Proxy {
    function settle(PermitTransferFrom calldata permit, address owner, ExactWitness calldata witness, bytes calldata signature) external;

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        PermitTransferFrom calldata permit,
        address owner,
        ExactWitness calldata witness,
        bytes calldata signature
    ) external;
}

interface IUptoPermit2Proxy {
    function settle(PermitTransferFrom calldata permit, uint256 amount, address owner, UptoWitness calldata witness, bytes calldata signature) external;

    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        UptoWitness calldata witness,
        bytes calldata signature
    ) external;
}

/// @notice The code the facilitator's treasury EOA delegates to (EIP-7702), so that one transaction sent by a
/// relayer collects the merchant's fee (spending the merchant's allowance to the treasury) and executes the
/// payer's payment to that merchant, whatever mechanism carries it (EIP-3009, or Permit2 through x402's proxies).
/// @dev Deliberately small. It holds no storage and has no owner: token, proxies, treasury, fee and the relayers
/// are immutables of the deployed code, so the only way to change what it does is a new deployment and a new
/// delegation signed by the treasury key. It runs as the treasury, so it never makes an arbitrary call: an
/// item's call goes only to the token (transferWithAuthorization) or to one of the two proxies (settle,
/// settleWithPermit), and counts only when the merchant's token balance rose by the item's amount during it.
/// It can move exactly `fee` of `token` from a merchant to the treasury, and only together with a payment of at
/// least the fee to that merchant. Fees are withdrawn by the treasury key itself (an EOA keeps sending its own
/// transactions under a delegation); nothing here can move them.
contract SettlementExecutor {
    /// One payer's payment to a merchant, who pays the fee.
    struct Item {
        /// who pays; with `nonce`, the key of the item's event
        address payer;
        /// who pays the fee and must receive `amount`
        address merchant;
        /// what the merchant must receive from the call (at least)
        uint256 amount;
        /// the payment's nonce as bytes32 (EIP-3009's, or Permit2's uint256)
        bytes32 nonce;
        /// the token or one of the proxies, with calldata of its one allowed entry point
        address target;
        bytes data;
        /// gas given to this item alone, so that one item cannot starve the others of a batch
        uint256 gas;
    }

    /// The fee was collected and the payment executed, in this order.
    event Settled(address indexed payer, bytes32 indexed nonce);
    /// Nothing of this item happened (both undone); `reason` is PaymentBelowFee, FeeNotCollected,
    /// CallNotAllowed, TransferNotExecuted or MerchantNotPaid.
    event NotSettled(address indexed payer, bytes32 indexed nonce, bytes reason);

    error NotTreasury();
    error NotRelayer();
    error NotSelf();
    error TooManyRelayers();
    error PaymentBelowFee();
    error FeeNotCollected(bytes reason);
    error CallNotAllowed(address target, bytes4 selector);
    error TransferNotExecuted(bytes reason);
    error MerchantNotPaid(uint256 received, uint256 amount);

    uint256 private constant MAX_RELAYERS = 8;

    IFiatToken public immutable token;
    /// x402's exact Permit2 proxy (x402ExactPermit2Proxy)
    address public immutable exactProxy;
    /// x402's upto Permit2 proxy (x402UptoPermit2Proxy); it accepts only its witness's facilitator as caller
    address public immutable uptoProxy;
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

    constructor(IFiatToken token_, address exactProxy_, address uptoProxy_, address treasury_, uint256 fee_, address[] memory relayers_) {
        if (relayers_.length > MAX_RELAYERS) revert TooManyRelayers();
        token = token_;
        exactProxy = exactProxy_;
        uptoProxy = uptoProxy_;
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

    /// @notice Settles each item on its own: fee first, then the payment; an item that fails is undone
    /// entirely (the merchant is not charged for a payment that did not happen) and the others go on.
    function settle(Item[] calldata items) external {
        // only as the treasury's delegated code: the deployed contract itself, or anyone else's delegation, does nothing
        if (address(this) != treasury) revert NotTreasury();
        if (!isRelayer(msg.sender)) revert NotRelayer();
        for (uint256 i = 0; i < items.length; ++i) {
            Item calldata item = items[i];
            try this.settleOne{gas: item.gas}(item) {
                emit Settled(item.payer, item.nonce);
            } catch (bytes memory reason) {
                emit NotSettled(item.payer, item.nonce, reason);
            }
        }
    }

    /// @notice One item; callable only by this account itself (from `settle`), so its revert undoes just this item.
    function settleOne(Item calldata item) external {
        if (msg.sender != address(this)) revert NotSelf();
        // a merchant is never worse off after an item, whoever made it: even a leaked relayer key cannot
        // charge fees for payments smaller than the fee (the worker settles those sequentially), and the
        // amount is what the merchant must be seen to receive below
        if (item.amount < fee) revert PaymentBelowFee();
        bytes4 selector = item.data.length < 4 ? bytes4(0) : bytes4(item.data[:4]);
        if (!isAllowedCall(item.target, selector)) revert CallNotAllowed(item.target, selector);
        (bool ok, bytes memory result) = address(token).call(abi.encodeCall(IFiatToken.transferFrom, (item.merchant, treasury, fee)));
        if (!ok || (result.length != 0 && !abi.decode(result, (bool)))) revert FeeNotCollected(result);
        uint256 before = token.balanceOf(item.merchant);
        (ok, result) = item.target.call(item.data);
        if (!ok) revert TransferNotExecuted(result);
        // whatever the call's arguments say, the payment is what the merchant received
        uint256 afterCall = token.balanceOf(item.merchant);
        uint256 received = afterCall > before ? afterCall - before : 0;
        if (received < item.amount) revert MerchantNotPaid(received, item.amount);
    }

    /// @notice Whether an item may call `target` with this selector: the token's transferWithAuthorization (either
    /// signature form), or a proxy's settle or settleWithPermit; nothing else, ever (the code runs as the treasury).
    function isAllowedCall(address target, bytes4 selector) public view returns (bool) {
        if (target == address(token)) {
            return selector == IAuthorizationWithSignature.transferWithAuthorization.selector
                || selector == IAuthorizationWithVrs.transferWithAuthorization.selector;
        }
        if (target == exactProxy) return selector == IExactPermit2Proxy.settle.selector || selector == IExactPermit2Proxy.settleWithPermit.selector;
        if (target == uptoProxy) return selector == IUptoPermit2Proxy.settle.selector || selector == IUptoPermit2Proxy.settleWithPermit.selector;
        return false;
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
