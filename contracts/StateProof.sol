// SPDX-License-Identifier: MIT
// Membership of one state leaf in a Ringbook state root (docs/verifiability.md, "State root"):
// the compact sparse Merkle trie of arity 4 over paths keccak256(kind || key). The only place
// the contract knows the tree's shape: a new tree changes this file and the server's proof
// builder (StateTree.proofOfLeaf, src/da/state_tree.ts), nothing else.
pragma solidity 0.8.30;

library StateProof {
    /// Base-4 digits in a 256-bit path: the deepest a leaf can sit.
    uint256 internal constant DIGITS = 128;

    /// Whether leaf (kind, key, value) is in the trie of `root`. `proof` is
    /// abi.encode(bytes32[] siblings): per level from the leaf's depth up to the root, the hashes
    /// of its three siblings in digit order (its own digit left out). A node is
    /// keccak256(0x00 || child0 || child1 || child2 || child3); leaf preimages start with their
    /// kind (1..255), so a leaf can never pass for a node or the reverse.
    function verify(bytes32 root, uint8 kind, bytes memory key, bytes memory value, bytes calldata proof)
        internal
        pure
        returns (bool)
    {
        bytes32[] memory siblings = abi.decode(proof, (bytes32[]));
        if (siblings.length % 3 != 0 || siblings.length > 3 * DIGITS || kind == 0) return false;
        uint256 depth = siblings.length / 3;
        uint256 path = uint256(keccak256(abi.encodePacked(kind, key)));
        bytes32 node = keccak256(abi.encodePacked(kind, key, value));
        for (uint256 level = 0; level < depth; level++) {
            // Digit d (0 = most significant) of the path; the lowest level is digit depth - 1.
            uint256 d = depth - 1 - level;
            uint256 digit = (path >> (254 - 2 * d)) & 3;
            bytes32[4] memory c;
            uint256 s = 3 * level;
            for (uint256 i = 0; i < 4; i++) c[i] = i == digit ? node : siblings[s++];
            node = keccak256(abi.encodePacked(bytes1(0x00), c[0], c[1], c[2], c[3]));
        }
        return node == root;
    }
}
