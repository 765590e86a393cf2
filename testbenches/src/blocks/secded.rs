//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim secded`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "secded",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `secded` has no bench yet"),
    }
}
