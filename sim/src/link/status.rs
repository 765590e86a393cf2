//! `link_status`: the per-link status and counters of a router's links,
//! read over AXI4-Lite (issue 14, "Counters"). The register map is defined
//! here once; the RTL (`exanet_hdl::link::link_status`) is generated from it.
//!
//! # Register map
//! Link `l` (0..`links`) has [`REGS_PER_LINK`] 32-bit read-only registers at
//! byte address `(l * REGS_PER_LINK + r) * 4`, `r` as in [`REGS`]: the link
//! state (0 Down, 1 Training, 2 Up) and six counters (the low 32 bits of
//! the link end's [`LinkCounters`], its `link_tx` and `link_rx` halves).
//!
//! # AXI4-Lite
//! One read at a time: `arready` is high while no read response is
//! pending; a read accepted in cycle `t` answers in `t + 1` with the value
//! of the inputs in cycle `t` (`rresp` OKAY), or 0 with SLVERR (2) for an
//! address that is not word-aligned or beyond the last link. Writes are
//! refused: an `aw` and `w` accepted together (both valid, no write
//! response pending) answer SLVERR and change nothing.

use super::{LinkCounters, LinkState};
use anyhow::{bail, Result};

/// Registers per link (a power of two: the address splits into link and register).
pub const REGS_PER_LINK: usize = 8;
/// Most links a status block serves.
pub const MAX_LINKS: usize = 16;

/// One register of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// Link state (0 Down, 1 Training, 2 Up).
    State,
    /// Frames sent for the first time.
    FramesSent,
    /// Frames accepted.
    FramesReceived,
    /// Frames dropped for a bad CRC.
    CrcErrors,
    /// Replays started.
    Retransmissions,
    /// Replays started by the retransmit timeout.
    Timeouts,
    /// Up → down transitions.
    LinkDowns,
    /// Control words with a bad CRC.
    CtrlCrcErrors,
}

/// The registers of a link, in address order.
pub const REGS: [Reg; REGS_PER_LINK] = [
    Reg::State,
    Reg::FramesSent,
    Reg::FramesReceived,
    Reg::CrcErrors,
    Reg::Retransmissions,
    Reg::Timeouts,
    Reg::LinkDowns,
    Reg::CtrlCrcErrors,
];

/// The counter registers (every register but the state), in address order:
/// the order of a link's counter inputs on the RTL.
pub const COUNTER_REGS: [Reg; REGS_PER_LINK - 1] = [
    Reg::FramesSent,
    Reg::FramesReceived,
    Reg::CrcErrors,
    Reg::Retransmissions,
    Reg::Timeouts,
    Reg::LinkDowns,
    Reg::CtrlCrcErrors,
];

/// AXI response OKAY.
pub const RESP_OKAY: u8 = 0;
/// AXI response SLVERR.
pub const RESP_SLVERR: u8 = 2;

impl Reg {
    /// Name, as in the docs and the RTL's comments.
    pub fn name(self) -> &'static str {
        match self {
            Reg::State => "state",
            Reg::FramesSent => "frames_sent",
            Reg::FramesReceived => "frames_received",
            Reg::CrcErrors => "crc_errors",
            Reg::Retransmissions => "retransmissions",
            Reg::Timeouts => "timeouts",
            Reg::LinkDowns => "link_downs",
            Reg::CtrlCrcErrors => "ctrl_crc_errors",
        }
    }

    /// The register's value for a link in `state` with counters `c`.
    pub fn value(self, state: LinkState, c: &LinkCounters) -> u32 {
        (match self {
            Reg::State => state as u64,
            Reg::FramesSent => c.frames_sent,
            Reg::FramesReceived => c.frames_received,
            Reg::CrcErrors => c.crc_errors,
            Reg::Retransmissions => c.retransmissions,
            Reg::Timeouts => c.timeouts,
            Reg::LinkDowns => c.link_downs,
            Reg::CtrlCrcErrors => c.ctrl_crc_errors,
        }) as u32
    }
}

/// `(link, register)` of byte address `addr`, or `None` (SLVERR).
pub fn decode(addr: u32, links: usize) -> Option<(usize, Reg)> {
    if !addr.is_multiple_of(4) {
        return None;
    }
    let w = (addr / 4) as usize;
    let (l, r) = (w / REGS_PER_LINK, w % REGS_PER_LINK);
    (l < links).then_some((l, REGS[r]))
}

/// Address bits a block of `links` links decodes (bytes).
pub fn addr_bits(links: usize) -> usize {
    let bytes = links.next_power_of_two() * REGS_PER_LINK * 4;
    bytes.trailing_zeros() as usize
}

/// Inputs of one cycle.
#[derive(Clone, Debug, Default)]
pub struct StatusInputs {
    /// Read address valid.
    pub arvalid: bool,
    /// Read address (bytes; bits above `addr_bits` are ignored by neither
    /// side: an address beyond the last link is SLVERR).
    pub araddr: u32,
    /// The master takes the read response.
    pub rready: bool,
    /// Write address valid.
    pub awvalid: bool,
    /// Write data valid.
    pub wvalid: bool,
    /// The master takes the write response.
    pub bready: bool,
    /// Each link's state and counters this cycle.
    pub links: Vec<(LinkState, LinkCounters)>,
}

/// Outputs of one cycle (registered, except `arready`/`awready`/`wready`,
/// which are functions of the registered state and this cycle's valids).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusOutputs {
    /// Read address taken.
    pub arready: bool,
    /// Read response valid.
    pub rvalid: bool,
    /// Read data.
    pub rdata: u32,
    /// Read response.
    pub rresp: u8,
    /// Write address taken (with the data).
    pub awready: bool,
    /// Write data taken (with the address).
    pub wready: bool,
    /// Write response valid.
    pub bvalid: bool,
    /// Write response (always SLVERR).
    pub bresp: u8,
}

/// Cycle model of the status block.
#[derive(Clone, Debug)]
pub struct LinkStatus {
    links: usize,
    rvalid: bool,
    rdata: u32,
    rresp: u8,
    bvalid: bool,
}

impl LinkStatus {
    /// A block serving `links` links.
    pub fn new(links: usize) -> Result<Self> {
        if !(1..=MAX_LINKS).contains(&links) {
            bail!("link_status.links = {links}: must be 1..={MAX_LINKS}");
        }
        Ok(LinkStatus {
            links,
            rvalid: false,
            rdata: 0,
            rresp: 0,
            bvalid: false,
        })
    }

    /// Links served.
    pub fn links(&self) -> usize {
        self.links
    }

    /// Outputs in a cycle with inputs `i` (before its clock edge).
    pub fn outputs(&self, i: &StatusInputs) -> StatusOutputs {
        let w = !self.bvalid && i.awvalid && i.wvalid;
        StatusOutputs {
            arready: !self.rvalid,
            rvalid: self.rvalid,
            rdata: self.rdata,
            rresp: self.rresp,
            awready: w,
            wready: w,
            bvalid: self.bvalid,
            bresp: if self.bvalid { RESP_SLVERR } else { RESP_OKAY },
        }
    }

    /// The clock edge ending a cycle with inputs `i`.
    pub fn tick(&mut self, i: &StatusInputs) {
        let o = self.outputs(i);
        if self.rvalid && i.rready {
            self.rvalid = false;
        }
        if o.arready && i.arvalid {
            self.rvalid = true;
            match decode(i.araddr, self.links) {
                Some((l, r)) => {
                    let (s, c) = i.links.get(l).copied().unwrap_or_default();
                    self.rdata = r.value(s, &c);
                    self.rresp = RESP_OKAY;
                }
                None => {
                    self.rdata = 0;
                    self.rresp = RESP_SLVERR;
                }
            }
        }
        if self.bvalid && i.bready {
            self.bvalid = false;
        }
        if o.awready {
            self.bvalid = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_decodes_and_refuses() {
        assert_eq!(decode(0, 6), Some((0, Reg::State)));
        assert_eq!(decode(4 * 8 + 12, 6), Some((1, Reg::CrcErrors)));
        assert_eq!(decode(5 * 32 + 28, 6), Some((5, Reg::CtrlCrcErrors)));
        assert_eq!(decode(6 * 32, 6), None);
        assert_eq!(decode(2, 6), None);
        assert_eq!(addr_bits(6), 8);
        assert_eq!(addr_bits(1), 5);
        assert!(LinkStatus::new(0)
            .unwrap_err()
            .to_string()
            .contains("link_status.links = 0"));
    }

    #[test]
    fn a_read_returns_the_counter_and_a_write_is_refused() {
        let mut s = LinkStatus::new(2).unwrap();
        let c = LinkCounters {
            retransmissions: 7,
            ..Default::default()
        };
        let mut i = StatusInputs {
            arvalid: true,
            araddr: (8 + 4) * 4,
            links: vec![
                (LinkState::Up, LinkCounters::default()),
                (LinkState::Training, c),
            ],
            ..Default::default()
        };
        assert!(s.outputs(&i).arready);
        s.tick(&i);
        i.arvalid = false;
        let o = s.outputs(&i);
        assert_eq!((o.rvalid, o.rdata, o.rresp), (true, 7, RESP_OKAY));
        assert!(!o.arready, "one read at a time");
        i.rready = true;
        i.awvalid = true;
        i.wvalid = true;
        assert!(s.outputs(&i).awready);
        s.tick(&i);
        let o = s.outputs(&i);
        assert!(!o.rvalid);
        assert_eq!((o.bvalid, o.bresp), (true, RESP_SLVERR));
    }
}
