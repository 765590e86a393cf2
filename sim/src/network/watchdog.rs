//! Deadlock watchdog: when flits sit in the network and none has moved for
//! `watchdog` cycles, list the input VCs holding flits and what each waits for.

use super::stats::BlockedChannel;
use crate::router::Router;
use crate::topology::Topology;

/// Up to `max` non-empty input VCs of `routers`, in node/port/VC order.
pub fn blocked_channels(topo: &Topology, routers: &[Router], max: usize) -> Vec<BlockedChannel> {
    let mut v = Vec::new();
    for (node, r) in routers.iter().enumerate() {
        if !r.has_flits() {
            continue;
        }
        for port in 0..r.num_ports() {
            for vc in 0..crate::router::params::MAX_VCS {
                let n = if vc < r.vcs() {
                    r.buffered(port, vc)
                } else {
                    0
                };
                if n == 0 {
                    continue;
                }
                let wants = r.wants(port, vc).map(|(o, w)| {
                    let (o, w) = (o as usize, w as usize);
                    (topo.port_name(o), w, r.credits(o, w), r.ovc_busy(o, w))
                });
                v.push(BlockedChannel {
                    router: topo.coords(node),
                    input: topo.port_name(port),
                    vc,
                    flits: n,
                    wants,
                });
                if v.len() == max {
                    return v;
                }
            }
        }
    }
    v
}
