//! `link_status`: the per-link status and counters of a router's links,
//! read over AXI4-Lite (issue 14, "Counters"). The register map is defined
//! here once; the RTL (`exanet_hdl::link::link_status`) is generated from it.
//!
//! # Register map
//! Link `l` (0..`links`) has [`REGS_PER_LINK`] 32-bit read-only registers at
//! byte address `(l * REGS_PER_LINK + r) * 4` ([`LINK_STRIDE`] bytes per
//! link), `r` as in [`REGS`]: the link state (0 Down, 1 Training, 2 Up),
//! every counter of the link end's [`LinkCounters`] (the low 32 bits of the
//! sum of its `link_tx` and `link_rx` halves: [`Source::Link`]) and the
//! node's RX clock-crossing overflow counter ([`Source::Crossing`]). Where
//! each value comes from is [`Reg::source`]; the RTL, the register map
//! files and the benches take it from there.
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
pub const REGS_PER_LINK: usize = 16;
/// Bytes of one link's registers.
pub const LINK_STRIDE: usize = REGS_PER_LINK * 4;

// The address splits into link and register; the largest block fits the
// node's 4 KiB status page.
const _: () = assert!(REGS_PER_LINK.is_power_of_two() && MAX_LINKS * LINK_STRIDE <= 4096);
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
    /// Good frames ahead of the expected sequence number.
    SeqErrors,
    /// Good frames already received (replays), dropped.
    Duplicates,
    /// Acks or credit returns for frames / flits never sent (both halves).
    BadAcks,
    /// Words received while training that were not training words.
    TrainingErrors,
    /// Flits that found their buffer full (both halves).
    Overflows,
    /// Words sent by replays.
    WordsReplayed,
    /// Control words sent.
    CtrlSent,
    /// PHY words lost at the node's full RX clock crossing (user clock → PL
    /// clock), read through a Gray-coded synchronizer.
    RxOverflows,
}

/// Where a register's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The link state (`link_rx`'s).
    State,
    /// The [`LinkCounters`] field of the register's name, summed over the
    /// halves (`link_tx`, `link_rx`) that count it.
    Link,
    /// The node's RX crossing overflow counter (not part of the link layer).
    Crossing,
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
    Reg::SeqErrors,
    Reg::Duplicates,
    Reg::BadAcks,
    Reg::TrainingErrors,
    Reg::Overflows,
    Reg::WordsReplayed,
    Reg::CtrlSent,
    Reg::RxOverflows,
];

/// The counter registers (every register but the state), in address order:
/// the order of a link's counter inputs on the RTL.
pub const COUNTER_REGS: [Reg; REGS_PER_LINK - 1] = {
    let mut out = [Reg::State; REGS_PER_LINK - 1];
    let mut i = 0;
    while i < out.len() {
        out[i] = REGS[i + 1];
        i += 1;
    }
    out
};

/// What a link shows the status block in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkSample {
    /// `link_rx`'s state.
    pub state: LinkState,
    /// The link end's counters (its two halves merged).
    pub counters: LinkCounters,
    /// The RX crossing's overflow counter as the PL domain sees it.
    pub rx_overflows: u32,
}

/// AXI response OKAY (the one definition: [`crate::ni::memory::resp`]).
pub const RESP_OKAY: u8 = crate::ni::memory::resp::OKAY;
/// AXI response SLVERR.
pub const RESP_SLVERR: u8 = crate::ni::memory::resp::SLVERR;

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
            Reg::SeqErrors => "seq_errors",
            Reg::Duplicates => "duplicates",
            Reg::BadAcks => "bad_acks",
            Reg::TrainingErrors => "training_errors",
            Reg::Overflows => "overflows",
            Reg::WordsReplayed => "words_replayed",
            Reg::CtrlSent => "ctrl_sent",
            Reg::RxOverflows => "rx_overflows",
        }
    }

    /// Where the register's value comes from.
    pub fn source(self) -> Source {
        match self {
            Reg::State => Source::State,
            Reg::RxOverflows => Source::Crossing,
            _ => Source::Link,
        }
    }

    /// The register's value for a link showing `s`.
    pub fn value(self, s: &LinkSample) -> u32 {
        let c = &s.counters;
        (match self {
            Reg::State => s.state as u64,
            Reg::RxOverflows => s.rx_overflows as u64,
            Reg::FramesSent => c.frames_sent,
            Reg::FramesReceived => c.frames_received,
            Reg::CrcErrors => c.crc_errors,
            Reg::Retransmissions => c.retransmissions,
            Reg::Timeouts => c.timeouts,
            Reg::LinkDowns => c.link_downs,
            Reg::CtrlCrcErrors => c.ctrl_crc_errors,
            Reg::SeqErrors => c.seq_errors,
            Reg::Duplicates => c.duplicates,
            Reg::BadAcks => c.bad_acks,
            Reg::TrainingErrors => c.training_errors,
            Reg::Overflows => c.overflows,
            Reg::WordsReplayed => c.words_replayed,
            Reg::CtrlSent => c.ctrl_sent,
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
    let bytes = links.next_power_of_two() * LINK_STRIDE;
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
    /// What each link shows this cycle.
    pub links: Vec<LinkSample>,
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
                    let s = i.links.get(l).copied().unwrap_or_default();
                    self.rdata = r.value(&s);
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
        assert_eq!(decode(64 + 12, 6), Some((1, Reg::CrcErrors)));
        assert_eq!(decode(5 * 64 + 28, 6), Some((5, Reg::CtrlCrcErrors)));
        assert_eq!(decode(5 * 64 + 60, 6), Some((5, Reg::RxOverflows)));
        assert_eq!(decode(6 * 64, 6), None);
        assert_eq!(decode(2, 6), None);
        assert_eq!(addr_bits(6), 9);
        assert_eq!(addr_bits(1), 6);
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
            araddr: (16 + 4) * 4,
            links: vec![
                LinkSample {
                    state: LinkState::Up,
                    ..Default::default()
                },
                LinkSample {
                    state: LinkState::Training,
                    counters: c,
                    rx_overflows: 9,
                },
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

    /// Every counter of [`LinkCounters`] has a register, each register reads
    /// its own field (distinct values everywhere), and the names are
    /// distinct.
    #[test]
    fn every_counter_has_its_own_register() {
        let c = LinkCounters {
            frames_sent: 1,
            frames_received: 2,
            crc_errors: 3,
            ctrl_crc_errors: 4,
            seq_errors: 5,
            duplicates: 6,
            retransmissions: 7,
            timeouts: 8,
            link_downs: 9,
            bad_acks: 10,
            training_errors: 11,
            overflows: 12,
            words_replayed: 13,
            ctrl_sent: 14,
        };
        let s = LinkSample {
            state: LinkState::Up,
            counters: c,
            rx_overflows: 15,
        };
        let mut seen: Vec<u32> = COUNTER_REGS.iter().map(|r| r.value(&s)).collect();
        seen.sort();
        assert_eq!(seen, (1..=15).collect::<Vec<_>>());
        assert_eq!(Reg::State.value(&s), LinkState::Up as u32);
        let mut names: Vec<_> = REGS.iter().map(|r| r.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGS_PER_LINK);
        assert_eq!(&REGS[1..], &COUNTER_REGS[..]);
    }
}
