//! exanet-gen (being written)
