//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim arbiter`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "arbiter",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `arbiter` has no bench yet"),
    }
}
