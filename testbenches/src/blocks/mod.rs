//! One co-simulation bench per block, and the registry the CLI dispatches on.

use crate::cosim::Bench;
use anyhow::Result;

pub mod arbiter;
pub mod crc32;
pub mod credit_counter;
pub mod fifo;
pub mod network;
pub mod ni;
pub use ni::agents::NiPorts;
pub mod node_pair;
pub mod packet;
pub mod router;
pub mod secded;

/// A block that `exanet cosim BLOCK` can run.
pub struct BlockInfo {
    /// CLI name (`fifo`, `crc32`, …); same as the hdl/sim/tb file names.
    pub name: &'static str,
    /// One line for `--help` and listings.
    pub about: &'static str,
    /// The default parameter matrix: every point is run by `exanet cosim NAME`.
    pub matrix: fn() -> Vec<Box<dyn Bench>>,
    /// One point from `key=value,key=value` text (errors name the key and value).
    pub point: fn(&str) -> Result<Box<dyn Bench>>,
}

/// Every block with a co-simulation bench.
pub fn all() -> Vec<BlockInfo> {
    vec![
        fifo::info(),
        arbiter::info(),
        credit_counter::info(),
        crc32::info(),
        secded::info(),
        packet::info(),
        router::info(),
        ni::info(),
        network::info(),
        node_pair::info(),
    ]
}

/// Find a block by CLI name; the error lists the known names.
pub fn find(name: &str) -> Result<BlockInfo> {
    let blocks = all();
    let names: Vec<&str> = blocks.iter().map(|b| b.name).collect();
    blocks.into_iter().find(|b| b.name == name).ok_or_else(|| {
        anyhow::anyhow!("unknown block `{name}`; known blocks: {}", names.join(", "))
    })
}

/// Parse `key=value,key=value` into pairs, rejecting malformed items.
pub fn parse_kv(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("point item `{item}` is not key=value"))?;
        out.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(out)
}

/// Look up `key` in parsed pairs and parse it as an integer, or use `default`.
/// Unknown keys are rejected by [`check_keys`].
pub fn kv_u64(kv: &[(String, String)], key: &str, default: u64) -> Result<u64> {
    match kv.iter().rev().find(|(k, _)| k == key) {
        None => Ok(default),
        Some((_, v)) => v
            .parse::<u64>()
            .map_err(|_| anyhow::anyhow!("point key `{key}`: `{v}` is not a non-negative integer")),
    }
}

/// Reject any key not in `known`, naming it and the known ones.
pub fn check_keys(kv: &[(String, String)], known: &[&str]) -> Result<()> {
    for (k, v) in kv {
        if !known.contains(&k.as_str()) {
            anyhow::bail!(
                "unknown point key `{k}` (value `{v}`); known keys: {}",
                known.join(", ")
            );
        }
    }
    Ok(())
}
