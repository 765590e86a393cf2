//! The agents and checks shared by the benches that drive network
//! interfaces: the `ni` bench (one NI, ports as the NI names them) and the
//! `node-pair` bench (one NI per node, ports prefixed `n{i}_`, the flits out
//! named `tx_*` instead of `out_*`).
//!
//! - [`NiPorts`]: the NI's AXI4-Lite slave, AXI4 master (read and write),
//!   transmit handshake, receive decision and flits out, bound once.
//! - [`AxilMaster`]: the software, one access at a time with random
//!   valid/ready delays, every response checked against the golden model's.
//! - [`AxiReadSlave`] / [`AxiWriteSlave`]: the memory, with random
//!   backpressure, latency and beat gaps; every AR and AW burst checked for
//!   shape and PDID, every write's strobed bytes against the golden write.
//! - [`check_picks`] and [`TxFlits`]: `rsp_pick` against the golden
//!   model's `emit_response` (class 1, the response lane on `resp_vc`),
//!   `tx_pick` against its `emit_request` (class 0, on `vc`), and every
//!   flit out against the oldest packet picked for its VC.
//!
//! Each bench passes its own time base (`now`: the NI bench counts cycles
//! in a phase, the node-pair bench from power-on) and a [`Report`] naming
//! the cycle and the port prefix of its mismatches. The random draws are
//! made in the order the benches made them before they shared this code.

use crate::cosim::Mismatch;
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_sim::ni::memory::MemWrite;
use exanet_sim::ni::{AxilResp, Ni, Packet, Prot, SparseMemory};
use exanet_sim::packet::header::Header;
use exanet_sim::rng::Rng;
use std::collections::VecDeque;
use std::fmt;

/// Where a check failed: the cycle, and the prefix of the bench's port
/// names (`""` for the `ni` bench, `n{i}_` for a node of the node pair).
#[derive(Clone, Copy)]
pub(crate) struct Report<'a> {
    pub cycle: u64,
    pub prefix: &'a str,
}

impl Report<'_> {
    /// A mismatch on `port` (prefixed).
    pub fn mismatch(&self, port: &str, expected: String, actual: String) -> Mismatch {
        Mismatch {
            cycle: self.cycle,
            port: format!("{}{port}", self.prefix),
            expected,
            actual,
        }
    }

    /// `Err` of [`Report::mismatch`].
    pub fn bad<T>(&self, port: &str, expected: String, actual: String) -> Result<T, Mismatch> {
        Err(self.mismatch(port, expected, actual))
    }

    /// `Err` of a mismatch with the values in hex.
    pub fn hex<T>(&self, port: &str, expected: u64, actual: u64) -> Result<T, Mismatch> {
        Err(Mismatch::hex(
            self.cycle,
            &format!("{}{port}", self.prefix),
            expected,
            actual,
        ))
    }
}

/// The ports of one NI the shared agents drive and check.
#[derive(Clone, Copy)]
pub struct NiPorts {
    pub awvalid: Port,
    pub awready: Port,
    pub awaddr: Port,
    pub awprot: Port,
    pub wvalid: Port,
    pub wready: Port,
    pub wdata: Port,
    pub bvalid: Port,
    pub bready: Port,
    pub bresp: Port,
    pub arvalid: Port,
    pub arready: Port,
    pub araddr: Port,
    pub arprot: Port,
    pub rvalid: Port,
    pub rready: Port,
    pub rdata: Port,
    pub rresp: Port,
    pub m_arvalid: Port,
    pub m_arready: Port,
    pub m_araddr: Port,
    pub m_arlen: Port,
    pub m_arsize: Port,
    pub m_arburst: Port,
    pub m_aruser: Port,
    pub m_rvalid: Port,
    pub m_rready: Port,
    pub m_rdata: Port,
    pub m_awvalid: Port,
    pub m_awready: Port,
    pub m_awaddr: Port,
    pub m_awlen: Port,
    pub m_awsize: Port,
    pub m_awburst: Port,
    pub m_awuser: Port,
    pub m_wvalid: Port,
    pub m_wready: Port,
    pub m_wdata: Port,
    pub m_wstrb: Port,
    pub m_wlast: Port,
    pub m_bvalid: Port,
    pub m_bready: Port,
    pub m_bresp: Port,
    pub tx_pick: Port,
    pub tx_busy: Port,
    /// The response lane takes the response queue's head (golden
    /// `emit_response`).
    pub rsp_pick: Port,
    pub rx_commit: Port,
    pub rx_busy: Port,
    /// Class of the packet decided at `rx_commit` (or found Busy at
    /// `rx_busy`).
    pub rx_class: Port,
    /// Flits out: `{out}_valid`, `_data`, `_head`, `_tail`, `_vc`.
    pub out_valid: Port,
    pub out_data: Port,
    pub out_head: Port,
    pub out_tail: Port,
    pub out_vc: Port,
    /// Name of the flits-out group (`out` or `tx`), for mismatches.
    pub out: &'static str,
}

impl NiPorts {
    /// Bind the ports named `{prefix}{name}`; the flits out are
    /// `{prefix}{out}_valid` and so on. An error names a missing or
    /// mis-sized port.
    pub fn bind(sim: &Sim, prefix: &str, out: &'static str) -> Result<NiPorts> {
        let p = |n: &str, w: u32| sim.port_w(&format!("{prefix}{n}"), w);
        let o = |n: &str, w: u32| sim.port_w(&format!("{prefix}{out}_{n}"), w);
        Ok(NiPorts {
            awvalid: p("s_awvalid", 1)?,
            awready: p("s_awready", 1)?,
            awaddr: p("s_awaddr", 20)?,
            awprot: p("s_awprot", 1)?,
            wvalid: p("s_wvalid", 1)?,
            wready: p("s_wready", 1)?,
            wdata: p("s_wdata", 32)?,
            bvalid: p("s_bvalid", 1)?,
            bready: p("s_bready", 1)?,
            bresp: p("s_bresp", 2)?,
            arvalid: p("s_arvalid", 1)?,
            arready: p("s_arready", 1)?,
            araddr: p("s_araddr", 20)?,
            arprot: p("s_arprot", 1)?,
            rvalid: p("s_rvalid", 1)?,
            rready: p("s_rready", 1)?,
            rdata: p("s_rdata", 32)?,
            rresp: p("s_rresp", 2)?,
            m_arvalid: p("m_arvalid", 1)?,
            m_arready: p("m_arready", 1)?,
            m_araddr: p("m_araddr", 42)?,
            m_arlen: p("m_arlen", 8)?,
            m_arsize: p("m_arsize", 3)?,
            m_arburst: p("m_arburst", 2)?,
            m_aruser: p("m_aruser", 16)?,
            m_rvalid: p("m_rvalid", 1)?,
            m_rready: p("m_rready", 1)?,
            m_rdata: p("m_rdata", 128)?,
            m_awvalid: p("m_awvalid", 1)?,
            m_awready: p("m_awready", 1)?,
            m_awaddr: p("m_awaddr", 42)?,
            m_awlen: p("m_awlen", 8)?,
            m_awsize: p("m_awsize", 3)?,
            m_awburst: p("m_awburst", 2)?,
            m_awuser: p("m_awuser", 16)?,
            m_wvalid: p("m_wvalid", 1)?,
            m_wready: p("m_wready", 1)?,
            m_wdata: p("m_wdata", 128)?,
            m_wstrb: p("m_wstrb", 16)?,
            m_wlast: p("m_wlast", 1)?,
            m_bvalid: p("m_bvalid", 1)?,
            m_bready: p("m_bready", 1)?,
            m_bresp: p("m_bresp", 2)?,
            tx_pick: p("tx_pick", 1)?,
            tx_busy: p("tx_busy", 1)?,
            rsp_pick: p("rsp_pick", 1)?,
            rx_commit: p("rx_commit", 1)?,
            rx_busy: p("rx_busy", 1)?,
            rx_class: p("rx_class", 1)?,
            out_valid: o("valid", 1)?,
            out_data: o("data", 128)?,
            out_head: o("head", 1)?,
            out_tail: o("tail", 1)?,
            out_vc: o("vc", 4)?,
            out,
        })
    }
}

/// One software access; `meta` is what the bench remembers about a write
/// (`()` when nothing).
#[derive(Clone, Debug)]
pub(crate) enum Access<M> {
    Write {
        addr: u32,
        data: u32,
        prot: bool,
        meta: M,
    },
    Read {
        addr: u32,
        prot: bool,
    },
}

/// BRESP / RRESP `actual` of the `kind` (`write`, `read`) access to `addr`
/// against the golden response `resp` (OKAY 0, SLVERR 2).
fn check_resp(
    r: Report,
    port: &str,
    kind: &str,
    addr: u32,
    resp: AxilResp,
    actual: u64,
) -> Result<(), Mismatch> {
    let code = if resp == AxilResp::Okay { 0 } else { 2 };
    if actual != code {
        return r.bad(
            &format!("{port} ({kind} 0x{addr:05x})"),
            format!("{code}"),
            format!("{actual}"),
        );
    }
    Ok(())
}

/// The software: an AXI4-Lite master presenting one access at a time
/// (valid after a random delay), with random BREADY / RREADY. The golden
/// model performs each access when the RTL accepts it; the responses are
/// compared in order.
pub(crate) struct AxilMaster<M> {
    cur: Option<Access<M>>,
    presented: bool,
    pend_b: VecDeque<(u32, AxilResp)>,
    pend_r: VecDeque<(u32, u32, AxilResp)>,
    bready: bool,
    rready: bool,
}

impl<M: fmt::Debug> AxilMaster<M> {
    pub fn new() -> Self {
        AxilMaster {
            cur: None,
            presented: false,
            pend_b: VecDeque::new(),
            pend_r: VecDeque::new(),
            bready: false,
            rready: false,
        }
    }

    /// The access presented or about to be (not yet accepted).
    pub fn current(&self) -> Option<&Access<M>> {
        self.cur.as_ref()
    }

    /// No access presented.
    pub fn free(&self) -> bool {
        self.cur.is_none()
    }

    /// No access presented or awaiting its response.
    pub fn idle(&self) -> bool {
        self.cur.is_none() && self.pend_b.is_empty() && self.pend_r.is_empty()
    }

    /// Present `access` from the next cycle on (after a random delay).
    pub fn start(&mut self, access: Access<M>) {
        self.cur = Some(access);
        self.presented = false;
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        for q in [p.awvalid, p.wvalid, p.arvalid, p.bready, p.rready] {
            q.set(0);
        }
        self.bready = false;
        self.rready = false;
    }

    /// Clock low: present the current access (or not yet), draw the ready
    /// signals.
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng) {
        p.awvalid.set(0);
        p.wvalid.set(0);
        p.arvalid.set(0);
        if let Some(op) = &self.cur {
            if !self.presented && rng.chance(0.7) {
                self.presented = true;
            }
            if self.presented {
                match op {
                    Access::Write {
                        addr, data, prot, ..
                    } => {
                        p.awvalid.set(1);
                        p.wvalid.set(1);
                        p.awaddr.set(*addr as u64);
                        p.wdata.set(*data as u64);
                        p.awprot.set(*prot as u64);
                    }
                    Access::Read { addr, prot } => {
                        p.arvalid.set(1);
                        p.araddr.set(*addr as u64);
                        p.arprot.set(*prot as u64);
                    }
                }
            }
        }
        self.bready = rng.chance(0.7);
        self.rready = rng.chance(0.7);
        p.bready.set(self.bready as u64);
        p.rready.set(self.rready as u64);
    }

    /// Checks of the accept handshakes: AWREADY = WREADY, nothing accepted
    /// unless presented; a read accepted is performed on `golden` now.
    /// Returns whether a write was accepted (the bench then performs it,
    /// in its place in the order of golden calls: [`AxilMaster::take_write`]).
    pub fn accept_read(
        &mut self,
        p: &NiPorts,
        golden: &mut Ni,
        r: Report,
    ) -> Result<bool, Mismatch> {
        let presented = self.cur.is_some() && self.presented;
        let rd_fire = p.arready.get() == 1;
        let wr_fire = p.awready.get() == 1;
        if p.wready.get() != p.awready.get() {
            return r.bad(
                "s_wready",
                format!("{}", p.awready.get()),
                format!("{}", p.wready.get()),
            );
        }
        if (rd_fire || wr_fire) && !presented {
            return r.bad(
                "s_arready/s_awready",
                "0 (nothing presented)".into(),
                "1".into(),
            );
        }
        if rd_fire {
            match self.cur.take() {
                Some(Access::Read { addr, prot }) => {
                    let pr = if prot { Prot::Privileged } else { Prot::User };
                    let (v, resp) = golden.axil_read_prot(addr, pr);
                    self.pend_r.push_back((addr, v, resp));
                }
                other => {
                    return r.bad(
                        "s_arready",
                        "0 (a write is presented)".into(),
                        format!("1 ({other:?})"),
                    )
                }
            }
        }
        Ok(wr_fire)
    }

    /// The write accepted this cycle: address, data, privileged, meta. The
    /// bench performs it on the golden model and calls
    /// [`AxilMaster::wrote`].
    pub fn take_write(&mut self, r: Report) -> Result<(u32, u32, bool, M), Mismatch> {
        match self.cur.take() {
            Some(Access::Write {
                addr,
                data,
                prot,
                meta,
            }) => Ok((addr, data, prot, meta)),
            other => r.bad(
                "s_awready",
                "0 (a read is presented)".into(),
                format!("1 ({other:?})"),
            ),
        }
    }

    /// The golden model answered the accepted write `addr` with `resp`.
    pub fn wrote(&mut self, addr: u32, resp: AxilResp) {
        self.pend_b.push_back((addr, resp));
    }

    /// A write response taken this cycle: checked against the golden
    /// model's; returns the write's address and response.
    pub fn response_b(
        &mut self,
        p: &NiPorts,
        r: Report,
    ) -> Result<Option<(u32, AxilResp)>, Mismatch> {
        if !(p.bvalid.get() == 1 && self.bready) {
            return Ok(None);
        }
        let Some((addr, resp)) = self.pend_b.pop_front() else {
            return r.bad("s_bvalid", "0".into(), "1".into());
        };
        check_resp(r, "s_bresp", "write", addr, resp, p.bresp.get())?;
        Ok(Some((addr, resp)))
    }

    /// A read response taken this cycle: response and data checked against
    /// the golden model's; returns the read's address, value and response.
    pub fn response_r(
        &mut self,
        p: &NiPorts,
        r: Report,
    ) -> Result<Option<(u32, u32, AxilResp)>, Mismatch> {
        if !(p.rvalid.get() == 1 && self.rready) {
            return Ok(None);
        }
        let Some((addr, v, resp)) = self.pend_r.pop_front() else {
            return r.bad("s_rvalid", "0".into(), "1".into());
        };
        check_resp(r, "s_rresp", "read", addr, resp, p.rresp.get())?;
        if p.rdata.get() != v as u64 {
            return r.hex(
                &format!("s_rdata (read 0x{addr:05x})"),
                v as u64,
                p.rdata.get(),
            );
        }
        Ok(Some((addr, v, resp)))
    }
}

/// Memory latency of a burst accepted in `cycle` (0..=23, deterministic).
pub(crate) fn rng_lat(cycle: u64) -> u64 {
    let x = cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 59) % 24
}

/// One AXI4 read burst being served.
struct Burst {
    addr: u64,
    beats: u32,
    done: u32,
    ready_at: u64,
}

/// The memory's AXI4 read slave: random ARREADY, each burst's first beat
/// after a deterministic latency, random gaps between beats.
pub(crate) struct AxiReadSlave {
    arready: bool,
    bursts: VecDeque<Burst>,
    r_presented: bool,
}

impl AxiReadSlave {
    pub fn new() -> Self {
        AxiReadSlave {
            arready: false,
            bursts: VecDeque::new(),
            r_presented: false,
        }
    }

    /// No burst being served.
    pub fn idle(&self) -> bool {
        self.bursts.is_empty()
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        p.m_arready.set(0);
        p.m_rvalid.set(0);
        self.arready = false;
        self.r_presented = false;
    }

    /// Clock low at time `now`: ARREADY, and the next beat from `mem` when
    /// due (random bytes on the data when none is presented).
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng, now: u64, mem: &SparseMemory) {
        self.arready = rng.chance(0.6);
        p.m_arready.set(self.arready as u64);
        if !self.r_presented {
            if let Some(b) = self.bursts.front() {
                if now >= b.ready_at && rng.chance(0.8) {
                    self.r_presented = true;
                }
            }
        }
        if self.r_presented {
            let b = self.bursts.front().expect("presented beat has a burst");
            let mut bytes = [0u8; 16];
            mem.read_into(b.addr + 16 * b.done as u64, &mut bytes);
            p.m_rdata.set_u128(u128::from_le_bytes(bytes));
            p.m_rvalid.set(1);
        } else {
            p.m_rvalid.set(0);
            p.m_rdata.set_u128(rng.next_u128());
        }
    }

    /// An AR accepted: 16-byte aligned, below `lim`, within a 4 KiB page,
    /// size 16, INCR, ARUSER = `pdid`; its first beat is due at
    /// `now + 1 + rng_lat(cycle)`. An R beat taken. Returns, for an AR
    /// accepted, whether it starts a 4 KiB page exactly where the previous
    /// burst ends (a read split at a page boundary).
    pub fn check(
        &mut self,
        p: &NiPorts,
        r: Report,
        now: u64,
        lim: u64,
        pdid: u16,
    ) -> Result<Option<bool>, Mismatch> {
        let mut accepted = None;
        if p.m_arvalid.get() == 1 && self.arready {
            let addr = p.m_araddr.get();
            let beats = p.m_arlen.get() as u32 + 1;
            if !addr.is_multiple_of(16) || addr >= lim || (addr % 4096) + 16 * beats as u64 > 4096 {
                return r.bad(
                    "m_araddr/m_arlen",
                    "16-byte aligned, below 2^addr_bits, within a 4 KiB page".into(),
                    format!("0x{addr:x} len {}", beats - 1),
                );
            }
            if p.m_arsize.get() != 4 || p.m_arburst.get() != 1 {
                return r.bad(
                    "m_arsize/m_arburst",
                    "4/1".into(),
                    format!("{}/{}", p.m_arsize.get(), p.m_arburst.get()),
                );
            }
            if p.m_aruser.get() != pdid as u64 {
                return r.hex("m_aruser", pdid as u64, p.m_aruser.get());
            }
            accepted = Some(self.bursts.back().is_some_and(|b| {
                b.addr + 16 * b.beats as u64 == addr && addr.is_multiple_of(4096)
            }));
            self.bursts.push_back(Burst {
                addr,
                beats,
                done: 0,
                ready_at: now + 1 + rng_lat(r.cycle),
            });
        }
        if self.r_presented && p.m_rready.get() == 1 {
            let b = self.bursts.front_mut().expect("presented beat has a burst");
            b.done += 1;
            if b.done == b.beats {
                self.bursts.pop_front();
            }
            self.r_presented = false;
        }
        Ok(accepted)
    }
}

/// What the memory's write slave saw in a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WriteEvents {
    /// A burst completed (its last W beat): its bytes.
    pub written: Option<usize>,
    /// A B response was taken (`m_bvalid && m_bready`): the oldest
    /// completed burst has landed (the golden model's `write_landed`).
    pub landed: bool,
}

/// The memory's AXI4 write slave: random AWREADY / WREADY, each B after a
/// deterministic latency. Every burst must be the next golden memory write
/// (in order, one burst each) with exactly its bytes strobed.
pub(crate) struct AxiWriteSlave {
    /// Golden memory writes not yet seen on AXI: write, PDID.
    exp: VecDeque<(MemWrite, u16)>,
    /// AW accepted: address, beats.
    aw: VecDeque<(u64, u32)>,
    beats: Vec<(u128, u16)>,
    awready: bool,
    wready: bool,
    /// B responses owed (ready time), and one presented.
    b_owed: VecDeque<u64>,
    b_now: bool,
}

impl AxiWriteSlave {
    pub fn new() -> Self {
        AxiWriteSlave {
            exp: VecDeque::new(),
            aw: VecDeque::new(),
            beats: Vec::new(),
            awready: false,
            wready: false,
            b_owed: VecDeque::new(),
            b_now: false,
        }
    }

    /// Nothing expected, no burst open, no response owed.
    pub fn idle(&self) -> bool {
        self.exp.is_empty() && self.aw.is_empty() && self.b_owed.is_empty()
    }

    /// The golden model wrote `writes` for a packet of PDID `pdid`: they
    /// must appear on AXI4 in this order (AWUSER = `pdid`).
    pub fn expect(&mut self, writes: impl IntoIterator<Item = MemWrite>, pdid: u16) {
        self.exp.extend(writes.into_iter().map(|w| (w, pdid)));
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        for q in [p.m_awready, p.m_wready, p.m_bvalid] {
            q.set(0);
        }
        self.awready = false;
        self.wready = false;
        self.b_now = false;
    }

    /// Clock low at time `now`: AWREADY, WREADY, and the next B when due.
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng, now: u64) {
        self.awready = rng.chance(0.6);
        self.wready = rng.chance(0.7);
        p.m_awready.set(self.awready as u64);
        p.m_wready.set(self.wready as u64);
        if !self.b_now && self.b_owed.front().is_some_and(|&t| now >= t) && rng.chance(0.8) {
            self.b_now = true;
        }
        p.m_bvalid.set(self.b_now as u64);
        p.m_bresp.set(0);
    }

    /// An AW accepted: the next golden write's aligned address and length,
    /// size 16, INCR, no 4 KiB crossing, AWUSER = its PDID. A W beat taken;
    /// at the last (WLAST exactly there) the strobed bytes must be
    /// contiguous and equal the golden write, which is then applied to
    /// `mem` and its B is owed at `now + 1 + rng_lat(cycle) / 2`. A B
    /// taken (BREADY while BVALID; BREADY without a B owed is allowed).
    /// Returns the bytes of a write completed this cycle, and whether a B
    /// was taken.
    pub fn check(
        &mut self,
        p: &NiPorts,
        r: Report,
        now: u64,
        mem: &mut SparseMemory,
    ) -> Result<WriteEvents, Mismatch> {
        let mut written = None;
        let mut landed = false;
        if p.m_awvalid.get() == 1 && self.awready {
            let addr = p.m_awaddr.get();
            let beats = p.m_awlen.get() as u32 + 1;
            let Some((w, pdid)) = self.exp.get(self.aw.len()) else {
                return r.bad(
                    "m_awvalid",
                    "0 (the golden model wrote nothing)".into(),
                    format!("1 (0x{addr:x})"),
                );
            };
            let exp_beats = (w.addr % 16 + w.data.len() as u64).div_ceil(16);
            if addr != w.addr & !15
                || beats as u64 != exp_beats
                || p.m_awsize.get() != 4
                || p.m_awburst.get() != 1
                || (addr % 4096) + 16 * beats as u64 > 4096
            {
                return r.bad(
                    "m_awaddr/len/size/burst",
                    format!("0x{:x}/{}/4/1", w.addr & !15, exp_beats - 1),
                    format!(
                        "0x{addr:x}/{}/{}/{}",
                        beats - 1,
                        p.m_awsize.get(),
                        p.m_awburst.get()
                    ),
                );
            }
            if p.m_awuser.get() != *pdid as u64 {
                return r.hex("m_awuser", *pdid as u64, p.m_awuser.get());
            }
            self.aw.push_back((addr, beats));
        }
        if p.m_wvalid.get() == 1 && self.wready {
            let Some(&(addr, beats)) = self.aw.front() else {
                return r.bad("m_wvalid", "0 (no AW accepted)".into(), "1".into());
            };
            self.beats
                .push((p.m_wdata.get_u128(), p.m_wstrb.get() as u16));
            let k = self.beats.len() as u32;
            if (p.m_wlast.get() == 1) != (k == beats) {
                return r.bad(
                    &format!("m_wlast (beat {} of {beats})", k - 1),
                    format!("{}", k == beats),
                    format!("{}", p.m_wlast.get() == 1),
                );
            }
            if k == beats {
                let (w, _) = self.exp.pop_front().expect("AW matched a write");
                self.aw.pop_front();
                let mut got = Vec::new();
                let mut first = None;
                for (j, (d, st)) in self.beats.drain(..).enumerate() {
                    for (b, byte) in d.to_le_bytes().iter().enumerate() {
                        if st >> b & 1 == 1 {
                            let a = addr + 16 * j as u64 + b as u64;
                            let f0 = *first.get_or_insert(a);
                            if a != f0 + got.len() as u64 {
                                return r.bad(
                                    "m_wstrb",
                                    "contiguous strobes".into(),
                                    format!("a gap before 0x{a:x}"),
                                );
                            }
                            got.push(*byte);
                        }
                    }
                }
                if first != Some(w.addr) || got != w.data {
                    return r.bad(
                        "m_wdata/m_wstrb",
                        format!("{} bytes at 0x{:x}: {:02x?}", w.data.len(), w.addr, w.data),
                        format!(
                            "{} bytes at 0x{:x}: {:02x?}",
                            got.len(),
                            first.unwrap_or(0),
                            got
                        ),
                    );
                }
                mem.write(w.addr, &got);
                written = Some(got.len());
                self.b_owed.push_back(now + 1 + rng_lat(r.cycle) / 2);
            }
        }
        if self.b_now && p.m_bready.get() == 1 {
            self.b_owed.pop_front();
            self.b_now = false;
            landed = true;
        }
        Ok(WriteEvents { written, landed })
    }
}

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
