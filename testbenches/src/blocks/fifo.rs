//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim fifo`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "fifo",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `fifo` has no bench yet"),
    }
}
