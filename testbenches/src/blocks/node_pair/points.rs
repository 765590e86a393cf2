//! The `node-pair` bench's parameter points: the registry entry, the
//! default matrix, and `key=value` text to and from [`NodePairParams`].

use super::NodePairBench;
use crate::blocks::{check_keys, kv_u64, parse_kv, BlockInfo};
use crate::cosim::Bench;
use anyhow::{bail, Result};
use exanet_hdl::ni::NiRtlParams;
use exanet_hdl::node_pair::NodePairParams;
use exanet_sim::router::RouterParams;
use exanet_sim::topology::Topology;

const KEYS: &[&str] = &[
    "dims",
    "link_latency",
    "channels",
    "desc_queue_depth",
    "pkt_slots",
    "mailbox_msg_bytes",
    "max_payload_bytes",
    "mailbox_depth",
    "cq_depth",
    "resp_queue_depth",
    "read_queue_depth",
];

/// Registry entry for `exanet cosim node-pair`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "node-pair",
        about: "NIs joined by RTL routers (default 2 nodes): RDMA writes, packetizer, completions, mailbox vs golden NIs",
        matrix,
        point,
    }
}

/// The default matrix.
pub fn matrix_points() -> Vec<&'static str> {
    // Two nodes, the default NI and router; a small mailbox and completion
    // queue so mailbox-full nacks, retries and Busy occur.
    // Four nodes on a 2x2 torus (two-hop paths, several senders per
    // mailbox), longer links, 128-byte packets and small queues (a 1-job
    // read queue: mutual reads are refused READ_BUSY and re-posted).
    vec![
        "dims=2x1x1,link_latency=1,channels=4,desc_queue_depth=8,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,mailbox_depth=4,cq_depth=8,resp_queue_depth=8,read_queue_depth=4",
        "dims=2x2x1,link_latency=4,channels=2,desc_queue_depth=4,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=128,mailbox_depth=2,cq_depth=4,resp_queue_depth=4,read_queue_depth=1",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    matrix_points()
        .into_iter()
        .map(|t| point(t).expect("matrix point is valid"))
        .collect()
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NodePairBench::new(parse_point(text)?)?))
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NodePairParams> {
    let kv = parse_kv(text)?;
    check_keys(&kv, KEYS)?;
    let d = NodePairParams::default();
    let dims = match kv.iter().rev().find(|(k, _)| k == "dims") {
        None => d.router.topology.dims,
        Some((_, v)) => {
            let parts: Vec<&str> = v.split('x').collect();
            let n: Vec<usize> = parts.iter().filter_map(|s| s.parse().ok()).collect();
            if parts.len() != 3 || n.len() != 3 {
                bail!("point key `dims`: `{v}` is not AxBxC");
            }
            [n[0], n[1], n[2]]
        }
    };
    if dims.iter().product::<usize>() < 2 {
        bail!("point key `dims`: {dims:?} has fewer than two nodes");
    }
    let int = |k: &str, def: usize| -> Result<usize> { Ok(kv_u64(&kv, k, def as u64)? as usize) };
    let router = RouterParams {
        topology: Topology::new(dims, dims.map(|k| k > 1), 1)?,
        ..d.router.clone()
    };
    let ni = NiRtlParams {
        ni: exanet_sim::ni::NiParams {
            channels: int("channels", d.ni.ni.channels)?,
            desc_queue_depth: int("desc_queue_depth", d.ni.ni.desc_queue_depth)?,
            pkt_slots: int("pkt_slots", d.ni.ni.pkt_slots)?,
            mailbox_msg_bytes: int("mailbox_msg_bytes", d.ni.ni.mailbox_msg_bytes)?,
            max_payload_bytes: int("max_payload_bytes", d.ni.ni.max_payload_bytes)?,
            mailbox_depth: int("mailbox_depth", d.ni.ni.mailbox_depth)?,
            cq_depth: int("cq_depth", d.ni.ni.cq_depth)?,
            resp_queue_depth: int("resp_queue_depth", d.ni.ni.resp_queue_depth)?,
            read_queue_depth: int("read_queue_depth", d.ni.ni.read_queue_depth)?,
            ..d.ni.ni.clone()
        },
        buffer_flits: router.buffer_flits,
        // Requests on the first VC of class 0, responses on the first of
        // class 1.
        vc: 0,
        resp_vc: router.vcs_per_class,
        vcs_per_class: router.vcs_per_class,
        tx_ahead: d.ni.tx_ahead,
    };
    let p = NodePairParams {
        ni,
        router,
        link_latency: int("link_latency", d.link_latency)?,
    };
    p.validate()?;
    if p.ni.ni.addr_bits < 32 {
        bail!("node-pair: ni.addr_bits must be >= 32 (the bench's regions)");
    }
    Ok(p)
}

/// The point text of `p`.
pub fn point_text(p: &NodePairParams) -> String {
    let d = p.router.topology.dims;
    let n = &p.ni.ni;
    format!(
        "dims={}x{}x{},link_latency={},channels={},desc_queue_depth={},pkt_slots={},mailbox_msg_bytes={},max_payload_bytes={},mailbox_depth={},cq_depth={},resp_queue_depth={},read_queue_depth={}",
        d[0], d[1], d[2], p.link_latency, n.channels, n.desc_queue_depth, n.pkt_slots,
        n.mailbox_msg_bytes, n.max_payload_bytes, n.mailbox_depth, n.cq_depth, n.resp_queue_depth,
        n.read_queue_depth
    )
}
