//! The `node-pair` bench's parameter points: the registry entry, the
//! default matrix, and `key=value` text ([`NodePairPoint`]) to and from
//! [`NodePairParams`].

use super::NodePairBench;
use crate::blocks::BlockInfo;
use crate::cosim::Bench;
use anyhow::{bail, Result};
use exanet_hdl::ni::NiRtlParams;
use exanet_hdl::node_pair::NodePairParams;
use exanet_sim::ni::NiParams;
use exanet_sim::point;
use exanet_sim::router::RouterParams;
use exanet_sim::topology::{dims_text, Topology};
use serde::{Deserialize, Serialize};

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
    // read queue: mutual reads are refused READ_BUSY and re-posted), NIs
    // with the allreduce engine (communicators of 4, 2, 4 wrapping and 1
    // ranks): the suite's multi-node allreduce sample, on the four-node
    // run's build (the eight-node point of `allreduce_points` is twice
    // its C++: `#[ignore]`d runs).
    vec![
        "dims=2x1x1,link_latency=1,channels=4,desc_queue_depth=8,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,mailbox_depth=4,cq_depth=8,resp_queue_depth=8,read_queue_depth=4,ar_communicators=0",
        "dims=2x2x1,link_latency=4,channels=2,desc_queue_depth=4,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=128,mailbox_depth=2,cq_depth=4,resp_queue_depth=4,read_queue_depth=1,ar_communicators=4",
    ]
}

/// Points whose NIs carry the allreduce engine (`ar_communicators > 0`),
/// outside the default matrix (eight Verilated nodes are slow): eight
/// nodes on a 2x2x2 torus (communicators of 8, 4, 2 and 1 ranks), and six
/// on a 3x2x1 torus (6, 3, 4 and 1 ranks: non-powers of two, boxes
/// wrapping round the torus). Run one with `exanet cosim node-pair
/// --point '...'`.
pub fn allreduce_points() -> Vec<&'static str> {
    vec![
        "dims=2x2x2,link_latency=1,channels=2,desc_queue_depth=4,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=128,mailbox_depth=4,cq_depth=8,resp_queue_depth=4,read_queue_depth=2,ar_communicators=4",
        "dims=3x2x1,link_latency=2,channels=2,desc_queue_depth=4,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=128,mailbox_depth=4,cq_depth=8,resp_queue_depth=4,read_queue_depth=2,ar_communicators=4",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    crate::blocks::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NodePairBench::new(parse_point(text)?)?))
}

/// The keys a node-pair point sets; the rest of [`NodePairParams`]
/// follows from them (mesh or torus from the sizes, the NI's credits and
/// VCs from the router) or keeps its default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NodePairPoint {
    /// Routers per dimension, `AxBxC` (a dimension of size > 1 is a torus).
    #[serde(with = "dims_text")]
    pub dims: [usize; 3],
    /// Register stages per link direction.
    pub link_latency: usize,
    /// The NI's [`NiParams`] of the same names.
    pub channels: usize,
    pub desc_queue_depth: usize,
    pub pkt_slots: usize,
    pub mailbox_msg_bytes: usize,
    pub max_payload_bytes: usize,
    pub mailbox_depth: usize,
    pub cq_depth: usize,
    pub resp_queue_depth: usize,
    pub read_queue_depth: usize,
    /// The NI's allreduce communicator slots (0: no engine); with the
    /// engine, the NI's torus is the network's.
    pub ar_communicators: usize,
}

impl From<&NodePairParams> for NodePairPoint {
    fn from(p: &NodePairParams) -> Self {
        let n = &p.ni.ni;
        NodePairPoint {
            dims: p.router.topology.dims,
            link_latency: p.link_latency,
            channels: n.channels,
            desc_queue_depth: n.desc_queue_depth,
            pkt_slots: n.pkt_slots,
            mailbox_msg_bytes: n.mailbox_msg_bytes,
            max_payload_bytes: n.max_payload_bytes,
            mailbox_depth: n.mailbox_depth,
            cq_depth: n.cq_depth,
            resp_queue_depth: n.resp_queue_depth,
            read_queue_depth: n.read_queue_depth,
            ar_communicators: n.ar_communicators,
        }
    }
}

impl Default for NodePairPoint {
    fn default() -> Self {
        (&NodePairParams::default()).into()
    }
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NodePairParams> {
    let q: NodePairPoint = point::parse(text)?;
    let dims = q.dims;
    if dims.iter().product::<usize>() < 2 {
        bail!("point key `dims`: {dims:?} has fewer than two nodes");
    }
    let d = NodePairParams::default();
    let router = RouterParams {
        topology: Topology::new(dims, dims.map(|k| k > 1), 1)?,
        ..d.router.clone()
    };
    let ni = NiRtlParams {
        ni: NiParams {
            channels: q.channels,
            desc_queue_depth: q.desc_queue_depth,
            pkt_slots: q.pkt_slots,
            mailbox_msg_bytes: q.mailbox_msg_bytes,
            max_payload_bytes: q.max_payload_bytes,
            mailbox_depth: q.mailbox_depth,
            cq_depth: q.cq_depth,
            resp_queue_depth: q.resp_queue_depth,
            read_queue_depth: q.read_queue_depth,
            ar_communicators: q.ar_communicators,
            torus_dims: if q.ar_communicators > 0 {
                dims
            } else {
                d.ni.ni.torus_dims
            },
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
        link_latency: q.link_latency,
    };
    p.validate()?;
    if p.ni.ni.addr_bits < 32 {
        bail!("node-pair: ni.addr_bits must be >= 32 (the bench's regions)");
    }
    Ok(p)
}

/// The point text of `p`.
pub fn point_text(p: &NodePairParams) -> String {
    point::to_text(&NodePairPoint::from(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_and_name_bad_keys_and_values() {
        for t in matrix_points().into_iter().chain(allreduce_points()) {
            let p = parse_point(t).unwrap();
            assert_eq!(point_text(&p), t);
        }
        let d = parse_point("").unwrap();
        assert_eq!(point_text(&d), point_text(&NodePairParams::default()));
        let e = parse_point("dims=2x1").unwrap_err().to_string();
        assert!(e.contains("`dims`") && e.contains("2x1"), "{e}");
        let e = parse_point("dims=1x1x1").unwrap_err().to_string();
        assert!(e.contains("fewer than two"), "{e}");
        let e = parse_point("vc=1").unwrap_err().to_string();
        assert!(e.contains("`vc`") && e.contains("link_latency"), "{e}");
    }
}
