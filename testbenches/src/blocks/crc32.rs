//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim crc32`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "crc32",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `crc32` has no bench yet"),
    }
}
