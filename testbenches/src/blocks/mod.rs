//! One co-simulation bench per block, and the registry the CLI dispatches on.

use crate::cosim::Bench;
use anyhow::Result;

pub mod ar_check;
pub mod ar_sched;
pub mod arbiter;
pub mod async_fifo;
pub mod axil_split;
pub mod crc32;
pub mod credit_counter;
pub mod fifo;
pub mod fp_add;
pub mod gth_lane;
pub mod link;
pub mod link_rx;
pub mod link_status;
pub mod link_tx;
pub mod network;
pub mod ni;
pub use ni::agents::NiPorts;
pub mod node;
pub mod node_pair;
pub mod packet;
pub mod pcs66;
pub mod reduce_alu;
pub mod retry_buffer;
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
        async_fifo::info(),
        arbiter::info(),
        credit_counter::info(),
        axil_split::info(),
        crc32::info(),
        secded::info(),
        fp_add::info(),
        reduce_alu::info(),
        ar_sched::info(),
        ar_check::info(),
        retry_buffer::info(),
        link_tx::info(),
        link_rx::info(),
        link::info(),
        link_status::info(),
        pcs66::info(),
        gth_lane::info(),
        packet::info(),
        router::info(),
        ni::info(),
        ni::allreduce_info(),
        network::info(),
        node_pair::info(),
        node::info(),
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

/// A bench's matrix: each point text through the bench's `point` parser
/// (the texts are the bench's own, so a parse failure is a bench bug).
pub(crate) fn benches_of(
    points: Vec<&'static str>,
    point: fn(&str) -> anyhow::Result<Box<dyn crate::cosim::Bench>>,
) -> Vec<Box<dyn crate::cosim::Bench>> {
    points
        .into_iter()
        .map(|t| point(t).unwrap_or_else(|e| panic!("matrix point {t}: {e:#}")))
        .collect()
}
