//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim router`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "router",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `router` has no bench yet"),
    }
}
