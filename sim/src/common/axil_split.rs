//! Golden model of `axil_split`: one AXI4-Lite slave port to two AXI4-Lite
//! master ports, split by address.
//!
//! Ports (all AXI4-Lite, `A`-bit addresses, 32-bit data): the slave port
//! `s_*` (AW: `awaddr[A]`, `awprot[3]`; W: `wdata[32]`, `wstrb[4]`; B:
//! `bresp[2]`; AR: `araddr[A]`, `arprot[3]`; R: `rdata[32]`, `rresp[2]`;
//! each channel with `valid`/`ready`) and the master ports `m0_*`, `m1_*`
//! with the same channels in the other direction, plus `clock` and a
//! synchronous `reset`.
//!
//! Address map: a request whose address is below `split` goes to `m0`
//! with its address unchanged; one at or above `split` goes to `m1` with
//! its address relative to `split` (`addr - split`). `2^A - split`, the
//! size of `m1`'s window, must be a power of two (at least one word), so
//! the window `[split, 2^A)` is naturally aligned: "at or above `split`"
//! is "the top address bits are all ones" and `addr - split` is
//! `addr & (window - 1)`, with no comparator and no subtractor. The
//! master address ports are `A` bits wide; `m1`'s upper bits are zero.
//!
//! Transactions: one write and one read may be in flight at once (the two
//! directions are independent); each direction is a four-phase sequence:
//! 1. *accept*: `s_awready` and `s_wready` are high until each of AW and W
//!    has had its handshake (in either order, or together); the address,
//!    protection, data and strobes are held;
//! 2. *issue* (from the cycle after the later of the two handshakes): the
//!    chosen side's `awvalid` and `wvalid` are high until each has had its
//!    handshake (independently);
//! 3. *wait* (from the cycle after the later of those): the chosen side's
//!    `bready` is high until its B handshake; `bresp` is held;
//! 4. *respond* (the next cycle): `s_bvalid` is high with the held `bresp`
//!    until `s_bready`; then back to *accept*, the next cycle.
//!
//! Reads are the same with AR for AW+W and R (`rdata`, `rresp`) for B.
//!
//! Latency: every output is a function of registered state only, so there
//! is no combinational path from any input to any output (in particular
//! none from a `valid` to a `ready`). A request reaches the chosen master
//! port one cycle after its (last) slave handshake; a response reaches the
//! slave port one cycle after its master handshake. A read with a
//! responder that answers at once takes 4 cycles from `s_arvalid` to
//! `s_rvalid` (AR handshake, `m*_arvalid`, `m*_rvalid`, `s_rvalid`).
//!
//! Responses: a `ready` toward a master port (`m*_bready`, `m*_rready`) is
//! high only in the *wait* phase and only on the side its request went to,
//! and the *wait* phase ends at that side's first response handshake. So a
//! response is taken from exactly the side that holds the request, exactly
//! once, and reaches the slave exactly once, in request order (one in
//! flight). A response offered by a side with no outstanding request (an
//! AXI violation by that side) cannot be taken: its `ready` is low.
//!
//! Idle outputs: the master ports always show the held request (address,
//! protection, data, strobes; `m1`'s address relative to `split`), and the
//! slave port the held response, so every output is defined every cycle;
//! all held values are 0 at power-on and after `reset`.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Narrowest supported address: one 4 KiB page.
pub const MIN_ADDR_BITS: u32 = 12;
/// Widest supported address.
pub const MAX_ADDR_BITS: u32 = 32;

/// `xresp` OKAY (for the bench's responders; the split passes any code;
/// the codes' one definition: [`crate::ni::memory::resp`]).
pub const RESP_OKAY: u32 = crate::ni::memory::resp::OKAY as u32;
/// `xresp` SLVERR.
pub const RESP_SLVERR: u32 = crate::ni::memory::resp::SLVERR as u32;

/// Parameters of one split.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AxilSplitParams {
    /// Address bits of every port, 12..=32.
    pub addr_bits: u32,
    /// First address of `m1`'s window; `2^addr_bits - split` a power of
    /// two of at least 4 bytes.
    pub split: u64,
}

impl Default for AxilSplitParams {
    /// The node's 64 KiB window with the top 4 KiB page on `m1`.
    fn default() -> Self {
        AxilSplitParams {
            addr_bits: 16,
            split: 0xF000,
        }
    }
}

impl AxilSplitParams {
    /// Check every rule; the error names the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        if !(MIN_ADDR_BITS..=MAX_ADDR_BITS).contains(&self.addr_bits) {
            bail!(
                "axil_split.addr_bits = {}: must be {MIN_ADDR_BITS}..={MAX_ADDR_BITS}",
                self.addr_bits
            );
        }
        let span = 1u64 << self.addr_bits;
        if self.split == 0 || self.split >= span {
            bail!(
                "axil_split.split = {:#x}: must be in 1..{span:#x} (inside the {}-bit address \
                 space, with something on each side)",
                self.split,
                self.addr_bits
            );
        }
        let window = span - self.split;
        if !window.is_power_of_two() || window < 4 {
            bail!(
                "axil_split.split = {:#x}: m1's window {:#x}..{span:#x} is {window:#x} bytes; it \
                 must be a power of two of at least 4 bytes (e.g. split = {:#x})",
                self.split,
                self.split,
                span - (window.next_power_of_two() >> 1).max(4)
            );
        }
        Ok(())
    }

    /// Size in bytes of `m1`'s window.
    pub fn window(&self) -> u64 {
        (1u64 << self.addr_bits) - self.split
    }

    /// Mask of the address bits.
    pub fn addr_mask(&self) -> u64 {
        (1u64 << self.addr_bits) - 1
    }

    /// The side a request at `addr` goes to (false = `m0`, true = `m1`).
    pub fn to_m1(&self, addr: u64) -> bool {
        (addr & self.addr_mask()) >= self.split
    }

    /// The address `m1` sees for `addr`: relative to `split` (the low bits).
    pub fn m1_addr(&self, addr: u64) -> u64 {
        addr & (self.window() - 1)
    }
}

/// Inputs of one cycle (slave port from the manager, master ports from the
/// two responders).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxilSplitInputs {
    /// Synchronous reset.
    pub reset: bool,
    /// Slave AW channel.
    pub s_awaddr: u64,
    /// Slave AW protection.
    pub s_awprot: u32,
    /// Slave AW valid.
    pub s_awvalid: bool,
    /// Slave W data.
    pub s_wdata: u32,
    /// Slave W strobes.
    pub s_wstrb: u32,
    /// Slave W valid.
    pub s_wvalid: bool,
    /// Slave B ready.
    pub s_bready: bool,
    /// Slave AR address.
    pub s_araddr: u64,
    /// Slave AR protection.
    pub s_arprot: u32,
    /// Slave AR valid.
    pub s_arvalid: bool,
    /// Slave R ready.
    pub s_rready: bool,
    /// The two master ports' inputs (`m0`, `m1`).
    pub m: [MasterInputs; 2],
}

/// Inputs of one master port (from its responder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MasterInputs {
    /// AW ready.
    pub awready: bool,
    /// W ready.
    pub wready: bool,
    /// B response.
    pub bresp: u32,
    /// B valid.
    pub bvalid: bool,
    /// AR ready.
    pub arready: bool,
    /// R data.
    pub rdata: u32,
    /// R response.
    pub rresp: u32,
    /// R valid.
    pub rvalid: bool,
}

/// Outputs of one master port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MasterOutputs {
    /// AW address (`m1`: relative to `split`).
    pub awaddr: u64,
    /// AW protection.
    pub awprot: u32,
    /// AW valid.
    pub awvalid: bool,
    /// W data.
    pub wdata: u32,
    /// W strobes.
    pub wstrb: u32,
    /// W valid.
    pub wvalid: bool,
    /// B ready.
    pub bready: bool,
    /// AR address (`m1`: relative to `split`).
    pub araddr: u64,
    /// AR protection.
    pub arprot: u32,
    /// AR valid.
    pub arvalid: bool,
    /// R ready.
    pub rready: bool,
}

/// Outputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxilSplitOutputs {
    /// Slave AW ready.
    pub s_awready: bool,
    /// Slave W ready.
    pub s_wready: bool,
    /// Slave B response.
    pub s_bresp: u32,
    /// Slave B valid.
    pub s_bvalid: bool,
    /// Slave AR ready.
    pub s_arready: bool,
    /// Slave R data.
    pub s_rdata: u32,
    /// Slave R response.
    pub s_rresp: u32,
    /// Slave R valid.
    pub s_rvalid: bool,
    /// `m0` and `m1`.
    pub m: [MasterOutputs; 2],
}

/// Phase of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Taking the request from the slave port.
    #[default]
    Accept,
    /// Offering it to the chosen master port.
    Issue,
    /// Waiting for the chosen side's response.
    Wait,
    /// Offering the response to the slave port.
    Respond,
}

/// State of the write direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Write {
    phase: Phase,
    /// AW handshake done (accept) / AW sent (issue).
    aw_done: bool,
    /// W handshake done (accept) / W sent (issue).
    w_done: bool,
    to_m1: bool,
    addr: u64,
    prot: u32,
    data: u32,
    strb: u32,
    resp: u32,
}

/// State of the read direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Read {
    phase: Phase,
    to_m1: bool,
    addr: u64,
    prot: u32,
    data: u32,
    resp: u32,
}

/// Cycle-level split.
#[derive(Clone, Debug)]
pub struct AxilSplit {
    p: AxilSplitParams,
    wr: Write,
    rd: Read,
}

impl AxilSplit {
    /// A split at power-on. `p` must be valid.
    pub fn new(p: &AxilSplitParams) -> Result<Self> {
        p.validate()?;
        Ok(AxilSplit {
            p: p.clone(),
            wr: Write::default(),
            rd: Read::default(),
        })
    }

    /// Its parameters.
    pub fn params(&self) -> &AxilSplitParams {
        &self.p
    }

    /// Back to power-on.
    pub fn power_on(&mut self) {
        self.wr = Write::default();
        self.rd = Read::default();
    }

    /// Phases of the write and read directions.
    pub fn phases(&self) -> (Phase, Phase) {
        (self.wr.phase, self.rd.phase)
    }

    /// Outputs during the current cycle (state only: no input reaches an
    /// output in the same cycle).
    #[inline]
    pub fn outputs(&self) -> AxilSplitOutputs {
        let (w, r) = (&self.wr, &self.rd);
        let mut o = AxilSplitOutputs {
            s_awready: w.phase == Phase::Accept && !w.aw_done,
            s_wready: w.phase == Phase::Accept && !w.w_done,
            s_bresp: w.resp,
            s_bvalid: w.phase == Phase::Respond,
            s_arready: r.phase == Phase::Accept,
            s_rdata: r.data,
            s_rresp: r.resp,
            s_rvalid: r.phase == Phase::Respond,
            m: [MasterOutputs::default(); 2],
        };
        for (side, m) in o.m.iter_mut().enumerate() {
            let rel = |a: u64| if side == 1 { self.p.m1_addr(a) } else { a };
            let wr_here = w.to_m1 == (side == 1);
            let rd_here = r.to_m1 == (side == 1);
            *m = MasterOutputs {
                awaddr: rel(w.addr),
                awprot: w.prot,
                awvalid: wr_here && w.phase == Phase::Issue && !w.aw_done,
                wdata: w.data,
                wstrb: w.strb,
                wvalid: wr_here && w.phase == Phase::Issue && !w.w_done,
                bready: wr_here && w.phase == Phase::Wait,
                araddr: rel(r.addr),
                arprot: r.prot,
                arvalid: rd_here && r.phase == Phase::Issue,
                rready: rd_here && r.phase == Phase::Wait,
            };
        }
        o
    }

    /// The clock edge.
    #[inline]
    pub fn tick(&mut self, i: &AxilSplitInputs) {
        if i.reset {
            self.power_on();
            return;
        }
        let o = self.outputs();
        let mask = self.p.addr_mask();
        // Write direction.
        let w = &mut self.wr;
        match w.phase {
            Phase::Accept => {
                if o.s_awready && i.s_awvalid {
                    w.aw_done = true;
                    w.addr = i.s_awaddr & mask;
                    w.prot = i.s_awprot & 7;
                    w.to_m1 = self.p.to_m1(i.s_awaddr);
                }
                if o.s_wready && i.s_wvalid {
                    w.w_done = true;
                    w.data = i.s_wdata;
                    w.strb = i.s_wstrb & 0xF;
                }
                if w.aw_done && w.w_done {
                    w.phase = Phase::Issue;
                    w.aw_done = false;
                    w.w_done = false;
                }
            }
            Phase::Issue => {
                let (m, mi) = (&o.m[w.to_m1 as usize], &i.m[w.to_m1 as usize]);
                w.aw_done |= m.awvalid && mi.awready;
                w.w_done |= m.wvalid && mi.wready;
                if w.aw_done && w.w_done {
                    w.phase = Phase::Wait;
                    w.aw_done = false;
                    w.w_done = false;
                }
            }
            Phase::Wait => {
                let mi = &i.m[w.to_m1 as usize];
                if mi.bvalid {
                    w.resp = mi.bresp & 3;
                    w.phase = Phase::Respond;
                }
            }
            Phase::Respond => {
                if i.s_bready {
                    w.phase = Phase::Accept;
                }
            }
        }
        // Read direction.
        let r = &mut self.rd;
        match r.phase {
            Phase::Accept => {
                if i.s_arvalid {
                    r.addr = i.s_araddr & mask;
                    r.prot = i.s_arprot & 7;
                    r.to_m1 = self.p.to_m1(i.s_araddr);
                    r.phase = Phase::Issue;
                }
            }
            Phase::Issue => {
                if i.m[r.to_m1 as usize].arready {
                    r.phase = Phase::Wait;
                }
            }
            Phase::Wait => {
                let mi = &i.m[r.to_m1 as usize];
                if mi.rvalid {
                    r.data = mi.rdata;
                    r.resp = mi.rresp & 3;
                    r.phase = Phase::Respond;
                }
            }
            Phase::Respond => {
                if i.s_rready {
                    r.phase = Phase::Accept;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(addr_bits: u32, split: u64) -> AxilSplitParams {
        AxilSplitParams { addr_bits, split }
    }

    #[test]
    fn parameters_are_checked_with_errors_naming_key_and_value() {
        for ok in [
            p(16, 0xF000),
            p(12, 0x800),
            p(12, 0xFFC),
            p(20, 0x80000),
            p(32, 0xFFFF_F000),
        ] {
            ok.validate().unwrap();
        }
        let e = p(11, 0x400).validate().unwrap_err().to_string();
        assert!(e.contains("axil_split.addr_bits = 11"), "{e}");
        let e = p(33, 0x400).validate().unwrap_err().to_string();
        assert!(e.contains("axil_split.addr_bits = 33"), "{e}");
        let e = p(16, 0).validate().unwrap_err().to_string();
        assert!(e.contains("axil_split.split = 0x0"), "{e}");
        let e = p(16, 0x10000).validate().unwrap_err().to_string();
        assert!(e.contains("axil_split.split = 0x10000"), "{e}");
        let e = p(16, 0xD000).validate().unwrap_err().to_string();
        assert!(
            e.contains("axil_split.split = 0xd000") && e.contains("power of two"),
            "{e}"
        );
        let e = p(16, 0xFFFE).validate().unwrap_err().to_string();
        assert!(e.contains("0xfffe"), "{e}");
    }

    #[test]
    fn routing_and_relative_addresses() {
        let q = p(16, 0xF000);
        assert!(!q.to_m1(0xEFFF) && q.to_m1(0xF000) && q.to_m1(0xFFFF));
        assert_eq!(q.m1_addr(0xF024), 0x24);
        let q = p(12, 0x800);
        assert!(!q.to_m1(0x7FC) && q.to_m1(0x800));
        assert_eq!(q.m1_addr(0xABC), 0x2BC);
    }

    /// A write and a read, each to a different side, with ready responders:
    /// the documented phase timing, the relative address, the response.
    #[test]
    fn a_write_and_a_read_follow_the_documented_latency() {
        let mut s = AxilSplit::new(&p(16, 0xF000)).unwrap();
        let mut i = AxilSplitInputs {
            s_awaddr: 0xF010,
            s_awprot: 2,
            s_awvalid: true,
            s_wdata: 0xDEAD_BEEF,
            s_wstrb: 0xF,
            s_wvalid: true,
            s_araddr: 0x3004,
            s_arvalid: true,
            s_bready: true,
            s_rready: true,
            ..Default::default()
        };
        for m in &mut i.m {
            m.awready = true;
            m.wready = true;
            m.arready = true;
        }
        // Cycle 0: slave handshakes.
        let o = s.outputs();
        assert!(o.s_awready && o.s_wready && o.s_arready);
        s.tick(&i);
        i.s_awvalid = false;
        i.s_wvalid = false;
        i.s_arvalid = false;
        // Cycle 1: issued to m1 (write, relative) and m0 (read).
        let o = s.outputs();
        assert!(o.m[1].awvalid && o.m[1].wvalid && !o.m[0].awvalid);
        assert_eq!(
            (o.m[1].awaddr, o.m[1].awprot, o.m[1].wdata),
            (0x10, 2, 0xDEAD_BEEF)
        );
        assert!(o.m[0].arvalid && !o.m[1].arvalid);
        assert_eq!(o.m[0].araddr, 0x3004);
        assert!(!o.s_awready && !o.s_arready);
        s.tick(&i);
        // Cycle 2: waiting; only the chosen sides are ready; a response
        // offered by the other side is ignored.
        let o = s.outputs();
        assert!(o.m[1].bready && !o.m[0].bready && o.m[0].rready && !o.m[1].rready);
        i.m[1].bvalid = true;
        i.m[1].bresp = RESP_SLVERR;
        i.m[0].rvalid = true;
        i.m[0].rdata = 0x1234;
        i.m[1].rvalid = true;
        i.m[1].rdata = 0x9999;
        s.tick(&i);
        i.m[1].bvalid = false;
        i.m[0].rvalid = false;
        // Cycle 3: responses at the slave port.
        let o = s.outputs();
        assert!(o.s_bvalid && o.s_rvalid);
        assert_eq!(
            (o.s_bresp, o.s_rdata, o.s_rresp),
            (RESP_SLVERR, 0x1234, RESP_OKAY)
        );
        s.tick(&i);
        let o = s.outputs();
        assert!(!o.s_bvalid && !o.s_rvalid && o.s_awready && o.s_arready);
    }

    /// AW before W, W held off: the write waits for both and is issued once.
    #[test]
    fn aw_and_w_in_separate_cycles_make_one_request() {
        let mut s = AxilSplit::new(&p(12, 0x800)).unwrap();
        let mut i = AxilSplitInputs {
            s_awaddr: 0x100,
            s_awvalid: true,
            ..Default::default()
        };
        s.tick(&i);
        let o = s.outputs();
        assert!(!o.s_awready && o.s_wready && !o.m[0].awvalid);
        i.s_awvalid = false;
        i.s_awaddr = 0x900; // ignored: AW already taken
        s.tick(&i);
        i.s_wvalid = true;
        i.s_wdata = 7;
        s.tick(&i);
        i.s_wvalid = false;
        let o = s.outputs();
        assert!(o.m[0].awvalid && o.m[0].wvalid && !o.m[1].awvalid);
        assert_eq!((o.m[0].awaddr, o.m[0].wdata), (0x100, 7));
        // AW taken alone, then W: issue ends after the second.
        i.m[0].awready = true;
        s.tick(&i);
        let o = s.outputs();
        assert!(!o.m[0].awvalid && o.m[0].wvalid && !o.m[0].bready);
        i.m[0].awready = false;
        i.m[0].wready = true;
        s.tick(&i);
        let o = s.outputs();
        assert!(!o.m[0].wvalid && o.m[0].bready);
        i.reset = true;
        s.tick(&i);
        assert_eq!(s.phases(), (Phase::Accept, Phase::Accept));
        assert_eq!(
            s.outputs(),
            AxilSplit::new(&p(12, 0x800)).unwrap().outputs()
        );
    }
}
