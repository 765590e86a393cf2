//! (being written)
use super::BlockInfo;

/// Registry entry for `exanet cosim credit_counter`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "credit_counter",
        about: "(being written)",
        matrix: Vec::new,
        point: |_| anyhow::bail!("block `credit_counter` has no bench yet"),
    }
}
