//! [`check_picks`] and [`TxFlits`]: the NI's picks against the golden
//! model's, and every flit out against the oldest packet picked for its VC.

use super::{NiPorts, Report};
use crate::cosim::Mismatch;
use exanet_sim::ni::{Ni, Packet};
use exanet_sim::packet::header::Header;
use std::collections::VecDeque;

/// What the NI picked in a cycle: a response (class 1) and a request
/// (class 0), each the golden model's.
#[derive(Default)]
pub(crate) struct Picks {
    pub response: Option<Packet>,
    pub request: Option<Packet>,
}

/// `rsp_pick` and `tx_pick` against the golden model, in the golden order
/// of a cycle: at `rsp_pick` the golden model must have a response
/// (`emit_response`, state at the start of the cycle); at `tx_pick` (never
/// while the engine is busy) a request (`emit_request`); when the engine
/// is idle and not picking, it must have no request. (The response lane
/// may wait for credits or a packet boundary: a response the golden model
/// holds is not a mismatch until the benches' liveness checks say so.)
pub(crate) fn check_picks(p: &NiPorts, golden: &mut Ni, r: Report) -> Result<Picks, Mismatch> {
    let mut picks = Picks::default();
    if p.rsp_pick.get() == 1 {
        match golden.emit_response() {
            None => return r.bad("rsp_pick", "0 (golden has no response)".into(), "1".into()),
            Some(pk) => picks.response = Some(pk),
        }
    }
    let busy = p.tx_busy.get() == 1;
    if p.tx_pick.get() == 1 {
        if busy {
            return r.bad("tx_pick", "0 (engine busy)".into(), "1".into());
        }
        match golden.emit_request() {
            None => return r.bad("tx_pick", "0 (golden has no request)".into(), "1".into()),
            Some(pk) => picks.request = Some(pk),
        }
    } else if !busy && golden.has_request() {
        return r.bad("tx_pick", "1 (golden has a request)".into(), "0".into());
    }
    Ok(picks)
}

/// One class's packets out: the VC they leave on, the packets picked and
/// not yet sent whole (words, PDID), the next flit of the oldest.
struct Lane {
    vc: u64,
    expect: VecDeque<(Vec<u128>, u16)>,
    flit_idx: usize,
}

/// The packets picked and not yet sent whole, checked flit by flit, per
/// VC: class 0 (requests, data) on `vc`, class 1 (responses) on `resp_vc`.
/// Each VC's flits follow its packets' pick order, each packet whole (its
/// flits not interleaved with another packet's of the same VC); the two
/// VCs may interleave (a response between two flits of a class-0 packet).
pub(crate) struct TxFlits {
    lanes: [Lane; 2],
}

impl TxFlits {
    /// Class-0 packets leave on `vc`, class-1 packets on `resp_vc`.
    pub fn new(vc: u64, resp_vc: u64) -> Self {
        let lane = |vc| Lane {
            vc,
            expect: VecDeque::new(),
            flit_idx: 0,
        };
        TxFlits {
            lanes: [lane(vc), lane(resp_vc)],
        }
    }

    /// Every picked packet sent whole.
    pub fn idle(&self) -> bool {
        self.lanes.iter().all(|l| l.expect.is_empty())
    }

    /// A packet of `class` (0 request, 1 response) picked: its flits
    /// follow in order on the class's VC.
    pub fn picked(&mut self, class: usize, pk: Packet, pdid: u16) {
        self.lanes[class].expect.push_back((pk.words, pdid));
    }

    /// PDID of the class-0 packet picked last: the ARUSER of the memory
    /// reads the engine makes for it.
    pub fn pdid(&self) -> u16 {
        self.lanes[0].expect.back().map_or(0, |e| e.1)
    }

    /// `{out}_valid` is 1: the flit must be on `vc` or `resp_vc` and be the
    /// next word of the oldest packet picked for its VC (data, head, tail). Returns the
    /// packet's words when this flit was its tail.
    pub fn flit(&mut self, p: &NiPorts, r: Report) -> Result<Option<Vec<u128>>, Mismatch> {
        let out = p.out;
        let v = p.out_vc.get();
        let Some(class) = self.lanes.iter().position(|l| l.vc == v) else {
            return r.bad(
                &format!("{out}_vc"),
                format!(
                    "{} (requests) or {} (responses)",
                    self.lanes[0].vc, self.lanes[1].vc
                ),
                format!("{v}"),
            );
        };
        let lane = &mut self.lanes[class];
        let Some((words, _)) = lane.expect.front() else {
            return r.bad(
                &format!("{out}_valid (VC {v})"),
                "0 (no packet picked for this VC)".into(),
                "1".into(),
            );
        };
        let i = lane.flit_idx;
        let n = words.len();
        let data = p.out_data.get_u128();
        if data != words[i] {
            let ptype = Header::from_bits(words[0]).map_or(0, |h| h.ptype() as u8);
            return r.bad(
                &format!("{out}_data (VC {v}, flit {i} of {n}, packet type 0x{ptype:02x})"),
                format!("0x{:032x}", words[i]),
                format!("0x{data:032x}"),
            );
        }
        let (h, t) = (p.out_head.get() == 1, p.out_tail.get() == 1);
        if h != (i == 0) || t != (i + 1 == n) {
            return r.bad(
                &format!("{out}_head/tail (VC {v}, flit {i} of {n})"),
                format!("{}/{}", i == 0, i + 1 == n),
                format!("{h}/{t}"),
            );
        }
        if i + 1 == n {
            lane.flit_idx = 0;
            Ok(lane.expect.pop_front().map(|e| e.0))
        } else {
            lane.flit_idx += 1;
            Ok(None)
        }
    }
}
