// SPDX-License-Identifier: MIT
// Ringbook's settlement contract (docs/settlement.md): it holds the users' funds, takes deposits
// the engine credits, pays withdrawals the operator signed, records the operator's batch roots,
// queues forced inclusions with a 24-hour deadline, and, once a missed deadline froze it, pays
// every user the balance the last posted state root proves, once.
pragma solidity 0.8.30;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {StateProof} from "./StateProof.sol";

contract Settlement {
    using SafeERC20 for IERC20;

    /// A forced inclusion must be in a posted batch this long after it was queued (DECISIONS).
    uint256 public constant FORCE_INCLUSION_DEADLINE = 24 hours;
    /// Largest forced payload, bytes: the server's FORCED_PAYLOAD_BYTES_MAX (src/auth/messages.ts),
    /// so every queued payload is one the engine's inbox can take.
    uint256 public constant FORCED_PAYLOAD_MAX = 4096;
    /// Engine amounts are safe JS integers (DECISIONS, "Numbers").
    uint256 public constant MAX_UNITS = 2 ** 53 - 1;
    /// State leaf kinds (docs/verifiability.md): balance, account, pending withdrawal.
    uint8 internal constant LEAF_BALANCE = 0x01;
    uint8 internal constant LEAF_ACCOUNT = 0x03;
    uint8 internal constant LEAF_WITHDRAWAL = 0x08;

    address public immutable operator;

    /// The engine's assets in config order: index = the engine's asset index.
    address[] public assetAddress;
    /// On-chain base units per engine unit (10^(decimals - 6); ETH: 10^12 wei).
    uint256[] public unitScale;
    /// Token address => asset index + 1 (0: not listed).
    mapping(address => uint256) internal assetSlot;

    /// Deposits are numbered from 1 in chain order; the engine credits each id once.
    uint64 public depositCount;

    /// Posted roots by batch id; batches are posted contiguously from 1.
    mapping(uint64 => bytes32) public stateRoots;
    mapping(uint64 => bytes32) public fillsRoots;
    uint64 public lastBatchId;

    struct Forced {
        address user;
        uint64 queuedAt;
        bytes32 payloadHash;
    }
    Forced[] internal forcedQueue;
    /// Queue entries [0, forcedProcessed) are in posted batches (the operator's claim with its roots).
    uint64 public forcedProcessed;

    bool public frozen;
    /// The root escapes prove against: the last posted state root when the contract froze.
    bytes32 public escapeRoot;

    /// (user, nonce) => paid, for signed withdrawals and escaped pending withdrawals alike.
    mapping(address => mapping(uint256 => bool)) public withdrawn;
    /// (user, asset index) => balance escaped.
    mapping(address => mapping(uint256 => bool)) public escaped;

    event Deposit(uint64 indexed depositId, address indexed user, uint16 asset, uint256 amount, uint64 units);
    event Withdrawal(address indexed user, address indexed asset, uint256 amount, uint256 nonce);
    event RootsPosted(uint64 firstBatchId, uint64 lastBatchId, uint64 forcedProcessed);
    event ForcedQueued(uint64 indexed forcedId, address indexed user, uint64 nonce, bytes payload, bytes signature);
    event Frozen(uint64 forcedId, uint64 lastBatchId, bytes32 escapeRoot);
    event Escaped(address indexed user, uint16 asset, uint256 amount);

    error NotOperator();
    error IsFrozen();
    error NotFrozen();
    error AssetNotListed();
    error BadAmount();
    error AlreadyWithdrawn();
    error BadSignature();
    error BadBatchRange();
    error BadForcedCount();
    error NotOverdue();
    error BadProof();
    error AlreadyEscaped();
    error Insolvent();
    error PayloadTooLarge();

    constructor(address operator_, address[] memory assets, uint8[] memory decimals) {
        require(assets.length == decimals.length && assets.length > 0 && assets.length < 65536, "assets");
        operator = operator_;
        for (uint256 i = 0; i < assets.length; i++) {
            require(decimals[i] >= 6 && decimals[i] <= 36 && assetSlot[assets[i]] == 0, "asset");
            assetAddress.push(assets[i]);
            unitScale.push(10 ** (decimals[i] - 6));
            assetSlot[assets[i]] = i + 1;
        }
    }

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator();
        _;
    }

    modifier notFrozen() {
        if (frozen) revert IsFrozen();
        _;
    }

    function assetCount() external view returns (uint256) {
        return assetAddress.length;
    }

    // ------------------------------------------------------------------ deposits

    function depositEth() external payable notFrozen {
        _deposit(address(0), msg.value);
    }

    function depositToken(address token, uint256 amount) external notFrozen {
        if (token == address(0)) revert AssetNotListed();
        _deposit(token, amount);
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
    }

    /// Only amounts the engine can hold exactly: whole engine units, a safe integer of them.
    function _deposit(address asset, uint256 amount) internal {
        uint256 slot = assetSlot[asset];
        if (slot == 0) revert AssetNotListed();
        uint256 scale = unitScale[slot - 1];
        if (amount == 0 || amount % scale != 0 || amount / scale > MAX_UNITS) revert BadAmount();
        uint64 id = ++depositCount;
        emit Deposit(id, msg.sender, uint16(slot - 1), amount, uint64(amount / scale));
    }

    // ------------------------------------------------------------------ withdrawals

    /// The digest the operator signs (DECISIONS, "Accounts and money").
    function withdrawalDigest(address user, address asset, uint256 amount, uint256 nonce) public view returns (bytes32) {
        return keccak256(abi.encode(address(this), block.chainid, user, asset, amount, nonce));
    }

    /// Pays `amount` of `asset` to `user` once per (user, nonce), with the operator's EIP-191
    /// signature over withdrawalDigest. Anyone may submit it; the money goes to `user`.
    function withdraw(address user, address asset, uint256 amount, uint256 nonce, bytes calldata signature)
        external
        notFrozen
    {
        if (withdrawn[user][nonce]) revert AlreadyWithdrawn();
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(withdrawalDigest(user, asset, amount, nonce));
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
        if (err != ECDSA.RecoverError.NoError || signer != operator) revert BadSignature();
        if (assetSlot[asset] == 0) revert AssetNotListed();
        withdrawn[user][nonce] = true;
        emit Withdrawal(user, asset, amount, nonce);
        _pay(user, asset, amount);
    }

    function _pay(address to, address asset, uint256 amount) internal {
        if (asset == address(0)) {
            if (amount > address(this).balance) revert Insolvent();
            (bool ok,) = to.call{value: amount}("");
            require(ok, "eth transfer");
        } else {
            if (amount > IERC20(asset).balanceOf(address(this))) revert Insolvent();
            IERC20(asset).safeTransfer(to, amount);
        }
    }

    // ------------------------------------------------------------------ roots

    /// Posts the roots of batches firstBatchId .. firstBatchId + n - 1 (contiguous with the last
    /// posted batch) and how many queued forced inclusions those batches took in.
    function postRoots(uint64 firstBatchId, bytes32[] calldata states, bytes32[] calldata fills, uint64 forcedCount)
        external
        onlyOperator
        notFrozen
    {
        uint256 n = states.length;
        if (n == 0 || fills.length != n || firstBatchId != lastBatchId + 1) revert BadBatchRange();
        if (forcedCount < forcedProcessed || forcedCount > forcedQueue.length) revert BadForcedCount();
        for (uint256 i = 0; i < n; i++) {
            uint64 id = firstBatchId + uint64(i);
            stateRoots[id] = states[i];
            fillsRoots[id] = fills[i];
        }
        lastBatchId = firstBatchId + uint64(n) - 1;
        forcedProcessed = forcedCount;
        emit RootsPosted(firstBatchId, lastBatchId, forcedCount);
    }

    /// Whether a fill (its abi.encode'd leaf, docs/verifiability.md) is in batch `batchId`'s
    /// posted fills root: OpenZeppelin's standard tree (sorted pairs, double-hashed leaves).
    function verifyFill(uint64 batchId, bytes calldata fillLeaf, bytes32[] calldata proof) external view returns (bool) {
        bytes32 root = fillsRoots[batchId];
        if (root == bytes32(0) || fillLeaf.length < 32) return false;
        // The leaf's first member is its batch id: a fill proves only in its own batch.
        if (uint256(bytes32(fillLeaf[0:32])) != batchId) return false;
        bytes32 leaf = keccak256(bytes.concat(keccak256(fillLeaf)));
        return MerkleProof.verify(proof, root, leaf);
    }

    // ------------------------------------------------------------------ forced inclusion

    function forcedCount() external view returns (uint256) {
        return forcedQueue.length;
    }

    function forced(uint64 id) external view returns (address user, uint64 queuedAt, bytes32 payloadHash) {
        Forced storage f = forcedQueue[id];
        return (f.user, f.queuedAt, f.payloadHash);
    }

    /// Queues a signed request body for the engine's inbox. The envelope is the one POST
    /// /force-include takes, signed by the sender: ringbook:force-include:{user}:{keccak256(payload)}:{nonce}.
    function forceInclude(bytes calldata payload, uint64 nonce, bytes calldata signature) external notFrozen {
        if (payload.length == 0 || payload.length > FORCED_PAYLOAD_MAX) revert PayloadTooLarge();
        bytes32 payloadHash = keccak256(payload);
        string memory message = string.concat(
            "ringbook:force-include:",
            Strings.toHexString(msg.sender),
            ":",
            Strings.toHexString(uint256(payloadHash), 32),
            ":",
            Strings.toString(nonce)
        );
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(bytes(message));
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature);
        if (err != ECDSA.RecoverError.NoError || signer != msg.sender) revert BadSignature();
        uint64 id = uint64(forcedQueue.length);
        forcedQueue.push(Forced({user: msg.sender, queuedAt: uint64(block.timestamp), payloadHash: payloadHash}));
        emit ForcedQueued(id, msg.sender, nonce, payload, signature);
    }

    /// Freezes the contract when queue entry `id` waited past the deadline without being taken
    /// into a posted batch. Anyone may call it.
    function challenge(uint64 id) external notFrozen {
        if (id >= forcedQueue.length || id < forcedProcessed) revert NotOverdue();
        if (block.timestamp < forcedQueue[id].queuedAt + FORCE_INCLUSION_DEADLINE) revert NotOverdue();
        frozen = true;
        escapeRoot = stateRoots[lastBatchId];
        emit Frozen(id, lastBatchId, escapeRoot);
    }

    // ------------------------------------------------------------------ escape hatch

    /// Once frozen: pays the sender its balance (available + locked) of engine asset `asset`, as
    /// the escape root proves it, once. `account` is the sender's engine account id, proven by
    /// the account leaf (account id -> address).
    function escape(
        uint32 account,
        uint16 asset,
        uint64 available,
        uint64 locked,
        bytes calldata accountProof,
        bytes calldata balanceProof
    ) external {
        if (escaped[msg.sender][asset]) revert AlreadyEscaped();
        _proveClaim(account, asset, accountProof, LEAF_BALANCE, abi.encodePacked(account, asset), abi.encodePacked(available, locked), balanceProof);
        escaped[msg.sender][asset] = true;
        uint256 amount = (uint256(available) + uint256(locked)) * unitScale[asset];
        emit Escaped(msg.sender, asset, amount);
        _pay(msg.sender, assetAddress[asset], amount);
    }

    /// Once frozen: pays a withdrawal that is pending in the escape root (debited from the
    /// balance, not yet paid on chain), once per (user, nonce) like withdraw.
    function escapeWithdrawal(
        uint32 account,
        uint64 nonce,
        uint16 asset,
        uint64 amount,
        bytes calldata accountProof,
        bytes calldata withdrawalProof
    ) external {
        if (withdrawn[msg.sender][nonce]) revert AlreadyWithdrawn();
        _proveClaim(account, asset, accountProof, LEAF_WITHDRAWAL, abi.encodePacked(account, nonce), abi.encodePacked(asset, amount), withdrawalProof);
        withdrawn[msg.sender][nonce] = true;
        uint256 paid = uint256(amount) * unitScale[asset];
        emit Withdrawal(msg.sender, assetAddress[asset], paid, nonce);
        _pay(msg.sender, assetAddress[asset], paid);
    }

    /// An escape claim's checks: frozen, a listed asset, `account` is the sender's engine account
    /// in the escape root (its account leaf), and the claimed leaf is in the escape root.
    function _proveClaim(
        uint32 account,
        uint16 asset,
        bytes calldata accountProof,
        uint8 kind,
        bytes memory key,
        bytes memory value,
        bytes calldata proof
    ) internal view {
        if (!frozen) revert NotFrozen();
        if (asset >= assetAddress.length) revert AssetNotListed();
        if (!StateProof.verify(escapeRoot, LEAF_ACCOUNT, abi.encodePacked(account), abi.encodePacked(msg.sender), accountProof)) {
            revert BadProof();
        }
        if (!StateProof.verify(escapeRoot, kind, key, value, proof)) revert BadProof();
    }
}
